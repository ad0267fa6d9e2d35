"""The comparison: the fetcher's lag (MaxLag, ConsumerLag) against the checker's (hw - committed).

For a partition, checker lag - fetcher lag = fetch offset - committed offset (when both read the
same high watermark): what the consumer process holds but has not finished, i.e. chunks in its
stream queues and records consumed but not yet committed. That is bounded by the consumer's
settings (see BufferBound), so:

- a stream queue at queued.max.message.chunks     -> streams-not-draining (the fetcher is blocked)
- fetcher lag above one fetch, queues not full    -> fetch-bound
- the gap above the bound, or no fetcher thread,
  or a fetcher that never fetched                 -> fetcher-stale (its metrics say nothing any more)
- no fetcher metrics at all for the client        -> fetcher-absent
- otherwise                                       -> healthy

Each unhealthy verdict is a catalogue rule (KD701-KD705, kafkadiag.rules.metricsfamily) that
quotes the metrics (MBean names and values), settings (with their source) and offsets it rests on. No I/O.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from kafkadiag.consumer_metrics import NEW_CONSUMER, ClientMetrics, ConsumerSettings, FetcherPartitionLag
from kafkadiag.lag.evidence import consumer_of_owner
from kafkadiag.lag.model import GroupLag, LagReport, PartitionLag
from kafkadiag.maxlag.facts import (
    ClientFacts,
    Verdict,
    consumer_id_of_fetcher,
    describe_setting,
    limited,
)
from kafkadiag.maxlag.model import (
    HEALTHY_TITLE,
    STREAM_EMPTY,
    STREAM_FULL,
    STREAM_PARTIAL,
    STREAM_UNKNOWN,
    VERDICT_HEALTHY,
    BufferBound,
    ClientComparison,
    MaxLagReport,
    PartitionComparison,
    StreamComparison,
)
from kafkadiag.rules.metricsfamily import judge

# Without a record size the fetcher's "one fetch" cannot be counted in records: fall back to this.
DEFAULT_LAG_THRESHOLD = 1000


def _setting_int(settings: ConsumerSettings, name: str, default: int) -> int:
    setting = settings.get(name)
    value = setting.as_int if setting is not None else None
    return value if value is not None and value > 0 else default


def buffer_bound(
    metrics: ClientMetrics, settings: ConsumerSettings, streams: int, fetchers: int
) -> BufferBound:
    """What the consumer can hold between fetch offset and committed offset (see BufferBound)."""
    notes: list[str] = []
    average = metrics.average_record_bytes
    if metrics.consumer == NEW_CONSUMER:
        chunks = 0
        fetch_bytes = _setting_int(settings, "max.partition.fetch.bytes", 1024 * 1024)
        auto_commit_setting = settings.get("enable.auto.commit")
        # records-lag is hw - position: fetched records not yet returned by poll() are not in the
        # gap, only the batch being processed (max.poll.records) and what was not committed.
        in_flight_chunks = 0
        in_flight_records: int | None = _setting_int(settings, "max.poll.records", 500)
    else:
        chunks = _setting_int(settings, "queued.max.message.chunks", 2)
        fetch_bytes = _setting_int(settings, "fetch.message.max.bytes", 1024 * 1024)
        auto_commit_setting = settings.get("auto.commit.enable")
        in_flight_chunks = streams * (chunks + 1) + fetchers
        in_flight_records = None
        if average:
            in_flight_records = int(in_flight_chunks * fetch_bytes // average)
        else:
            notes.append(
                "the average record size is unknown (no ConsumerTopicMetrics): the bound is in bytes only"
            )
    auto_commit = auto_commit_setting.as_bool if auto_commit_setting is not None else True
    interval_ms = _setting_int(settings, "auto.commit.interval.ms", 60_000)
    rate = metrics.consume_rate
    uncommitted: int | None = None
    if not auto_commit:
        notes.append("auto-commit is off: the application commits itself, so uncommitted work has no bound")
    elif rate is None:
        notes.append("the consumption rate is unknown: uncommitted work cannot be bounded")
    else:
        # Records consumed since the last auto-commit: at most one interval's worth, plus one so
        # that a record being handled at the moment of the read is counted.
        uncommitted = int(rate * interval_ms / 1000) + 1
    total = (
        in_flight_records + uncommitted if in_flight_records is not None and uncommitted is not None else None
    )
    return BufferBound(
        streams=streams,
        fetchers=fetchers,
        queued_max_message_chunks=chunks,
        fetch_message_max_bytes=fetch_bytes,
        queued_bytes=streams * chunks * fetch_bytes,
        in_flight_chunks=in_flight_chunks,
        in_flight_bytes=in_flight_chunks * fetch_bytes,
        average_record_bytes=round(average, 3) if average else None,
        in_flight_records=in_flight_records,
        consume_rate=round(rate, 6) if rate is not None else None,
        auto_commit=auto_commit,
        auto_commit_interval_ms=interval_ms,
        uncommitted_records=uncommitted,
        records=total,
        notes=tuple(notes),
    )


def lag_threshold_for(
    metrics: ClientMetrics, settings: ConsumerSettings, explicit: int | None
) -> tuple[int, str]:
    """When the fetcher counts as behind: more than one fetch brings per partition."""
    if explicit is not None:
        return explicit, "--lag-threshold"
    name = "max.partition.fetch.bytes" if metrics.consumer == NEW_CONSUMER else "fetch.message.max.bytes"
    average = metrics.average_record_bytes
    if average:
        fetch_bytes = _setting_int(settings, name, 1024 * 1024)
        per_fetch = max(1, int(fetch_bytes // average))
        return per_fetch, f"one fetch: {describe_setting(settings, name)} / {average:.0f} bytes per record"
    return DEFAULT_LAG_THRESHOLD, "default (the record size is unknown)"


@dataclass(frozen=True)
class _Matching:
    """Which of the group's partitions and streams belong to one client."""

    consumer_ids: set[str]  # old consumer: the ids in its fetcher threads' and queues' names
    checker: dict[tuple[str, int], PartitionLag]  # the group's partitions, by (topic, partition)
    fetcher: dict[tuple[str, int], FetcherPartitionLag]  # the client's per-partition fetcher lag
    keys: set[tuple[str, int]]  # the partitions compared: fetched, or owned by this client


