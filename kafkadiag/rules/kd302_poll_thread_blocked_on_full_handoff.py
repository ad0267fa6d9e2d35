"""KD302: a consumer's poll thread is blocked putting records into a full hand-off queue."""

from __future__ import annotations

from collections.abc import Iterator

from kafkadiag.rules import newconsumer, oldconsumer, queues, stackindex, stacks
from kafkadiag.rules.base import Finding, Requirement, Rule, Severity
from kafkadiag.rules.context import AnalysisContext

QUEUE_PUTS = (
    "ArrayBlockingQueue.put",
    "LinkedBlockingQueue.put",
    "LinkedBlockingDeque.put",
    "PriorityBlockingQueue.put",
    "SynchronousQueue.put",
    "ArrayBlockingQueue.offer",
    "LinkedBlockingQueue.offer",
    "SynchronousQueue.offer",
)


class PollThreadBlockedOnFullHandoff(Rule[AnalysisContext]):
    code = "KD302"
    name = "poll-thread-blocked-on-full-handoff"
    title = "Poll thread blocked on a full hand-off queue"
    severity = Severity.ERROR
    requires = frozenset({Requirement.JAVA})
    explanation = """
The poll thread passes records to workers through a bounded queue and is parked in put (or a
timed offer): the queue is full because the workers stopped taking. While it is parked it does
not call poll(), so after max.poll.interval.ms the consumer leaves the group and rebalances start
- the stall becomes churn, and redelivered records meet the same stuck workers.
"""
    remedy = """
Find what the workers are stuck in (quoted). When the queue is full, pause the partitions
(consumer.pause) and keep polling instead of blocking in put; bound the workers' I/O with
timeouts; size the queue for bursts, not for stalls.
"""

    def check(self, context: AnalysisContext) -> Iterator[Finding]:
        dump = context.dump
        poll_threads = newconsumer.PollThreads(context)
        # Threads in a ring of puts through one channel feed each other, not workers: KD108's.
        in_ring = {
            put.index for ring in context.cached("queue-rings", dump, queues.queue_rings) for put in ring.puts
        }
        for index in stackindex.positions_with(dump, *QUEUE_PUTS, suffix=True):
            thread = dump.threads[index]
            put_index = stacks.index_of(thread, *QUEUE_PUTS, suffix=True)
            if put_index is None or thread.status not in stacks.WAITING_STATUSES or index in in_ring:
                continue
            if stacks.has_frame(thread, *oldconsumer.ENQUEUE, suffix=True):
                continue  # the old consumer's fetcher: KD201
            if not poll_threads.is_poll_thread(thread):
                continue
            workers = poll_threads.workers_of(thread)
            evidence = poll_threads.evidence(thread, put_index, workers)
            busy = (
                f" Workers not taking from it: {newconsumer.describe_workers(workers)}."
                if workers
                else " No pool worker in the dump is busy: they may have died."
            )
            yield self.finding(
                f"Poll thread {thread.name} is parked in {thread.frames[put_index].function}: the "
                f"hand-off queue is full.{busy}",
                [thread.name, *(worker.name for worker in workers)],
                evidence,
                story=f"Poll thread {thread.name} is blocked on a full hand-off queue",
            )
