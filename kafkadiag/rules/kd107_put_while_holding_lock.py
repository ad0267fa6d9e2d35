"""KD107: a thread parked in a bounded put holds a lock other threads wait for."""

from __future__ import annotations

from collections.abc import Iterator

from kafkadiag.model import LockRef, Thread
from kafkadiag.rules import newconsumer, oldconsumer, queues, stacks, untaken
from kafkadiag.rules.base import Evidence, Finding, Requirement, Rule, Severity
from kafkadiag.rules.context import AnalysisContext

# How many candidate drainers a message names before "and N more" (a pool may have hundreds).
MAX_CANDIDATES = 8


class PutWhileHoldingLock(Rule[AnalysisContext]):
    code = "KD107"
    name = "put-while-holding-lock"
    title = (
        "A thread blocked putting into a full queue holds a lock others wait for, or nothing takes from it"
    )
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
thread takes from that queue. The candidates named are guesses by role: threads that run the loop
other threads take from queues of that class in, but are busy elsewhere (as a stalled consumer
is); threads parked taking from a queue of that class are listed apart, since a full queue has
no parked taker; for Kafka, threads named after the fetcher's consumer id.

A thread parked in a bounded put that holds up nobody is reported too, as a warning, when no
thread of the dump could take from its queue: none takes from a queue of that class, none runs
in the class the queue belongs to (the caller of put, where a consumer would take), none runs a
loop other threads take in. A shutdown that enqueues one stop marker per topic into a queue whose
consumer already stopped parks so for good (KAFKA-1764: the old consumer's connector putting a
shutdown command per topic into one stream's queue). One dump cannot tell that from a consumer
busy between two takes in code the dump does not link to the queue: a second dump showing the
same put settles it. The old consumer's fetchers (KD201), poll threads handing records to
workers (KD302) and rings of puts through one channel (KD108) are left to those rules.
"""
    remedy = """
Never block on a bounded queue while holding a lock: put after releasing it, or use offer with a
timeout and handle a full queue (drop, spill, back-pressure the caller) outside the critical
section. Then find what the queue's consumer is doing: the candidates listed run the loop that
takes from queues of that class without taking now, or carry the consumer's id in their name.
When nothing takes at all, find where the consumer stopped (its thread exited, or it waits for
the putter), and never block putting into a queue whose consumer may have stopped.
"""

    def check(self, context: AnalysisContext) -> Iterator[Finding]:
        dump = context.dump
        graph = context.graph()
        if not dump.has_lock_data:
            yield from self._without_lock_data(context)
        in_ring = {
            put.index for ring in context.cached("queue-rings", dump, queues.queue_rings) for put in ring.puts
        }
        threads_of: dict[tuple[int, ...], list[Thread]] = {}

        def threads(indexes: tuple[int, ...]) -> list[Thread]:
            # Putters holding one lock share its waiters, putters into one class of queue its idle
            # takers: each list is looked up once, not once per putter.
            if indexes not in threads_of:
                threads_of[indexes] = [graph.thread(i) for i in indexes]
            return threads_of[indexes]

        waiting_for = _Waiters(context)
        for put in queues.bounded_puts(dump):
            putter = dump.threads[put.index]
            contested = [
                (lock, waiters)
                for lock in putter.held_locks()
                if (waiters := waiting_for.lock(lock, put.index))
            ]
            if not contested:
                if put.index not in in_ring and not self._explained_elsewhere(context, putter):
                    finding = untaken.finding(self, context, put)
                    if finding is not None:
                        yield finding
                continue
            waiting_indexes = waiting_for.any_of(contested, put.index)
            scan = context.cached("queue-scan", dump, queues.QueueScan)
            busy = scan.busy_consumers(scan.consumer_loops(put.queue_class), {put.index, *waiting_indexes})
            accounted = {*waiting_indexes, *busy}
            named = [i for i in scan.same_consumer(putter) if i not in accounted]
            yield self._finding(
                context,
                put,
                putter,
                contested,
                waiting=threads(tuple(waiting_indexes)),
                busy=threads(tuple(busy)),
                idle_takers=threads(scan.parked_taker_indexes(put.queue_class, put.index)),
                named=threads(tuple(named)),
            )

    @staticmethod
    def _explained_elsewhere(context: AnalysisContext, putter: Thread) -> bool:
        """The old consumer's fetcher (KD201) and a poll thread's hand-off (KD302)."""
        if stacks.has_frame(putter, *oldconsumer.ENQUEUE, suffix=True):
            return True
        return newconsumer.PollThreads(context).is_poll_thread(putter)

    def _without_lock_data(self, context: AnalysisContext) -> Iterator[Finding]:
        """Without -l, who owns a ReentrantLock is invisible: say what cannot be seen, guess nothing."""
        dump = context.dump
        graph = context.graph()
        putters = [dump.threads[put.index] for put in queues.bounded_puts(dump)]
        orphans = [graph.thread(index) for index in graph.parked_without_holder(stacks.LOCK_SYNCS)]
        if not putters or not orphans:
            return
        evidence: list[Evidence] = []
        for thread in putters[:3] + orphans[:3]:
            evidence += context.waiting(thread)
        yield self.finding(
            f"{', '.join(context.labels(putters))} {'is' if len(putters) == 1 else 'are'} parked putting "
            f"into a full queue while {', '.join(context.labels(orphans))} "
            f"{'is' if len(orphans) == 1 else 'are'} parked on a lock whose holder this dump cannot show "
            "(no lock data). If a putter holds that lock, everything behind it waits for the queue's "
            "consumer; take jstack -l to know.",
            [*context.labels(putters), *context.labels(orphans)],
            evidence,
            severity=Severity.INFO,
        )

    def _finding(
        self,
        context: AnalysisContext,
        put: queues.BoundedPut,
        putter: Thread,
        contested: list[tuple[LockRef, list[int]]],
        *,
        waiting: list[Thread],
        busy: list[Thread],
        idle_takers: list[Thread],
        named: list[Thread],
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
            evidence += context.waiting(thread)
        for thread in busy[:3]:
            evidence.append(context.header(thread))
        simple_class = put.queue_class.rpartition(".")[2]
        candidates = self._candidates(context, simple_class, busy, idle_takers, named)
        message = (
            f"{name} is parked in {method}{condition} while holding {locks}, which "
            f"{', '.join(waiting_names)} {'is' if len(waiting) == 1 else 'are'} waiting for. "
            + " ".join(candidates)
            + " A Java dump cannot show which thread drains which queue: if the queue's consumer is "
            "among the threads waiting for the lock, this is a deadlock; otherwise they wait until it "
            "takes again."
        )
        return self.finding(
            message,
            [name, *waiting_names, *context.labels(busy)],
            evidence,
            story=(
                f"Thread {name} blocks {', '.join(waiting_names)}: it holds their lock while waiting on "
                f"a full {simple_class}"
            ),
            details={
                "queue_class": put.queue_class,
                "condition": f"0x{put.waits_on.lock_id:x}"
                if put.waits_on is not None and put.waits_on.lock_id is not None
                else None,
                "locks": [f"0x{lock.lock_id:x}" for lock, _ in contested],
                "waiting": waiting_names,
                "busy_consumers": context.labels(busy),
                "idle_takers_of_other_queues": context.labels(idle_takers),
                "named_after_consumer_id": context.labels(named),
            },
        )

    def _candidates(
        self,
        context: AnalysisContext,
        simple_class: str,
        busy: list[Thread],
        idle_takers: list[Thread],
        named: list[Thread],
    ) -> list[str]:
        """The threads that may be the full queue's consumer, each kind in a sentence."""
        candidates = []
        if busy:
            candidates.append(
                f"Possible consumers busy elsewhere (they run the loop that takes from a {simple_class} "
                f"elsewhere in this dump, but are not taking): {self._described(context, busy)}."
            )
        if idle_takers:
            candidates.append(
                f"Parked taking from other queues of class {simple_class} (a full queue has no parked "
                f"taker): {self._described(context, idle_takers)}."
            )
        if named:
            candidates.append(f"Named after its consumer id: {self._described(context, named)}.")
        if not candidates:
            # KAFKA-1305's four quoted threads: "no thread of the dump" is no thread of the excerpt.
            candidates.append(
                f"No thread of the dump takes from a queue of class {simple_class}."
                + untaken.excerpt_note(context)
            )
        return candidates

    @staticmethod
    def _described(context: AnalysisContext, threads: list[Thread]) -> str:
        shown = [f"{context.label(thread)} ({stacks.doing(thread)})" for thread in threads[:MAX_CANDIDATES]]
        return "; ".join(shown) + PutWhileHoldingLock._more(threads)

    @staticmethod
    def _more(threads: list[Thread]) -> str:
        return f" and {len(threads) - MAX_CANDIDATES} more" if len(threads) > MAX_CANDIDATES else ""


class _Waiters:
    """The threads waiting for the locks putters hold, each list made once: putters behind one
    lock (a pool of producers, or a read lock's holders) share its waiters."""

    def __init__(self, context: AnalysisContext) -> None:
        self.graph = context.graph()
        self._of_lock: dict[int, tuple[list[int], frozenset[int]]] = {}
        self._of_locks: dict[tuple[tuple[int, int], ...], list[int]] = {}

    def lock(self, lock: LockRef, putter: int) -> list[int]:
        """Threads blocked or parked on `lock`, the putter itself left out."""
        kept = self._of_lock.get(lock.lock_id)
        if kept is None:
            node = self.graph.locks.get(lock.lock_id)
            waiters = [] if node is None else node.waiters
            kept = self._of_lock[lock.lock_id] = (waiters, frozenset(waiters))
        waiters, members = kept
        return [index for index in waiters if index != putter] if putter in members else waiters

    def any_of(self, contested: list[tuple[LockRef, list[int]]], putter: int) -> list[int]:
        """Threads waiting for any of the contested locks, each once, in order."""
        # A list that left the putter out is the putter's own: the putter is part of the key.
        key = tuple(
            (lock.lock_id, -1 if waiters is self._of_lock[lock.lock_id][0] else putter)
            for lock, waiters in contested
        )
        found = self._of_locks.get(key)
        if found is None:
            found = self._of_locks[key] = list(dict.fromkeys(i for _, ws in contested for i in ws))
        return found
