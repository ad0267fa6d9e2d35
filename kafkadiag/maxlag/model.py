"""What the MaxLag comparison returns: per partition, per stream, per client; plain frozen data."""

from __future__ import annotations

from dataclasses import dataclass

from kafkadiag.collect.jmx.kafka import ConsumerSettings

VERDICT_HEALTHY = "healthy"
VERDICT_STREAMS_NOT_DRAINING = "streams-not-draining"
VERDICT_FETCH_BOUND = "fetch-bound"
VERDICT_CONSUMER_BEHIND = "consumer-behind"
VERDICT_FETCHER_STALE = "fetcher-stale"
VERDICT_FETCHER_ABSENT = "fetcher-absent"

STREAM_FULL = "full"
STREAM_EMPTY = "empty"
STREAM_PARTIAL = "partial"
STREAM_UNKNOWN = "unknown"


@dataclass(frozen=True)
class VerdictKind:
    code: str
    title: str
    healthy: bool
    explanation: str  # what the numbers mean, for docs/maxlag.md and the report


VERDICTS = {
    kind.code: kind
    for kind in (
        VerdictKind(
            VERDICT_HEALTHY,
            "Healthy: fetcher caught up, streams draining",
            True,
            "The fetcher's lag is within one fetch and the consumer holds no more than it can buffer: "
            "the committed offset trails the fetch offset only by the chunks in the queues and the "
            "records consumed since the last commit.",
        ),
        VerdictKind(
            VERDICT_STREAMS_NOT_DRAINING,
            "Streams not draining: a full chunk queue blocks the fetcher",
            False,
            "A stream's queue holds queued.max.message.chunks chunks: its thread stopped taking from "
            "it. The fetcher blocks in put() on that queue, so its MaxLag freezes at a small value while "
            "the committed offset falls behind, and every other stream it serves starves.",
        ),
        VerdictKind(
            VERDICT_FETCH_BOUND,
            "Fetch-bound: the fetcher is behind, the streams wait for data",
            False,
            "MaxLag exceeds what one fetch brings per partition while the queues are not full: the "
            "consumer is limited by fetching (broker, network, fetch size), not by processing.",
        ),
        VerdictKind(
            VERDICT_CONSUMER_BEHIND,
            "Consumer behind: its position trails the log",
            False,
            "records-lag-max (new consumer) exceeds one fetch: the consumer's position is behind the "
            "high watermark; the new consumer fetches inside poll(), so a slow poll loop shows the same.",
        ),
        VerdictKind(
            VERDICT_FETCHER_STALE,
            "Fetcher metrics stale: the fetcher is not fetching",
            False,
            "The fetcher reports little or no lag, but the committed offsets trail by more than the "
            "consumer can hold in its queues and uncommitted work, or no fetcher thread runs, or it never "
            "fetched: its metrics no longer describe the consumer.",
        ),
        VerdictKind(
            VERDICT_FETCHER_ABSENT,
            "Fetcher metrics absent: no consumer fetcher in this JVM",
            False,
            "The JVM exposes no fetcher metrics for this client: the consumer connector is not running "
            "there (not created yet, shut down), JMX reporting is off, or this is not the consumer's JVM.",
        ),
    )
}


@dataclass(frozen=True)
class PartitionComparison:
    topic: str
    partition: int
    # The fetcher: hw - fetch offset at its last fetch (ConsumerLag / records-lag); None: unknown
    # or never fetched (see `fetched`).
    fetcher_lag: int | None
    fetched: bool
    # The checker: broker high watermark - committed offset (lag engine).
    checker_lag: int | None
    committed_offset: int | None
    high_watermark: int | None
    gap: int | None  # checker_lag - fetcher_lag: what the consumer holds but has not committed
    owner: str | None = None  # old consumer: "<consumerId>-<threadNo>" from ZooKeeper
    stream: str | None = None  # "topic/threadNo" of the stream the partition's chunks go to
    fetcher_source: str | None = None
    problems: tuple[str, ...] = ()


@dataclass(frozen=True)
class StreamComparison:
    topic: str
    thread_id: str
    queue_size: int | None
    capacity: int | None  # queued.max.message.chunks
    state: str  # full | empty | partial | unknown
    partitions: tuple[int, ...]  # owned by this stream's thread in ZooKeeper
    owner: str | None  # "<consumerId>-<threadNo>" when known
    source: str


@dataclass(frozen=True)
class BufferBound:
    """The most the consumer can hold between its fetch offset and its committed offset.

    Queued: streams x queued.max.message.chunks x fetch.message.max.bytes (the chunks waiting in the
    stream queues), plus one chunk per stream being iterated and one per fetcher blocked in put().
    Uncommitted: with auto-commit, the records consumed since the last commit, at most the
    consumption rate x auto.commit.interval.ms. In records when the average record size is known
    (ConsumerTopicMetrics BytesPerSec / MessagesPerSec).
    """

    streams: int
    fetchers: int
    queued_max_message_chunks: int
    fetch_message_max_bytes: int
    queued_bytes: int  # streams x chunks x fetch bytes
    in_flight_chunks: int  # streams x (chunks + 1) + fetchers
    in_flight_bytes: int
    average_record_bytes: float | None
    in_flight_records: int | None
    consume_rate: float | None  # records/s
    auto_commit: bool
    auto_commit_interval_ms: int
    uncommitted_records: int | None
    records: int | None  # in_flight_records + uncommitted_records
    notes: tuple[str, ...] = ()


@dataclass(frozen=True)
class ClientComparison:
    client_id: str
    consumer: str  # old | new
    naming: str
    group: str | None
    verdict: str
    summary: str
    evidence: tuple[str, ...]
    remedy: str
    max_lag: int | None
    max_lag_source: str | None
    min_fetch_rate: float | None
    partitions: tuple[PartitionComparison, ...]
    streams: tuple[StreamComparison, ...]
    fetcher_lag_total: int | None
    checker_lag_total: int | None
    gap_total: int | None
    bound: BufferBound | None
    settings: ConsumerSettings
    lag_threshold: int
    lag_threshold_source: str
    fetcher_threads: tuple[tuple[str, str], ...] = ()
    notes: tuple[str, ...] = ()
    # Where the matched group's offsets were read: "zookeeper" or "kafka" (a group can be in both).
    group_source: str | None = None
    # False when an input the verdict needs was missing (checker lag unknown ...): see notes.
    complete: bool = True

    @property
    def healthy(self) -> bool:
        return VERDICTS[self.verdict].healthy

    @property
    def title(self) -> str:
        return VERDICTS[self.verdict].title


@dataclass(frozen=True)
class MaxLagReport:
    taken_at_ms: int
    metrics_source_kind: str
    metrics_source: str
    clients: tuple[ClientComparison, ...]
    lag_sources: tuple[tuple[str, str], ...] = ()
    errors: tuple[str, ...] = ()  # what could not be read (checker lag source unreachable ...)
    notes: tuple[str, ...] = ()
    timings: tuple[tuple[str, float], ...] = ()

    @property
    def unhealthy(self) -> bool:
        return any(not client.healthy for client in self.clients)

    @property
    def incomplete(self) -> bool:
        return bool(self.errors) or any(not client.complete for client in self.clients)
