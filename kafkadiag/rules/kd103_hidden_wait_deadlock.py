"""KD103: a latch/future/join wait by a thread that holds a lock its counterpart is blocked on."""

from __future__ import annotations

from collections.abc import Iterator

from kafkadiag.lockgraph import LockGraph
from kafkadiag.model import LockEventKind, Thread, ThreadDump
from kafkadiag.rules import stackindex, stacks
from kafkadiag.rules.base import Finding, Requirement, Rule, Severity
from kafkadiag.rules.context import AnalysisContext

# Waits whose counterpart the JVM cannot see: no thread "owns" a latch, a future or a join.
HIDDEN_WAITS = {
    "java.util.concurrent.CountDownLatch.await": "CountDownLatch.await",
    "java.util.concurrent.FutureTask.get": "Future.get",
    "java.util.concurrent.FutureTask.awaitDone": "Future.get",
    "java.util.concurrent.CompletableFuture.get": "CompletableFuture.get",
    "java.util.concurrent.CompletableFuture.join": "CompletableFuture.join",
    "java.util.concurrent.CompletableFuture.waitingGet": "CompletableFuture.get",
    "java.util.concurrent.CompletableFuture.timedGet": "CompletableFuture.get",
    "java.lang.Thread.join": "Thread.join",
    "java.util.concurrent.CyclicBarrier.await": "CyclicBarrier.await",
    "java.util.concurrent.Phaser.awaitAdvance": "Phaser.awaitAdvance",
    "java.util.concurrent.ExecutorService.invokeAll": "ExecutorService.invokeAll",
    "java.util.concurrent.AbstractExecutorService.invokeAll": "ExecutorService.invokeAll",
}