def _matching(metrics: ClientMetrics, group: GroupLag | None) -> _Matching:
    consumer_ids = {
        consumer_id
        for consumer_id in (consumer_id_of_fetcher(name) for name, _ in metrics.fetcher_threads)
        if consumer_id is not None
    } | {queue.consumer_id for queue in metrics.queues if queue.consumer_id}
    checker = {(p.topic, p.partition): p for p in group.partitions} if group is not None else {}
    fetcher = {(p.topic, p.partition): p for p in metrics.partitions}
    queue_topics = {queue.topic for queue in metrics.queues}

    # A client with no fetcher metrics at all names none of its partitions: the group read for it
    # is still its, and its checker lag is stated beside the verdict that the metrics are absent.
    nothing_fetched = not (fetcher or queue_topics or consumer_ids) and metrics.max_lag is None

    def is_mine(key: tuple[str, int], lag: PartitionLag) -> bool:
        if key in fetcher or nothing_fetched:
            return True
        if consumer_ids and lag.owner is not None:
            return consumer_of_owner(lag.owner) in consumer_ids
        return not fetcher and key[0] in queue_topics

    keys = set(fetcher) | {key for key, lag in checker.items() if is_mine(key, lag)}
    return _Matching(consumer_ids, checker, fetcher, keys)


def _stream_state(size: int | None, capacity: int | None) -> str:
    if size is None or capacity is None:
        return STREAM_UNKNOWN
    if size >= capacity:
        return STREAM_FULL
    return STREAM_EMPTY if size == 0 else STREAM_PARTIAL


def _streams(
    metrics: ClientMetrics, settings: ConsumerSettings, matching: _Matching
) -> tuple[list[StreamComparison], dict[tuple[str, int], str]]:
    """Each stream queue's fill, with the partitions its thread owns in ZooKeeper; and the stream
    each partition's chunks go to."""
    capacity = (
        _setting_int(settings, "queued.max.message.chunks", 2) if metrics.consumer != NEW_CONSUMER else None
    )
    streams: list[StreamComparison] = []
    stream_of: dict[tuple[str, int], str] = {}
    for queue in metrics.queues:
        owned = []
        owner_name = None
        for key, lag in matching.checker.items():
            if key[0] != queue.topic or lag.owner is None or key not in matching.keys:
                continue
            consumer, _, thread = lag.owner.rpartition("-")
            if thread == queue.thread_id and (not matching.consumer_ids or consumer in matching.consumer_ids):
                owned.append(key[1])
                owner_name = lag.owner
                stream_of[key] = f"{queue.topic}/{queue.thread_id}"
        state = _stream_state(queue.size, capacity)
        streams.append(
            StreamComparison(
                queue.topic, queue.thread_id, queue.size, capacity, state, tuple(sorted(owned)), owner_name,
                queue.source,
            )
        )  # fmt: skip
    return streams, stream_of


