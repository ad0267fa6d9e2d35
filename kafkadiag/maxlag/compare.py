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

Every verdict quotes the metrics (MBean names and values), settings (with their source) and
offsets it rests on. No I/O.
"""

from __future__ import annotations

from collections.abc import Sequence

from kafkadiag.collect.jmx.kafka import NEW_CONSUMER, ClientMetrics, ConsumerSettings
from kafkadiag.digits import all_ascii_digits
from kafkadiag.lag.evidence import consumer_of_owner
from kafkadiag.lag.model import GroupLag, LagReport, PartitionLag
from kafkadiag.maxlag.model import (
    STREAM_EMPTY,
    STREAM_FULL,
    STREAM_PARTIAL,
    STREAM_UNKNOWN,
    VERDICT_CONSUMER_BEHIND,
    VERDICT_FETCH_BOUND,
    VERDICT_FETCHER_ABSENT,
    VERDICT_FETCHER_STALE,
    VERDICT_HEALTHY,
    VERDICT_STREAMS_NOT_DRAINING,
    BufferBound,
    ClientComparison,
    MaxLagReport,
    PartitionComparison,
    StreamComparison,
)

# Without a record size the fetcher's "one fetch" cannot be counted in records: fall back to this.
DEFAULT_LAG_THRESHOLD = 1000
FETCHER_THREAD_PREFIX = "ConsumerFetcherThread-"
EVIDENCE_LIMIT = 12


def consumer_id_of_fetcher(thread_name: str) -> str | None:
    """ConsumerFetcherThread-<consumerId>-<fetcherId>-<brokerId> -> consumerId."""
    if not thread_name.startswith(FETCHER_THREAD_PREFIX):
        return None
    head, _, broker = thread_name[len(FETCHER_THREAD_PREFIX) :].rpartition("-")
    consumer, _, fetcher = head.rpartition("-")
    if not consumer or not all_ascii_digits(broker.lstrip("-")) or not all_ascii_digits(fetcher):
        return None
    return consumer


def _setting_int(settings: ConsumerSettings, name: str, default: int) -> int:
    setting = settings.get(name)
    value = setting.as_int if setting is not None else None
    return value if value is not None and value > 0 else default


def _describe_setting(settings: ConsumerSettings, name: str) -> str:
    setting = settings.get(name)
    return f"{name}={setting.value} ({setting.source})" if setting is not None else f"{name} unknown"


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
        return per_fetch, f"one fetch: {_describe_setting(settings, name)} / {average:.0f} bytes per record"
    return DEFAULT_LAG_THRESHOLD, "default (the record size is unknown)"


def _limited(lines: list[str]) -> list[str]:
    if len(lines) <= EVIDENCE_LIMIT:
        return lines
    return [*lines[:EVIDENCE_LIMIT], f"... and {len(lines) - EVIDENCE_LIMIT} more"]


def _ranges(numbers: Sequence[int]) -> str:
    ordered = sorted(set(numbers))
    parts: list[str] = []
    index = 0
    while index < len(ordered):
        end = index
        while end + 1 < len(ordered) and ordered[end + 1] == ordered[end] + 1:
            end += 1
        parts.append(str(ordered[index]) if end == index else f"{ordered[index]}-{ordered[end]}")
        index = end + 1
    return ", ".join(parts)


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
    notes: list[str] = list(settings.problems)
    complete = True
    threshold, threshold_source = lag_threshold_for(metrics, settings, lag_threshold)

    consumer_ids = {
        consumer_id
        for consumer_id in (consumer_id_of_fetcher(name) for name, _ in metrics.fetcher_threads)
        if consumer_id is not None
    } | {queue.consumer_id for queue in metrics.queues if queue.consumer_id}
    checker: dict[tuple[str, int], PartitionLag] = (
        {(p.topic, p.partition): p for p in group.partitions} if group is not None else {}
    )
    fetcher = {(p.topic, p.partition): p for p in metrics.partitions}
    queue_topics = {queue.topic for queue in metrics.queues}

    def is_mine(key: tuple[str, int], lag: PartitionLag) -> bool:
        if key in fetcher:
            return True
        if consumer_ids and lag.owner is not None:
            return consumer_of_owner(lag.owner) in consumer_ids
        return not fetcher and key[0] in queue_topics

    keys = set(fetcher) | {key for key, lag in checker.items() if is_mine(key, lag)}

    # ---- streams: queue fill, and the partitions their thread owns in ZooKeeper
    capacity = (
        _setting_int(settings, "queued.max.message.chunks", 2) if metrics.consumer != NEW_CONSUMER else None
    )
    streams: list[StreamComparison] = []
    stream_of: dict[tuple[str, int], str] = {}
    for queue in metrics.queues:
        owned = []
        owner_name = None
        for key, lag in checker.items():
            if key[0] != queue.topic or lag.owner is None or key not in keys:
                continue
            consumer, _, thread = lag.owner.rpartition("-")
            if thread == queue.thread_id and (not consumer_ids or consumer in consumer_ids):
                owned.append(key[1])
                owner_name = lag.owner
                stream_of[key] = f"{queue.topic}/{queue.thread_id}"
        if queue.size is None or capacity is None:
            state = STREAM_UNKNOWN
        elif queue.size >= capacity:
            state = STREAM_FULL
        elif queue.size == 0:
            state = STREAM_EMPTY
        else:
            state = STREAM_PARTIAL
        streams.append(
            StreamComparison(
                queue.topic,
                queue.thread_id,
                queue.size,
                capacity,
                state,
                tuple(sorted(owned)),
                owner_name,
                queue.source,
            )
        )

    # ---- partitions: fetcher lag against checker lag
    partitions: list[PartitionComparison] = []
    for key in sorted(keys):
        fetched_entry = fetcher.get(key)
        lag_entry = checker.get(key)
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
        gap = checker_lag - fetcher_lag if checker_lag is not None and fetcher_lag is not None else None
        partitions.append(
            PartitionComparison(
                topic=key[0],
                partition=key[1],
                fetcher_lag=fetcher_lag,
                fetched=fetched_entry is not None and fetcher_lag is not None,
                checker_lag=checker_lag,
                committed_offset=lag_entry.committed_offset if lag_entry is not None else None,
                high_watermark=lag_entry.high_watermark if lag_entry is not None else None,
                gap=gap,
                owner=lag_entry.owner if lag_entry is not None else None,
                stream=stream_of.get(key),
                fetcher_source=fetched_entry.source if fetched_entry is not None else None,
                problems=tuple(problems),
            )
        )

    known_fetcher = [p.fetcher_lag for p in partitions if p.fetcher_lag is not None]
    known_checker = [p.checker_lag for p in partitions if p.checker_lag is not None]
    known_gaps = [p.gap for p in partitions if p.gap is not None]
    fetcher_total = sum(known_fetcher) if known_fetcher else None
    checker_total = sum(lag for lag in known_checker if lag > 0) if known_checker else None
    gap_total = sum(known_gaps) if known_gaps else None
    fetchers = len(metrics.fetcher_threads) or 1
    bound = buffer_bound(metrics, settings, len(metrics.queues), fetchers)
    if not metrics.fetcher_threads and metrics.consumer != NEW_CONSUMER:
        notes.append("fetcher threads not read: the bound assumes 1 fetcher")

    if group is None:
        complete = not checker_requested
        notes.append(
            "no checker lag: name the cluster (--zookeeper / --bootstrap-server) and the group (--group)"
            if not checker_requested
            else f"no checker lag: no group read for client {metrics.client_id} (name it with --group)"
        )
    elif not group.exists:
        complete = False
        notes.append(f"group {group.group} was not found: no checker lag")
    elif any(p.checker_lag is None for p in partitions):
        complete = False

    max_fetcher_lag = max([lag for lag in [metrics.max_lag, *known_fetcher] if lag is not None], default=None)
    verdict, summary, evidence, remedy = _verdict(
        metrics,
        settings,
        streams,
        partitions,
        bound,
        threshold,
        threshold_source,
        max_fetcher_lag,
        gap_total,
        thread_names_read,
        consumer_ids,
    )
    return ClientComparison(
        client_id=metrics.client_id,
        consumer=metrics.consumer,
        naming=metrics.naming,
        group=group.group if group is not None else None,
        group_source=group.source if group is not None else None,
        verdict=verdict,
        summary=summary,
        evidence=tuple(evidence),
        remedy=remedy,
        max_lag=metrics.max_lag,
        max_lag_source=metrics.max_lag_source,
        min_fetch_rate=metrics.min_fetch_rate,
        partitions=tuple(partitions),
        streams=tuple(streams),
        fetcher_lag_total=fetcher_total,
        checker_lag_total=checker_total,
        gap_total=gap_total,
        bound=bound,
        settings=settings,
        lag_threshold=threshold,
        lag_threshold_source=threshold_source,
        fetcher_threads=metrics.fetcher_threads,
        notes=tuple(notes),
        complete=complete,
    )


def _stream_line(stream: StreamComparison) -> str:
    owned = f", partitions {_ranges(stream.partitions)}" if stream.partitions else ""
    owner = f" (thread {stream.owner})" if stream.owner else ""
    return f"{stream.source} = {stream.queue_size} of {stream.capacity} chunks{owner}{owned}"


def _bound_text(bound: BufferBound) -> str:
    if bound.records is not None:
        return (
            f"{bound.records} records ({bound.in_flight_records} in {bound.in_flight_chunks} chunks of "
            f"{bound.fetch_message_max_bytes} bytes at {bound.average_record_bytes:.0f} bytes per record, "
            f"+ {bound.uncommitted_records} consumed since the last auto-commit)"
        )
    return f"{bound.in_flight_bytes} bytes in {bound.in_flight_chunks} chunks (records: unknown)"


def _verdict(
    metrics: ClientMetrics,
    settings: ConsumerSettings,
    streams: list[StreamComparison],
    partitions: list[PartitionComparison],
    bound: BufferBound,
    threshold: int,
    threshold_source: str,
    max_fetcher_lag: int | None,
    gap_total: int | None,
    thread_names_read: bool,
    consumer_ids: set[str],
) -> tuple[str, str, list[str], str]:
    client = metrics.client_id
    max_lag_line = (
        [f"{metrics.max_lag_source} = {metrics.max_lag}"] if metrics.max_lag_source is not None else []
    )
    partition_lines = []
    for p in partitions:
        fetcher = (
            p.fetcher_lag if p.fetcher_lag is not None else ("never fetched" if p.fetcher_source else "none")
        )
        checker = p.checker_lag if p.checker_lag is not None else "unknown"
        committed = (
            f" (hw {p.high_watermark} - committed {p.committed_offset})"
            if p.committed_offset is not None
            else ""
        )
        gap = f", gap {p.gap}" if p.gap is not None else ""
        partition_lines.append(
            f"{p.topic}/{p.partition}: fetcher lag {fetcher}, checker lag {checker}{committed}{gap}"
        )

    if not metrics.has_fetcher_metrics:
        return (
            VERDICT_FETCHER_ABSENT,
            f"client {client}: no MaxLag and no per-partition fetcher lag in this JVM's metrics",
            _limited(
                [f"read: {source}" for source in metrics.sources] or ["no consumer fetcher MBean found"]
            ),
            "Check that the metrics source is the consumer's JVM and that its connector is running "
            "(it registers its fetcher metrics when it starts consuming); `kafkadiag lag --group ...` "
            "shows whether the group has owners.",
        )

    full = [s for s in streams if s.state == STREAM_FULL]
    empty = [s for s in streams if s.state == STREAM_EMPTY]
    if full:
        named = ", ".join(
            f"{s.topic} thread {s.thread_id}"
            + (f" (partitions {_ranges(s.partitions)})" if s.partitions else "")
            for s in full
        )
        starving = ", ".join(f"{s.topic} thread {s.thread_id}" for s in empty)
        summary = f"client {client}: stream queue full: {named}"
        if starving:
            summary += f"; empty (starving): {starving}"
        summary += f"; MaxLag {metrics.max_lag if metrics.max_lag is not None else 'unknown'}"
        if gap_total is not None:
            summary += f", gap {gap_total} records between fetch and commit"
        evidence = (
            [_stream_line(s) for s in full]
            + [_stream_line(s) for s in empty]
            + max_lag_line
            + [f"capacity: {_describe_setting(settings, 'queued.max.message.chunks')}"]
            + partition_lines
        )
        threads = [name for name, _ in metrics.fetcher_threads]
        stream_names = ", ".join(s.owner or f"{s.topic} thread {s.thread_id}" for s in full)
        remedy = (
            f"The thread consuming {stream_names} stopped taking from its queue: the application code "
            "handling its messages is blocked or too slow. Take a thread dump now "
            "(`jstack -l PID > dump.txt`, then `kafkadiag dump analyze dump.txt`) and look at the thread "
            "iterating that stream: the frames above ConsumerIterator.next/KafkaStream are where it waits. "
            + (
                f"The fetcher ({', '.join(threads)}) is blocked in put() on that queue, so "
                if threads
                else "So "
            )
            + "every stream it serves starves until the stream drains; restart or unblock the handler."
        )
        return VERDICT_STREAMS_NOT_DRAINING, summary, _limited(evidence), remedy

    if max_fetcher_lag is not None and max_fetcher_lag > threshold:
        behind = [p for p in partitions if p.fetcher_lag is not None and p.fetcher_lag > threshold]
        fetch_setting = (
            "max.partition.fetch.bytes" if metrics.consumer == NEW_CONSUMER else "fetch.message.max.bytes"
        )
        if metrics.consumer == NEW_CONSUMER:
            summary = (
                f"client {client}: records-lag-max {max_fetcher_lag} > {threshold} ({threshold_source}); "
                f"{len(behind)} partition(s) behind"
            )
            remedy = (
                "The consumer's position trails the log. The new consumer fetches inside poll(): check the "
                "time between polls (a slow poll loop looks the same) and, if polls are frequent, the "
                f"broker and network, and raise {_describe_setting(settings, fetch_setting)} or add "
                "consumers."
            )
            return (
                VERDICT_CONSUMER_BEHIND,
                summary,
                _limited(max_lag_line + [f"threshold {threshold}: {threshold_source}"] + partition_lines),
                remedy,
            )
        summary = (
            f"client {client}: fetcher behind: MaxLag {max_fetcher_lag} > {threshold} ({threshold_source}) "
            f"while no stream queue is full"
        )
        if empty:
            summary += f"; {len(empty)} of {len(streams)} queues empty (streams waiting for data)"
        evidence = (
            max_lag_line
            + [f"threshold {threshold}: {threshold_source}"]
            + [_stream_line(s) for s in streams]
            + partition_lines
        )
        if metrics.min_fetch_rate is not None:
            evidence.append(f"MinFetchRate = {metrics.min_fetch_rate:.3g} fetch requests/s (one-minute rate)")
        remedy = (
            "Fetching is the bottleneck, not processing: the streams wait for data. Check the leaders' "
            "brokers (request latency, load, FetchRequestAndResponseMetrics), the network between "
            f"consumer and brokers, and the fetch size: {_describe_setting(settings, fetch_setting)} caps "
            "what one fetch brings per partition; raise it, or num.consumer.fetchers."
        )
        return VERDICT_FETCH_BOUND, summary, _limited(evidence), remedy

    stale: list[str] = []
    if (
        thread_names_read
        and metrics.consumer != NEW_CONSUMER
        and metrics.fetcher_threads_attributed
        and not metrics.fetcher_threads
    ):
        stale.append(f"no {FETCHER_THREAD_PREFIX}* thread runs in the JVM")
    never = [p for p in partitions if p.fetcher_source is not None and not p.fetched]
    if never and len(never) == len([p for p in partitions if p.fetcher_source is not None]):
        stale.append(f"the fetcher never fetched any of its {len(never)} partition(s) (ConsumerLag = -1)")
    if gap_total is not None and bound.records is not None and gap_total > bound.records:
        stale.append(
            f"the committed offsets trail the fetch offsets by {gap_total} records, more than the consumer "
            f"can hold: {_bound_text(bound)}"
        )
    if stale:
        summary = f"client {client}: fetcher metrics stale: " + "; ".join(stale)
        evidence = (
            max_lag_line
            + [f"fetcher threads: {', '.join(name for name, _ in metrics.fetcher_threads) or 'none'}"]
            + [_stream_line(s) for s in streams]
            + partition_lines
        )
        remedy = (
            "The fetcher is not fetching, so MaxLag says nothing about this consumer. Take a thread dump "
            f"(`jstack -l PID`) and look for {FETCHER_THREAD_PREFIX}* and the leader-finder thread; check "
            "the consumer's log for rebalance failures (a rebalance that did not finish leaves the fetchers "
            "closed) and `kafkadiag lag --group ...` for partitions without owners or leaders. If offsets "
            "are committed by the application (auto-commit off), check that it still commits."
        )
        return VERDICT_FETCHER_STALE, summary, _limited(evidence), remedy

    summary = (
        f"client {client}: healthy: MaxLag {max_fetcher_lag if max_fetcher_lag is not None else 'unknown'}"
    )
    summary += f" (threshold {threshold})"
    if gap_total is not None:
        summary += f", gap {gap_total} records"
        if bound.records is not None:
            summary += f" within the bound of {bound.records}"
    if streams:
        summary += f"; queues {', '.join(str(s.queue_size) for s in streams)} of {streams[0].capacity}"
    evidence = max_lag_line + [_stream_line(s) for s in streams] + partition_lines
    return (
        VERDICT_HEALTHY,
        summary,
        _limited(evidence),
        "Nothing to do: the fetcher keeps up and the streams drain.",
    )


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