class HiddenWaitDeadlock(Rule[AnalysisContext]):
    code = "KD103"
    name = "hidden-wait-deadlock"
    title = "A thread waits for a latch, future or join while holding a lock others are blocked on"
    severity = Severity.ERROR
    requires = frozenset({Requirement.JAVA})
    explanation = """
A thread waits in CountDownLatch.await, Future.get, Thread.join (or a barrier) while it still
holds a monitor or lock, and other threads are blocked on that lock. If one of them is the thread
that would count the latch down, complete the future or finish, neither side can ever move: a
deadlock the JVM cannot report, because a latch or a future has no owner thread to follow. In a
consumer this is the poll thread that waits for its workers while holding a lock the workers need.
The classic outside Kafka: System.exit called while holding a monitor (from an error handler or a
signal handler). The exiting thread runs the shutdown hooks and joins each one
(ApplicationShutdownHooks.runHooks -> Thread.join); a hook that synchronizes on that monitor is
BLOCKED forever, and the process never exits.
"""
    remedy = """
Never wait for other threads while holding a lock they may need: release it before the await /
get / join, or wait with a timeout and handle it. Never call System.exit while holding a lock a
shutdown hook may take (hand the exit to a thread that holds nothing). Check whether the blocked
threads listed are the ones being waited for (their stacks show what they were about to do).
"""

    def check(self, context: AnalysisContext) -> Iterator[Finding]:
        graph = context.graph()
        if not context.dump.has_lock_data:
            yield from self._without_lock_data(context)
        for index in stackindex.positions_with(context.dump, *HIDDEN_WAITS):
            thread = context.dump.threads[index]
            wait_index = stacks.index_of(thread, *HIDDEN_WAITS)
            if wait_index is None or thread.status not in stacks.WAITING_STATUSES:
                continue
            victims = [graph.thread(victim) for victim in dict.fromkeys(graph.blocked_by(index))]
            if not victims:
                continue
            yield self._finding(context, graph, index, thread, wait_index, victims)

    def _finding(
        self,
        context: AnalysisContext,
        graph: LockGraph,
        index: int,
        thread: Thread,
        wait_index: int,
        victims: list[Thread],
    ) -> Finding:
        """The finding about one thread waiting, unseen by the JVM, while its victims wait on it."""
        waited = _waited(thread, wait_index)
        held = thread.held_locks()
        # The victims wait for the held locks that others wait for: those are contested.
        contested = [lock for lock in held if graph.waited_for_by_others(lock.lock_id, index)]
        evidence = [context.header(thread), context.frame(thread, wait_index)]
        evidence += [context.held(thread, lock) for lock in contested]
        for victim in victims[:5]:
            evidence += context.waiting(victim)
        locks = ", ".join(f"<0x{lock.lock_id:x}> ({lock.lock_class})" for lock in contested)
        victim_names = context.labels(victims)
        name = context.label(thread)
        exiting = _exit_caller(thread)
        joined = []
        if waited == "Thread.join":
            joined = joined_threads(context.dump, thread)
        certain = len(joined) == 1 and joined[0] in victims
        note = _join_note(context, thread, joined, certain) if waited == "Thread.join" else ""
        if exiting is not None:
            evidence.insert(2, context.frame(thread, exiting))
            message, story = _exit_told(name, thread.frames[exiting + 1].function, locks, victim_names, note)
        else:
            message, story = _wait_told(name, waited, locks, victim_names, note, certain)
        for other in joined[:3]:
            if other not in victims:
                evidence.append(context.header(other))
        return self.finding(
            message.rstrip(),
            [name, *victim_names, *(context.label(other) for other in joined if other not in victims)],
            evidence,
            story=story,
            details={
                "waits_in": waited,
                "shutdown_hooks": exiting is not None,
                "joined": context.labels(joined),
                "deadlock_certain": certain,
            },
        )

    def _without_lock_data(self, context: AnalysisContext) -> Iterator[Finding]:
        """Without -l, a waiter's ReentrantLocks are invisible: say what cannot be seen."""
        graph = context.graph()
        waiters = [
            thread
            for thread in context.dump.threads
            if thread.status in stacks.WAITING_STATUSES
            and stacks.index_of(thread, *HIDDEN_WAITS) is not None
            and not _main_waiting_for_shutdown(thread)
        ]
        # (Imported here: newconsumer reads this module's HIDDEN_WAITS.)
        from kafkadiag.rules.newconsumer import waits_for_network_client

        # A consumer's heartbeat thread parked on its network client's lock waits its turn for the
        # network, which only the client's own threads hold, never a waiter of the application: real
        # kafka-clients 4.1.1 stopping (fixtures/captured/real-new-consumer-close-hang-4.1.1/jstack.txt)
        # had it named beside the shutdown hook that joins the poll thread.
        orphans = [
            graph.thread(index)
            for index in graph.parked_without_holder(stacks.LOCK_SYNCS)
            if not waits_for_network_client(graph.thread(index))
        ]
        if not waiters or not orphans:
            return
        evidence = []
        for thread in waiters[:3] + orphans[:3]:
            evidence += context.waiting(thread)
        yield self.finding(
            f"{', '.join(context.labels(waiters))} wait{'s' if len(waiters) == 1 else ''} for a latch, "
            f"future or join while {', '.join(context.labels(orphans))} "
            f"{'is' if len(orphans) == 1 else 'are'} parked on a lock whose holder this dump cannot show "
            "(no lock data). If a waiter holds that lock, it is a deadlock the JVM cannot see; take "
            "jstack -l to know.",
            [*context.labels(waiters), *context.labels(orphans)],
            evidence,
            severity=Severity.INFO,
        )


# A HotSpot dump prints a thread's header without the address of its Thread object, so a join's
# target shows only through the object's class: a Thread subclass names itself in "- waiting on
# <T> (a com.example.Hook)", and the thread running it has com.example.Hook.run in its stack.
_JOIN_IDENTITY = (
    "The dump cannot show which thread a join waits for (a thread's header does not carry its "
    "Thread object's address); the link is the lock they share."
)


def joined_threads(dump: ThreadDump, joiner: Thread) -> list[Thread]:
    """The threads a Thread.join may wait for, when the joined object's class tells: those running
    that class's run(). Empty for a plain java.lang.Thread, whose run() every thread has."""
    event = joiner.waits_for()
    if event is None or event.kind is not LockEventKind.WAITING_ON:
        return []
    if event.lock_class in (None, "java.lang.Thread"):
        return []
    runners = stackindex.threads_with(dump, f"{event.lock_class}.run")
    return [thread for thread in runners if thread is not joiner]


