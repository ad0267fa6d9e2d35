"""What the MaxLag verdict rules (KD701-KD705) judge for one client, and how they quote it.

The comparison (kafkadiag.maxlag.compare) builds a `ClientFacts` per client: its metrics and
settings, its streams and partitions set against the checker lag, the bound on what the consumer
can hold. The rules read only these facts; each verdict quotes the lines built here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kafkadiag.consumer_metrics import NEW_CONSUMER
from kafkadiag.digits import all_ascii_digits
from kafkadiag.lag import evidence
from kafkadiag.lag.evidence import ranges
from kafkadiag.maxlag.model import BufferBound, PartitionComparison, StreamComparison

if TYPE_CHECKING:
    from kafkadiag.consumer_metrics import ClientMetrics, ConsumerSettings

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


def describe_setting(settings: ConsumerSettings, name: str) -> str:
    setting = settings.get(name)
    return f"{name}={setting.value} ({setting.source})" if setting is not None else f"{name} unknown"


def limited(lines: list[str]) -> list[str]:
    return list(evidence.limited(lines, EVIDENCE_LIMIT))


@dataclass(frozen=True)
class Verdict:
    """A client's verdict (maxlag.model VERDICT_*), as the rule that reached it words it."""

    verdict: str
    summary: str
    evidence: list[str]
    remedy: str
    rule: str | None = None  # the catalogue code of an unhealthy verdict (KD701 ...)
    title: str = ""


@dataclass(frozen=True)
class ClientFacts:
    metrics: ClientMetrics
    settings: ConsumerSettings
    streams: Sequence[StreamComparison]
    partitions: Sequence[PartitionComparison]
    bound: BufferBound
    threshold: int
    threshold_source: str
    max_fetcher_lag: int | None  # the larger of MaxLag and every partition's fetcher lag
    gap_total: int | None
    thread_names_read: bool  # the JVM's thread names were read: a missing fetcher thread is a fact

    @property
    def client(self) -> str:
        return self.metrics.client_id

    @property
    def new_consumer(self) -> bool:
        return self.metrics.consumer == NEW_CONSUMER

    @property
    def fetch_setting(self) -> str:
        """The setting that caps what one fetch brings per partition."""
        return "max.partition.fetch.bytes" if self.new_consumer else "fetch.message.max.bytes"

    def behind(self) -> bool:
        """The fetcher lags by more than one fetch brings."""
        return self.max_fetcher_lag is not None and self.max_fetcher_lag > self.threshold

    def max_lag_lines(self) -> list[str]:
        source = self.metrics.max_lag_source
        return [f"{source} = {self.metrics.max_lag}"] if source is not None else []

    def threshold_line(self) -> str:
        return f"threshold {self.threshold}: {self.threshold_source}"

    def stream_lines(self, streams: Sequence[StreamComparison] | None = None) -> list[str]:
        return [stream_line(stream) for stream in (self.streams if streams is None else streams)]

    def partition_lines(self) -> list[str]:
        return [partition_line(partition) for partition in self.partitions]


def stream_line(stream: StreamComparison) -> str:
    owned = f", partitions {ranges(stream.partitions)}" if stream.partitions else ""
    owner = f" (thread {stream.owner})" if stream.owner else ""
    return f"{stream.source} = {stream.queue_size} of {stream.capacity} chunks{owner}{owned}"


def partition_line(p: PartitionComparison) -> str:
    fetcher = (
        p.fetcher_lag if p.fetcher_lag is not None else ("never fetched" if p.fetcher_source else "none")
    )
    checker = p.checker_lag if p.checker_lag is not None else "unknown"
    committed = (
        f" (hw {p.high_watermark} - committed {p.committed_offset})" if p.committed_offset is not None else ""
    )
    gap = f", gap {p.gap}" if p.gap is not None else ""
    return f"{p.topic}/{p.partition}: fetcher lag {fetcher}, checker lag {checker}{committed}{gap}"


def bound_text(bound: BufferBound) -> str:
    if bound.records is not None:
        return (
            f"{bound.records} records ({bound.in_flight_records} in {bound.in_flight_chunks} chunks of "
            f"{bound.fetch_message_max_bytes} bytes at {bound.average_record_bytes:.0f} bytes per record, "
            f"+ {bound.uncommitted_records} consumed since the last auto-commit)"
        )
    return f"{bound.in_flight_bytes} bytes in {bound.in_flight_chunks} chunks (records: unknown)"