def _partition(
    key: tuple[str, int], matching: _Matching, group: GroupLag | None, stream_of: dict[tuple[str, int], str]
) -> PartitionComparison:
    """One partition's fetcher lag against its checker lag, and what is missing to compare them."""
    fetched_entry = matching.fetcher.get(key)
    lag_entry = matching.checker.get(key)
    problems: list[str] = []
    fetcher_lag = fetched_entry.lag if fetched_entry is not None else None
    if fetched_entry is None:
        problems.append("no fetcher lag metric for this partition: the fetcher does not fetch it")
    elif fetcher_lag is None:
        problems.append("the fetcher never fetched this partition (its ConsumerLag gauge reads -1)")
    checker_lag = lag_entry.lag if lag_entry is not None else None
    if lag_entry is None and group is not None:
        problems.append(f"group {group.group} has no committed offset for this partition")
    elif lag_entry is not None and lag_entry.lag is None:
        problems.extend(lag_entry.problems or ("checker lag unknown",))
    return PartitionComparison(
        topic=key[0],
        partition=key[1],
        fetcher_lag=fetcher_lag,
        fetched=fetched_entry is not None and fetcher_lag is not None,
        checker_lag=checker_lag,
        committed_offset=lag_entry.committed_offset if lag_entry is not None else None,
        high_watermark=lag_entry.high_watermark if lag_entry is not None else None,
        gap=checker_lag - fetcher_lag if checker_lag is not None and fetcher_lag is not None else None,
        owner=lag_entry.owner if lag_entry is not None else None,
        stream=stream_of.get(key),
        fetcher_source=fetched_entry.source if fetched_entry is not None else None,
        problems=tuple(problems),
    )


def _checker_notes(
    client_id: str, group: GroupLag | None, partitions: list[PartitionComparison], checker_requested: bool
) -> tuple[bool, list[str]]:
    """Whether the checker lag the verdict needs was all read, and what to say when it was not."""
    if group is None:
        note = (
            f"no checker lag: no group read for client {client_id} (name it with --group)"
            if checker_requested
            else "no checker lag: name the cluster (--zookeeper / --bootstrap-server) and the group (--group)"
        )
        return not checker_requested, [note]
    if not group.exists:
        return False, [f"group {group.group} was not found: no checker lag"]
    return all(p.checker_lag is not None for p in partitions), []


def _sum(values: list[int]) -> int | None:
    return sum(values) if values else None


def compare_client(
    metrics: ClientMetrics,
    settings: ConsumerSettings,
    group: GroupLag | None,
    lag_threshold: int | None = None,
    thread_names_read: bool = False,
    checker_requested: bool = True,
) -> ClientComparison:
    """Compare one client; `checker_requested` False means the user named no cluster (metrics only),
    so missing checker lag does not make the result incomplete."""
    threshold, threshold_source = lag_threshold_for(metrics, settings, lag_threshold)
    matching = _matching(metrics, group)
    streams, stream_of = _streams(metrics, settings, matching)
    partitions = [_partition(key, matching, group, stream_of) for key in sorted(matching.keys)]
    known_fetcher = [p.fetcher_lag for p in partitions if p.fetcher_lag is not None]
    known_checker = [p.checker_lag for p in partitions if p.checker_lag is not None]
    gap_total = _sum([p.gap for p in partitions if p.gap is not None])
    bound = buffer_bound(metrics, settings, len(metrics.queues), len(metrics.fetcher_threads) or 1)
    notes: list[str] = list(settings.problems)
    if not metrics.fetcher_threads and metrics.consumer != NEW_CONSUMER and metrics.has_fetcher_metrics:
        notes.append("fetcher threads not read: the bound assumes 1 fetcher")
    complete, checker_notes = _checker_notes(metrics.client_id, group, partitions, checker_requested)
    facts = ClientFacts(
        metrics, settings, streams, partitions, bound, threshold, threshold_source,
        max([lag for lag in [metrics.max_lag, *known_fetcher] if lag is not None], default=None),
        gap_total, thread_names_read,
    )  # fmt: skip
    verdict = _verdict(facts)
    return ClientComparison(
        client_id=metrics.client_id,
        consumer=metrics.consumer,
        naming=metrics.naming,
        group=group.group if group is not None else None,
        group_source=group.source if group is not None else None,
        verdict=verdict.verdict,
        rule=verdict.rule,
        title=verdict.title,
        summary=verdict.summary,
        evidence=tuple(verdict.evidence),
        remedy=verdict.remedy,
        max_lag=metrics.max_lag,
        max_lag_source=metrics.max_lag_source,
        min_fetch_rate=metrics.min_fetch_rate,
        partitions=tuple(partitions),
        streams=tuple(streams),
        fetcher_lag_total=_sum(known_fetcher),
        checker_lag_total=sum(lag for lag in known_checker if lag > 0) if known_checker else None,
        gap_total=gap_total,
        bound=bound,
        settings=settings,
        lag_threshold=threshold,
        lag_threshold_source=threshold_source,
        fetcher_threads=metrics.fetcher_threads,
        notes=tuple(notes + checker_notes),
        complete=complete,
    )