def _join_note(context: AnalysisContext, joiner: Thread, joined: list[Thread], certain: bool) -> str:
    event = joiner.waits_for()
    joined_class = event.lock_class if event is not None else None
    if not joined:
        return _JOIN_IDENTITY
    if len(joined) > 1:
        return (
            f"The Thread object it joins is a {joined_class}, which {', '.join(context.labels(joined))} "
            "run; which of them it joins the dump cannot show."
        )
    target = context.label(joined[0])
    if certain:
        return (
            f"The Thread object it joins is a {joined_class}, and {target} is the only thread running "
            f"{joined_class}.run: the thread it waits for is blocked on the lock it holds."
        )
    return (
        f"The Thread object it joins is a {joined_class}: {target}, the only thread running "
        f"{joined_class}.run, is {stacks.doing(joined[0])}."
    )


def _waited(thread: Thread, wait_index: int) -> str:
    """The API the application called: the outermost of consecutive waiting frames
    (CompletableFuture.waitingGet under CompletableFuture.join is a join)."""
    outermost = wait_index
    while outermost + 1 < len(thread.frames) and thread.frames[outermost + 1].function in HIDDEN_WAITS:
        outermost += 1
    return HIDDEN_WAITS[thread.frames[outermost].function]


def _exit_caller(thread: Thread) -> int | None:
    """Index of System.exit (or Runtime.exit) in a thread that runs the shutdown hooks, if it does.

    Runtime.exit -> Shutdown.exit -> Shutdown.runHooks -> ApplicationShutdownHooks.runHooks, which
    starts every hook and joins it (JDK 8 to 21): the thread that called exit waits for the hooks.
    """
    if stacks.index_of(thread, "java.lang.ApplicationShutdownHooks.runHooks") is None:
        return None
    exit_index = stacks.index_of(thread, "java.lang.System.exit")
    if exit_index is None:
        exit_index = stacks.index_of(thread, "java.lang.Runtime.exit")
    if exit_index is None or exit_index + 1 >= len(thread.frames):
        return None
    return exit_index


def _main_waiting_for_shutdown(thread: Thread) -> bool:
    """main() parked on a latch or join for the life of the process: an application's normal end."""
    application = [frame for frame in thread.frames if not stacks.is_library(frame)]
    return bool(application) and all(frame.function.endswith(".main") for frame in application)


def _exit_told(name: str, caller: str, locks: str, victims: list[str], note: str) -> tuple[str, str]:
    """Message and story of System.exit called with a lock held that a shutdown hook needs."""
    message = (
        f"{name} called System.exit from {caller} while holding "
        f"{locks}; the JVM runs the shutdown hooks in that thread and joins each "
        f"(ApplicationShutdownHooks.runHooks -> Thread.join), and {', '.join(victims)} "
        f"{'is' if len(victims) == 1 else 'are'} blocked on that lock. A hook that needs it "
        f"never ends, so the join never returns and the process never exits. {note}"
    )
    return message, f"System.exit in {name} waits for a shutdown hook blocked on a lock {name} holds"


def _wait_told(
    name: str, waited: str, locks: str, victims: list[str], note: str, certain: bool
) -> tuple[str, str]:
    """Message and story of a wait the JVM does not see, with a lock held that others wait for."""
    consequence = (
        "This is a deadlock the JVM cannot detect."
        if certain
        else f"If {'it' if len(victims) == 1 else 'one of them'} is what {name} waits for, "
        "this is a deadlock the JVM cannot detect."
    )
    message = (
        f"{name} waits in {waited} while holding {locks}, which "
        f"{', '.join(victims)} {'is' if len(victims) == 1 else 'are'} blocked on. "
        f"{consequence} {note}"
    ).rstrip()
    need = "needs" if len(victims) == 1 else "need"
    return message, f"Thread {name} waits in {waited} holding a lock that {', '.join(victims)} {need}"
