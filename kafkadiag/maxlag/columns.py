"""The fetcher's numbers per partition, for lag reports that show them beside the checker lag.

`kafkadiag lag --pid/--jmx/--jolokia/--prometheus` compares the consumer's metrics against the lag
it has just computed and adds, to each partition of the client's group, the fetcher's lag, the gap
(checker lag - fetcher lag), the stream the partition feeds and that stream's queue fill.
"""

from __future__ import annotations

from typing import NamedTuple

from kafkadiag.lag.model import GroupLag, PartitionLag
from kafkadiag.maxlag.model import MaxLagReport


class FetcherColumns(NamedTuple):
    client_id: str
    # hw - fetch offset at the fetcher's last fetch; None: unknown, or never fetched (`fetched`).
    fetcher_lag: int | None
    fetched: bool
    # True when the JVM exposes a fetcher lag metric for this partition at all.
    measured: bool
    gap: int | None  # checker lag - fetcher lag: held by the consumer, not yet committed
    stream: str | None  # "topic/threadNo" of the stream the partition's chunks go to
    queue_size: int | None  # chunks in that stream's queue (FetchQueueSize)
    queue_capacity: int | None  # queued.max.message.chunks
    verdict: str  # the client's verdict (docs/maxlag.md)


PartitionKey = tuple[str, str, str, int]  # (group, source, topic, partition)


def fetcher_columns(report: MaxLagReport) -> dict[PartitionKey, FetcherColumns]:
    """(group, source, topic, partition) -> the fetcher's numbers, for every client matched to a
    group. Keyed by source too: a group read from ZooKeeper and Kafka is two groups in a lag report,
    and the gap was computed against one of them."""
    columns: dict[PartitionKey, FetcherColumns] = {}
    for client in report.clients:
        if client.group is None:
            continue
        queues = {f"{stream.topic}/{stream.thread_id}": stream for stream in client.streams}
        for partition in client.partitions:
            queue = queues.get(partition.stream or "")
            key = (client.group, client.group_source or "", partition.topic, partition.partition)
            columns[key] = FetcherColumns(
                client_id=client.client_id,
                fetcher_lag=partition.fetcher_lag,
                fetched=partition.fetched,
                measured=partition.fetcher_source is not None,
                gap=partition.gap,
                stream=partition.stream,
                queue_size=queue.queue_size if queue is not None else None,
                queue_capacity=queue.capacity if queue is not None else None,
                verdict=client.verdict,
            )
    return columns


def columns_of(
    columns: dict[PartitionKey, FetcherColumns], group: GroupLag, partition: PartitionLag
) -> FetcherColumns | None:
    """The fetcher's numbers for one partition row of a lag report, if the fetcher has any."""
    return columns.get((group.group, group.source, partition.topic, partition.partition))