def _verdict(facts: ClientFacts) -> Verdict:
    """The first KD70x rule that holds, else healthy (which no rule names: nothing is wrong)."""
    judged = judge(facts)
    if judged is not None:
        return judged
    max_lag = facts.max_fetcher_lag
    summary = f"client {facts.client}: healthy: MaxLag {max_lag if max_lag is not None else 'unknown'}"
    summary += f" (threshold {facts.threshold})"
    if facts.gap_total is not None:
        summary += f", gap {facts.gap_total} records"
        if facts.bound.records is not None:
            summary += f" within the bound of {facts.bound.records}"
    if facts.streams:
        sizes = ", ".join(str(s.queue_size) for s in facts.streams)
        summary += f"; queues {sizes} of {facts.streams[0].capacity}"
    evidence = [*facts.max_lag_lines(), *facts.stream_lines(), *facts.partition_lines()]
    remedy = "Nothing to do: the fetcher keeps up and the streams drain."
    return Verdict(VERDICT_HEALTHY, summary, limited(evidence), remedy, title=HEALTHY_TITLE)


def group_for_client(client_id: str, groups: Sequence[GroupLag], consumer: str = "old") -> GroupLag | None:
    """The group whose checker lag belongs to a client: same name (client.id defaults to group.id),
    else the only group named. A group read from both ZooKeeper and Kafka (dual commit) counts
    where the client commits: ZooKeeper for the old consumer, Kafka for the new one."""
    preferred = "kafka" if consumer == NEW_CONSUMER else "zookeeper"

    def best(candidates: list[GroupLag]) -> GroupLag:
        return sorted(candidates, key=lambda group: group.source != preferred)[0]

    named = [group for group in groups if group.group == client_id]
    if named:
        return best(named)
    if len({group.group for group in groups}) == 1:
        return best(list(groups))
    return None


def compare(
    clients: Sequence[ClientMetrics],
    settings_of: dict[str, ConsumerSettings],
    lag_report: LagReport | None,
    lag_threshold: int | None = None,
    thread_names_read: bool = False,
    checker_requested: bool = True,
    expected_clients: Sequence[str] = (),
    metrics_source_kind: str = "",
    metrics_source: str = "",
    taken_at_ms: int = 0,
    notes: Sequence[str] = (),
    errors: Sequence[str] = (),
    timings: Sequence[tuple[str, float]] = (),
) -> MaxLagReport:
    """Compare every client found in the metrics (and every expected one, as absent if missing)."""
    groups = list(lag_report.groups) if lag_report is not None else []
    found = {metrics.client_id for metrics in clients}
    comparisons = []
    wanted = list(clients)
    for client_id in expected_clients:
        if client_id not in found:
            wanted.append(ClientMetrics(client_id=client_id, consumer="old", naming="none"))
    for metrics in wanted:
        settings = settings_of.get(metrics.client_id) or settings_of.get("*") or ConsumerSettings(())
        comparisons.append(
            compare_client(
                metrics,
                settings,
                group_for_client(metrics.client_id, groups, metrics.consumer),
                lag_threshold,
                thread_names_read,
                checker_requested,
            )
        )
    return MaxLagReport(
        taken_at_ms=taken_at_ms,
        metrics_source_kind=metrics_source_kind,
        metrics_source=metrics_source,
        clients=tuple(comparisons),
        lag_sources=lag_report.sources if lag_report is not None else (),
        errors=tuple(errors) + (lag_report.errors if lag_report is not None else ()),
        notes=tuple(notes),
        timings=tuple(timings),
    )
