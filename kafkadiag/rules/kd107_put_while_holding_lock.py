"""KD107: a thread parked in a bounded put holds a lock other threads wait for."""

from __future__ import annotations

from collections.abc import Iterator

from kafkadiag.model import LockRef, Thread
from kafkadiag.rules import queues, stacks
from kafkadiag.rules.base import Evidence, Finding, Requirement, Rule, Severity
from kafkadiag.rules.context import AnalysisContext

# How many candidate drainers a message names before "and N more" (a pool may have hundreds).
MAX_CANDIDATES = 8


class PutWhileHoldingLock(Rule):
    code = "KD107"
    name = "put-while-holding-lock"
    title = "A thread blocked putting into a full queue holds a lock others wait for"
    severity = Severity.ERROR
    requires = frozenset({Requirement.JAVA})
    explanation = """
A thread is parked in a bounded queue's put (ArrayBlockingQueue, LinkedBlockingQueue,
LinkedBlockingDeque, a SynchronousQueue hand-off, a timed offer or a TransferQueue transfer, any
BlockingQueue implementation) while it holds a monitor or a lock, and other threads are blocked
on that lock. The put waits for the queue's consumer to take; everything behind the lock waits
for the put. If the consumer is one of the threads waiting for the lock, nobody can move: a
deadlock no JVM detector reports, because a queue has no owner. Otherwise everything behind the
lock stalls for as long as the consumer is busy elsewhere. Kafka's old consumer is one case (its
fetcher enqueues under the partition-map lock; KD201 and KD204 explain it in Kafka's terms); a
controller-style event thread that publishes to a bounded queue inside its critical section is
another. A Java dump shows the queue's class and the condition the putter waits on, never which
thread takes from that queue: the threads named as candidates are guesses by role and name.
"""
    remedy = """
Never block on a bounded queue while holding a lock: put after releasing it, or use offer with a
timeout and handle a full queue (drop, spill, back-pressure the caller) outside the critical
section. Then find what the queue's consumer is doing: the candidates listed are the threads that
take from a queue of that class.
"""

    def check(self, context: AnalysisContext) -> Iterator[Finding]:
        dump = context.dump
        graph = context.graph()
        for put in queues.bounded_puts(dump):
            putter = dump.threads[put.index]
            contested = [
                (lock, waiters)
                for lock in putter.held_locks()
                if (waiters := self._waiters(context, lock, put.index))
            ]
            if not contested:
                continue
            waiting = [graph.thread(i) for i in dict.fromkeys(i for _, ws in contested for i in ws)]
            drainers = [
                graph.thread(i)
                for i in sorted(
                    set(queues.takers(dump, put.queue_class, put.index))
                    | set(queues.same_consumer(dump, putter))
                )
                if graph.thread(i) not in waiting
            ]
            yield self._finding(context, put, putter, contested, waiting, drainers)

    @staticmethod
    def _waiters(context: AnalysisContext, lock: LockRef, putter: int) -> list[int]:
        node = context.graph().locks.get(lock.lock_id)
        if node is None:
            return []
        return [index for index in node.blocked + node.parked if index != putter]

    def _finding(
        self,
        context: AnalysisContext,
        put: queues.BoundedPut,
        putter: Thread,
        contested: list[tuple[LockRef, list[int]]],
        waiting: list[Thread],
        drainers: list[Thread],
    ) -> Finding:
        name = context.label(putter)
        method = put.method(context.dump)
        condition = (
            f" (parked on <0x{put.waits_on.lock_id:x}> (a {put.waits_on.lock_class}))"
            if put.waits_on is not None and put.waits_on.lock_id is not None
            else ""
        )
        locks = ", ".join(f"<0x{lock.lock_id:x}> ({lock.lock_class})" for lock, _ in contested)
        waiting_names = context.labels(waiting)
        evidence: list[Evidence] = [context.header(putter), context.frame(putter, put.put_frame)]
        if put.waits_on is not None:
            evidence.append(context.event(putter, put.waits_on))
        evidence += [context.held(putter, lock) for lock, _ in contested]
        for thread in waiting[:5]:
            evidence.append(context.header(thread))
            event = thread.waits_for()
            if event is not None:
                evidence.append(context.event(thread, event))
        for thread in drainers[:3]:
            evidence.append(context.header(thread))
        simple_class = put.queue_class.rpartition(".")[2]
        kafka = " or named after its consumer id" if queues.same_consumer(context.dump, putter) else ""
        if drainers:
            shown = [
                f"{context.label(thread)} ({stacks.doing(thread)})" for thread in drainers[:MAX_CANDIDATES]
            ]
            more = f" and {len(drainers) - MAX_CANDIDATES} more" if len(drainers) > MAX_CANDIDATES else ""
            candidates = (
                f"Threads taking from a queue of class {simple_class}{kafka}, possible consumers: "
                f"{'; '.join(shown)}{more}."
            )
        else:
            candidates = f"No other thread of the dump is taking from a queue of class {simple_class}."
        message = (
            f"{name} is parked in {method}{condition} while holding {locks}, which "
            f"{', '.join(waiting_names)} {'is' if len(waiting) == 1 else 'are'} waiting for. {candidates} "
            "A Java dump cannot show which thread drains which queue: if the queue's consumer is among "
            "the threads waiting for the lock, this is a deadlock; otherwise they wait until it takes again."
        )
        return self.finding(
            message,
            [name, *waiting_names, *context.labels(drainers)],
            evidence,
            story=(
                f"{name} blocks {', '.join(waiting_names)}: it holds their lock while waiting on a full "
                f"{simple_class}"
            ),
            details={
                "queue_class": put.queue_class,
                "condition": f"0x{put.waits_on.lock_id:x}"
                if put.waits_on is not None and put.waits_on.lock_id is not None
                else None,
                "locks": [f"0x{lock.lock_id:x}" for lock, _ in contested],
                "waiting": waiting_names,
                "candidate_drainers": context.labels(drainers),
            },
        )
