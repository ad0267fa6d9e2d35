"""How the old (ZooKeeper-based, Kafka 0.7 to 0.10) consumer's threads look in a dump.

ZookeeperConsumerConnector starts one ConsumerFetcherThread per broker; the fetcher puts fetched
chunks into one bounded LinkedBlockingQueue per stream (capacity queued.max.message.chunks, 2
by default) from PartitionTopicInfo.enqueue, inside AbstractFetcherThread.processFetchRequest,
which holds the fetcher's partitionMapLock (through Utils$.inLock in 0.8.0-0.8.2, CoreUtils$.inLock
from 0.9 to 1.1, a bare partitionMapLock.lock() in 0.8.0-beta1). Kafka 0.7 had no fetcher manager: a
FetcherRunnable thread ("FetchRunnable-<n>") enqueues from its run() without any lock. Each
stream is drained by application threads in ConsumerIterator.makeNext (LinkedBlockingQueue.take).
One stream that is not drained fills its queue, the fetcher blocks in put (holding the lock from
0.8 on), and every other stream of that fetcher starves. Kafka's classes are matched by suffix,
so the frames of Scala objects (`Utils$.inLock`, `CoreUtils$.inLock`) match too.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from kafkadiag.model import Thread, ThreadDump, ThreadStatus
from kafkadiag.rules import stackindex, stacks

FETCHER_NAME = re.compile(
    r"^ConsumerFetcherThread-(?P<consumer_id>.+)-(?P<fetcher_id>\d+)-(?P<broker_id>-?\d+)$"
)
# consumerId = <group>_<host>-<start millis>-<uuid8> (ZookeeperConsumerConnector)
CONSUMER_ID = re.compile(r"^(?P<group>.+)_(?P<host>[^_]+)-(?P<started>\d+)-(?P<uuid>[0-9a-f]{8})$")

ENQUEUE = ("PartitionTopicInfo.enqueue", "ConsumerFetcherThread.processPartitionData")
# Kafka 0.7's fetcher thread ("FetchRunnable-<n>"): enqueues from run(), holding no lock.
FETCHER_RUNNABLE_RUN = ("kafka.consumer.FetcherRunnable.run",)
# Kafka 0.8 to 0.10: processFetchRequest holds partitionMapLock while it hands data to the streams.
PROCESS_FETCH_REQUEST = ("AbstractFetcherThread.processFetchRequest",)
QUEUE_PUT = ("LinkedBlockingQueue.put", "ArrayBlockingQueue.put", "LinkedBlockingQueue.offer")
QUEUE_TAKE = ("LinkedBlockingQueue.take", "LinkedBlockingQueue.poll", "ArrayBlockingQueue.take")
MAKE_NEXT = ("ConsumerIterator.makeNext",)
ITERATOR_FRAMES = (
    "ConsumerIterator.makeNext",
    "ConsumerIterator.next",
    "IteratorTemplate.maybeComputeNext",
    "IteratorTemplate.hasNext",
    "IteratorTemplate.next",
)
PARKED = frozenset({ThreadStatus.PARKED, ThreadStatus.PARKED_TIMED})


@dataclass(frozen=True)
class BlockedFetcher:
    thread: Thread
    put_index: int
    enqueue_index: int
    consumer_id: str | None
    group: str | None
    broker_id: str | None


def blocked_fetchers(dump: ThreadDump) -> list[BlockedFetcher]:
    """Fetcher threads parked putting a chunk into a full stream queue."""
    found = []
    for thread in stackindex.threads_with(dump, *ENQUEUE, suffix=True):
        enqueue_index = stacks.index_of(thread, *ENQUEUE, suffix=True)
        if enqueue_index is None or thread.status not in PARKED:
            continue
        put_index = stacks.index_of(thread, *QUEUE_PUT, suffix=True)
        if put_index is None or put_index > enqueue_index:
            continue
        name = FETCHER_NAME.match(thread.name)
        consumer_id = name["consumer_id"] if name else None
        group_match = CONSUMER_ID.match(consumer_id) if consumer_id else None
        found.append(
            BlockedFetcher(
                thread,
                put_index,
                enqueue_index,
                consumer_id,
                group_match["group"] if group_match else None,
                name["broker_id"] if name else None,
            )
        )
    return found


def starving_streams(dump: ThreadDump) -> list[tuple[Thread, int]]:
    """Stream threads parked in LinkedBlockingQueue.take under ConsumerIterator.makeNext."""
    found = []
    for thread in stackindex.threads_with(dump, *MAKE_NEXT, suffix=True):
        make_next = stacks.index_of(thread, *MAKE_NEXT, suffix=True)
        if make_next is None or thread.status not in PARKED:
            continue
        take = stacks.index_of(thread, *QUEUE_TAKE, suffix=True)
        if take is not None and take < make_next:
            found.append((thread, take))
    return found


def stream_loop_functions(streams: list[tuple[Thread, int]]) -> set[str]:
    """The application functions that iterate the streams (the frame below the iterator)."""
    loops = set()
    for thread, _ in streams:
        last_iterator = max(
            (i for i, frame in enumerate(thread.frames) if frame.function.endswith(ITERATOR_FRAMES)),
            default=None,
        )
        if last_iterator is None:
            continue
        application = stacks.first_application_frame(thread, last_iterator + 1)
        if application is not None:
            loops.add(thread.frames[application].function)
    return loops


def undrained_stream_threads(dump: ThreadDump, streams: list[tuple[Thread, int]]) -> list[tuple[Thread, int]]:
    """Threads running a stream loop but not waiting for data: they stopped draining their queue.

    Returns each with the index of its loop frame.
    """
    loops = stream_loop_functions(streams)
    if not loops:
        return []
    starving = {id(thread) for thread, _ in streams}  # by identity: names may repeat
    culprits = []
    for thread in stackindex.threads_with(dump, *sorted(loops)):
        if id(thread) in starving:
            continue
        loop_index = stacks.index_where(thread, lambda frame: frame.function in loops)
        if loop_index is None or stacks.has_frame(thread, *MAKE_NEXT, suffix=True):
            continue
        culprits.append((thread, loop_index))
    return culprits
