"""KD201: an old consumer's fetcher is blocked putting a chunk into a full stream queue."""

from __future__ import annotations

from collections.abc import Iterator

from kafkadiag.rules import oldconsumer, stacks
from kafkadiag.rules.base import Evidence, Finding, Requirement, Rule, Severity
from kafkadiag.rules.context import AnalysisContext

REMEDY = """
Find the stream thread that is not draining its queue (KD203) and fix what holds it up. To stop
one slow topic from starving the others: give each topic its own connector
(Consumer.createJavaConsumerConnector per topic, so each gets its own fetchers), hand records to a
worker pool instead of processing them on the stream thread, and keep queued.max.message.chunks
small (raising it only delays the stall). Restarting the consumer releases the stall until the
slow stream fills its queue again.
"""


class FetcherBlockedOnFullQueue(Rule[AnalysisContext]):
    code = "KD201"
    name = "fetcher-blocked-on-full-queue"
    title = "Old consumer fetcher blocked on a full stream queue"
    severity = Severity.ERROR
    requires = frozenset({Requirement.JAVA})
    explanation = """
The old consumer's ConsumerFetcherThread fetches for every partition that broker leads and puts
each chunk into the bounded queue of the stream that owns the partition (PartitionTopicInfo.enqueue
-> LinkedBlockingQueue.put; capacity queued.max.message.chunks, 2 by default). It does so inside
processFetchRequest, holding its partition-map lock. When one stream's queue is full because its
stream thread does not take from it, put parks, and the fetcher stops fetching for all its
partitions: every other topic of that connector starves, and once a leader moves the leader finder
queues behind the lock (KD204). One dump shows the fetcher parked at one moment; a stream that only
drains slowly parks it too, between chunks. Several dumps, or the committed offsets, tell a stall
from slowness. The fetcher's MaxLag stays small (it is caught up to where it stopped) while the
committed-offset lag of every partition grows. The frames differ by release and are matched in
each, as dumps of the releases' own jars show them: Kafka 0.8.0-beta1 locks in processFetchRequest
itself, 0.8.0-0.8.2 through Utils$.inLock, 0.9 to 1.1 through CoreUtils$.inLock. Kafka 0.7's
FetcherRunnable ("FetchRunnable-<n>") enqueues holding no lock, so only its own partitions stop
(read from the 0.7.2 source: 0.7 was never published to Maven Central, so no dump of it is at
hand). KD107 reports the same chain in generic terms (any bounded put under a lock others wait
for).
"""
    remedy = REMEDY

    def check(self, context: AnalysisContext) -> Iterator[Finding]:
        for fetcher in context.cached("blocked-fetchers", context.dump, oldconsumer.blocked_fetchers):
            thread = fetcher.thread
            evidence = [
                context.header(thread),
                context.frame(thread, fetcher.put_index),
                context.frame(thread, fetcher.enqueue_index),
            ]
            parking = thread.waits_for()
            if parking is not None:
                evidence.append(context.event(thread, parking))
            lock_note = self._lock_note(context, fetcher, evidence)
            who = ""
            if fetcher.group:
                who = f" (group {fetcher.group}, broker {fetcher.broker_id})"
            yield self.finding(
                f"{thread.name}{who} is parked in {thread.frames[fetcher.put_index].function} under "
                # No thread may be the stream's at all (KAFKA-914: none among the threads quoted).
                f"{thread.frames[fetcher.enqueue_index].function}: a stream queue is full and no "
                f"thread is taking from it at this moment (KD203 looks for its stream thread). {lock_note}",
                [thread.name],
                evidence,
                story=(
                    f"The fetcher {thread.name} is blocked putting a chunk into a full stream queue, so "
                    "while it waits it fetches nothing for any of its partitions"
                ),
                details={
                    "consumer_id": fetcher.consumer_id,
                    "group": fetcher.group,
                    "broker": fetcher.broker_id,
                },
            )

    @staticmethod
    def _lock_note(
        context: AnalysisContext, fetcher: oldconsumer.BlockedFetcher, evidence: list[Evidence]
    ) -> str:
        thread = fetcher.thread
        held = [lock for lock in thread.held_locks() if "Lock" in (lock.lock_class or "")]
        if held:
            evidence.extend(context.held(thread, lock) for lock in held)
            locks = ", ".join(f"<0x{lock.lock_id:x}> ({lock.lock_class})" for lock in held)
            return f"It holds {locks}, its partition-map lock, while it waits."
        if stacks.index_of(thread, *oldconsumer.FETCHER_RUNNABLE_RUN, suffix=True) is not None:
            # Kafka 0.7: FetcherRunnable.run enqueues without any lock (the tag's source agrees).
            return (
                "Kafka 0.7's FetcherRunnable holds no lock while it enqueues: this fetcher and its "
                "partitions stop, nothing else queues behind it."
            )
        # Where Kafka holds the partition-map lock around processPartitionData: Utils$.inLock
        # (0.8.0 to 0.8.2), CoreUtils$.inLock (0.9, 0.10), or processFetchRequest itself calling
        # partitionMapLock.lock() (0.8.0-beta1).
        in_lock = stacks.index_of(thread, "inLock", suffix=True)
        if in_lock is None:
            in_lock = stacks.index_of(thread, *oldconsumer.PROCESS_FETCH_REQUEST, suffix=True)
        if thread.held_synchronizers is None:
            if in_lock is not None:
                evidence.append(context.frame(thread, in_lock))
            return (
                "The dump has no lock data (take it with jstack -l) to show the partition-map lock it "
                f"holds; its stack runs inside {thread.frames[in_lock].function.rpartition('.')[2]}, "
                "where Kafka holds that lock."
                if in_lock is not None
                else "The dump has no lock data (take it with jstack -l) to show which locks it holds."
            )
        return "It holds no ReentrantLock according to the dump."
