"""`--format prometheus`: the text exposition format, for node_exporter's textfile collector.

Metric names and labels are documented in docs/lag.md. Unknown values are left out rather than
exported as NaN, so alerts on `absent()` and on the value stay distinct.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, TextIO

from kafkadiag.lag.burrow import GROUP_STATUS_VALUES, PARTITION_STATUSES
from kafkadiag.lag.model import LagReport
from kafkadiag.lag.snapshot import SOURCE_KAFKA, SOURCE_ZOOKEEPER
from kafkadiag.report.safe_text import printable

if TYPE_CHECKING:
    from kafkadiag.maxlag.model import MaxLagReport

PREFIX = "kafkadiag_lag_"

METRICS: tuple[tuple[str, str, str], ...] = (
    ("partition_lag", "gauge", "Records between the committed offset and the high watermark."),
    ("partition_committed_offset", "gauge", "The group's committed offset."),
    ("partition_high_watermark", "gauge", "The partition's high watermark (log end offset)."),
    ("partition_log_start_offset", "gauge", "The partition's log-start offset."),
    ("partition_seconds_since_progress", "gauge", "Seconds since the committed offset last moved."),
    ("partition_time_lag_seconds", "gauge", "Estimated age of the next record the group will consume."),
    ("partition_consumption_rate", "gauge", "Records per second the committed offset advanced."),
    ("partition_production_rate", "gauge", "Records per second the high watermark advanced."),
    ("partition_status", "gauge", "1 for the partition's Burrow status (label status)."),
    ("partition_unknown", "gauge", "1 when the partition's lag could not be computed."),
    ("partition_fetcher_lag", "gauge", "The consumer's own fetcher lag: high watermark - fetch offset."),
    ("partition_fetcher_gap", "gauge", "Checker lag - fetcher lag: held by the consumer, not committed."),
    ("partition_stream_queue_chunks", "gauge", "Chunks in the queue of the stream the partition feeds."),
    ("group_total_lag", "gauge", "Sum of the group's positive partition lags."),
    ("group_max_lag", "gauge", "The group's largest partition lag."),
    ("group_members", "gauge", "Live members (old consumer: registered consumer instances)."),
    ("group_status", "gauge", "Burrow group status: 0 OK, 1 WARN, 2 ERR."),
    ("group_findings", "gauge", "Findings per code and severity."),
    ("group_exists", "gauge", "1 when the group was found, 0 when no source holds it (absent: unknown)."),
    ("fetcher_verdict", "gauge", "1 for the client's fetcher verdict (label verdict; docs/maxlag.md)."),
    ("up", "gauge", "1 when every source was reached, 0 when one could not be (see source_up)."),
    ("source_up", "gauge", "1 when the source (label source: zookeeper or kafka) was reached."),
    ("scrape_partial", "gauge", "1 when some data could not be read."),
    ("scrape_duration_seconds", "gauge", "Time spent reading the snapshot."),
    ("scrape_timestamp_seconds", "gauge", "When the snapshot was taken (Unix time)."),
)


def _escape(value: str) -> str:
    # Control characters first, as visible \xNN text, whose backslash is then escaped like any.
    return printable(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def _labels(pairs: Iterable[tuple[str, object]]) -> str:
    inner = ",".join(f'{name}="{_escape(str(value))}"' for name, value in pairs)
    return "{" + inner + "}" if inner else ""


def _value(value: float | int) -> str:
    if isinstance(value, float):
        return repr(round(value, 6))
    return str(value)


# The provenance names the brokers by the option they came from; source labels use the store.
_PROVENANCE_SOURCES = {"zookeeper": SOURCE_ZOOKEEPER, "bootstrap_servers": SOURCE_KAFKA}


def _sources_reached(report: LagReport) -> dict[tuple[str, str], bool]:
    """(source, address) -> reached, for every source named or found (brokers registered in
    ZooKeeper are a source too when they were needed and could not be reached)."""
    unreachable = dict(report.unreachable)
    reached = {
        (_PROVENANCE_SOURCES.get(kind, kind), address): _PROVENANCE_SOURCES.get(kind, kind) not in unreachable
        for kind, address in report.sources
    }
    named = {source for source, _ in reached}
    for source in unreachable:
        if source not in named:
            reached[(source, "")] = False
    return reached


def write_prometheus(stream: TextIO, report: LagReport, fetcher: MaxLagReport | None = None) -> None:
    samples: dict[str, list[str]] = {name: [] for name, _, _ in METRICS}
    columns = {}
    if fetcher is not None:
        from kafkadiag.maxlag.columns import columns_of, fetcher_columns

        columns = fetcher_columns(fetcher)

    def add(name: str, labels: Iterable[tuple[str, object]], value: float | int | None) -> None:
        if value is not None:
            samples[name].append(f"{PREFIX}{name}{_labels(labels)} {_value(value)}")

    for group in report.groups:
        group_labels = (("group", group.group), ("source", group.source))
        if group.exists is None:
            continue  # not read: nothing about it is known, not even whether it exists
        add("group_exists", group_labels, 1 if group.exists else 0)
        if not group.exists:
            continue
        add("group_total_lag", group_labels, group.total_lag)
        add("group_max_lag", group_labels, group.max_lag)
        add("group_members", group_labels, len(group.members))
        if group.status is not None:
            add("group_status", group_labels, GROUP_STATUS_VALUES[group.status])
        counts: dict[tuple[str, str], int] = {}
        for finding in group.findings:
            counts[(finding.code, finding.severity)] = counts.get((finding.code, finding.severity), 0) + 1
        for (code, severity), count in sorted(counts.items()):
            add("group_findings", (*group_labels, ("code", code), ("severity", severity)), count)
        for partition in group.partitions:
            labels = (*group_labels, ("topic", partition.topic), ("partition", partition.partition))
            add("partition_lag", labels, partition.lag)
            add("partition_committed_offset", labels, partition.committed_offset)
            add("partition_high_watermark", labels, partition.high_watermark)
            add("partition_log_start_offset", labels, partition.log_start_offset)
            add("partition_seconds_since_progress", labels, partition.since_progress_s)
            add("partition_time_lag_seconds", labels, partition.time_lag_s)
            add("partition_consumption_rate", labels, partition.consumption_rate)
            add("partition_production_rate", labels, partition.production_rate)
            add("partition_unknown", labels, 1 if partition.lag is None else 0)
            fetched = columns_of(columns, group, partition) if columns else None
            if fetched is not None:
                add("partition_fetcher_lag", labels, fetched.fetcher_lag)
                add("partition_fetcher_gap", labels, fetched.gap)
                add("partition_stream_queue_chunks", labels, fetched.queue_size)
            if partition.status is not None:
                for status in PARTITION_STATUSES:
                    add(
                        "partition_status",
                        (*labels, ("status", status)),
                        1 if status == partition.status else 0,
                    )
    for client in fetcher.clients if fetcher is not None else ():
        client_labels = (("client_id", client.client_id), ("group", client.group or ""))
        add("fetcher_verdict", (*client_labels, ("verdict", client.verdict)), 1)
    reached = _sources_reached(report)
    for (source, address), up in reached.items():
        add("source_up", (("source", source), ("address", address)), 1 if up else 0)
    add("up", (), 1 if all(reached.values()) else 0)
    add("scrape_partial", (), 1 if report.partial else 0)
    add("scrape_duration_seconds", (), report.duration_ms / 1000)
    add("scrape_timestamp_seconds", (), report.taken_at_ms / 1000)
    for name, kind, help_text in METRICS:
        if not samples[name]:
            continue
        stream.write(f"# HELP {PREFIX}{name} {help_text}\n# TYPE {PREFIX}{name} {kind}\n")
        stream.write("\n".join(samples[name]) + "\n")
