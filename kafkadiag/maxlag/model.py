"""What the MaxLag comparison returns: per partition, per stream, per client; plain frozen data."""

from __future__ import annotations

from dataclasses import dataclass

from kafkadiag.consumer_metrics import ConsumerSettings

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


# The one verdict no rule names: each unhealthy verdict is a catalogue rule (KD701-KD705), whose
# title and explanation `kafkadiag explain` and docs/rules.md give.
HEALTHY_TITLE = "Healthy: fetcher caught up, streams draining"


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

    # The rule that names an unhealthy verdict (KD701 ...), None when healthy, and its title.
    rule: str | None = None
    title: str = HEALTHY_TITLE

    @property
    def healthy(self) -> bool:
        return self.verdict == VERDICT_HEALTHY


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
