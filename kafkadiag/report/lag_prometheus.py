"""`kafkadiag lag --format prometheus` and `--serve`: a lag report as Prometheus series.

Names, labels and the schema version are in kafkadiag/report/prometheus_names.py and
docs/prometheus.md.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TYPE_CHECKING, TextIO

from kafkadiag.lag.model import GroupLag, LagReport, PartitionLag
from kafkadiag.report.prometheus_text import Exposition, cluster_of, source_label

if TYPE_CHECKING:
    from kafkadiag.maxlag.model import MaxLagReport

Labels = tuple[tuple[str, object], ...]


def write_prometheus(
    stream: TextIO, report: LagReport, fetcher: MaxLagReport | None = None, cluster_name: str | None = None
) -> None:
    exposition = Exposition()
    add_lag_report(exposition, report, fetcher, cluster_name)
    exposition.write(stream)


def add_lag_report(
    exposition: Exposition,
    report: LagReport,
    fetcher: MaxLagReport | None = None,
    cluster_name: str | None = None,
) -> None:
    cluster = cluster_of(report.sources, cluster_name)
    exposition.add_build_info()
    columns = {}
    if fetcher is not None:
        from kafkadiag.maxlag.columns import fetcher_columns

        columns = fetcher_columns(fetcher)
    for group in report.groups:
        _add_group(exposition, report, group, cluster, columns)
    if fetcher is not None:
        from kafkadiag.report.maxlag_prometheus import add_clients

        add_clients(exposition, fetcher, cluster)
    _add_collection(exposition, report, cluster)


def _add_group(
    exposition: Exposition, report: LagReport, group: GroupLag, cluster: str, columns: dict
) -> None:
    labels: Labels = (("cluster", cluster), ("group", group.group), ("source", group.source))
    if group.exists is None:
        return  # not read: nothing about it is known, not even whether it exists
    exposition.add("kafkadiag_group_exists", labels, 1 if group.exists else 0)
    if not group.exists:
        return
    time_lags = [p.time_lag_s for p in group.partitions if p.time_lag_s is not None]
    exposition.add("kafkadiag_group_lag_records", labels, group.total_lag)
    exposition.add("kafkadiag_group_max_lag_records", labels, group.max_lag)
    exposition.add("kafkadiag_group_max_lag_seconds", labels, max(time_lags) if time_lags else None)
    exposition.add("kafkadiag_group_consumed_records_per_second", labels, group.consumption_rate)
    exposition.add("kafkadiag_group_members", labels, len(group.members))
    if group.status is not None:
        exposition.add("kafkadiag_group_status", (*labels, ("status", group.status)), 1)
    counts: dict[tuple[str, str], int] = {}
    for finding in group.findings:
        key = (finding.name, finding.severity.value)  # the rule's name, as before its code
        counts[key] = counts.get(key, 0) + 1
    for (code, severity), count in sorted(counts.items()):
        exposition.add("kafkadiag_group_findings", (*labels, ("code", code), ("severity", severity)), count)
    for topic in group.topics:
        topic_labels = (*labels, ("topic", topic.topic))
        exposition.add("kafkadiag_group_topic_lag_records", topic_labels, topic.total_lag)
        exposition.add("kafkadiag_group_topic_max_lag_records", topic_labels, topic.max_lag)
        exposition.add(
            "kafkadiag_group_topic_consumed_records_per_second", topic_labels, topic.consumption_rate
        )
        exposition.add("kafkadiag_group_topic_lag_unknown_partitions", topic_labels, topic.unknown)
    for partition in group.partitions:
        _add_partition(exposition, report, group, partition, labels, columns)


def _add_partition(
    exposition: Exposition,
    report: LagReport,
    group: GroupLag,
    partition: PartitionLag,
    group_labels: Labels,
    columns: dict,
) -> None:
    labels = (*group_labels, ("topic", partition.topic), ("partition", partition.partition))
    add = exposition.add
    add("kafkadiag_partition_lag_records", labels, partition.lag)
    add("kafkadiag_partition_lag_unknown", labels, 1 if partition.lag is None else 0)
    add("kafkadiag_partition_committed_offset", labels, partition.committed_offset)
    add("kafkadiag_partition_high_watermark_offset", labels, partition.high_watermark)
    add("kafkadiag_partition_log_start_offset", labels, partition.log_start_offset)
    add("kafkadiag_partition_last_progress_timestamp_seconds", labels, _last_progress_s(report, partition))
    add("kafkadiag_partition_lag_seconds", labels, partition.time_lag_s)
    add("kafkadiag_partition_consumed_records_per_second", labels, partition.consumption_rate)
    add("kafkadiag_partition_produced_records_per_second", labels, partition.production_rate)
    if partition.status is not None:
        add("kafkadiag_partition_status", (*labels, ("status", partition.status)), 1)
    if columns:
        from kafkadiag.maxlag.columns import columns_of

        fetched = columns_of(columns, group, partition)
        if fetched is not None:
            add("kafkadiag_partition_fetcher_lag_records", labels, fetched.fetcher_lag)
            add("kafkadiag_partition_fetcher_gap_records", labels, fetched.gap)
            add("kafkadiag_partition_stream_queue_chunks", labels, fetched.queue_size)


def _last_progress_s(report: LagReport, partition: PartitionLag) -> float | None:
    """When the offset last moved; when it did not move during the whole window, the window's
    start (the latest it can have moved), so `time() - value` never overstates a stall."""
    if partition.last_progress_ms is not None:
        return partition.last_progress_ms / 1000
    if partition.since_progress_s is None:
        return None
    return report.taken_at_ms / 1000 - partition.since_progress_s


def _sources_reached(report: LagReport) -> dict[tuple[str, str], bool]:
    """(source, address) -> reached, for every source named or found (brokers registered in
    ZooKeeper are a source too when they were needed and could not be reached)."""
    unreachable = dict(report.unreachable)
    reached = {
        (source_label(kind), address): source_label(kind) not in unreachable
        for kind, address in report.sources
    }
    named = {source for source, _ in reached}
    for source in unreachable:
        if source not in named:
            reached[(source, "")] = False
    return reached


def _add_collection(exposition: Exposition, report: LagReport, cluster: str) -> None:
    reached = _sources_reached(report)
    for (source, address), up in reached.items():
        exposition.add(
            "kafkadiag_source_up", (("cluster", cluster), ("source", source), ("address", address)), int(up)
        )
    add_collection_state(exposition, cluster, all(reached.values()), report.partial, report.samples)
    labels = (("cluster", cluster),)
    exposition.add("kafkadiag_collection_duration_seconds", labels, report.duration_ms / 1000)
    exposition.add("kafkadiag_collection_timestamp_seconds", labels, report.taken_at_ms / 1000)


def add_collection_state(
    exposition: Exposition, cluster: str, up: bool, partial: bool, samples: int | None = None
) -> None:
    labels: Iterable[tuple[str, object]] = (("cluster", cluster),)
    exposition.add("kafkadiag_up", labels, int(up))
    exposition.add("kafkadiag_partial", labels, int(partial))
    exposition.add("kafkadiag_collection_samples", labels, samples)
