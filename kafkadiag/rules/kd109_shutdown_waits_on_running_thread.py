"""KD109: a shutdown waits for threads of the component it stops, and they have not ended."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from typing import NamedTuple

from kafkadiag.model import Frame, Thread, ThreadDump, ThreadStatus
from kafkadiag.rules import stackindex, stacks
from kafkadiag.rules.base import Finding, Rule, Severity
from kafkadiag.rules.context import JAVA_FORMATS, PYTHON_FORMATS, AnalysisContext
from kafkadiag.rules.kd103_hidden_wait_deadlock import joined_threads
from kafkadiag.rules.kd308_producer_call_blocked import PRODUCER_WAITS
from kafkadiag.rules.python import python_frames

# Where a stop waits without a time limit for other threads to finish.
JAVA_WAITS = {
    "java.util.concurrent.CountDownLatch.await": "CountDownLatch.await",
    "java.lang.Thread.join": "Thread.join",
}
PYTHON_WAIT_METHODS = frozenset({"join", "_wait_for_tstate_lock"})
# An untimed wait: a timed one gives up by itself.
UNTIMED_JAVA = frozenset({ThreadStatus.PARKED, ThreadStatus.IN_OBJECT_WAIT})
# The methods that stop a component: shutdown(), stop(), close(), closeAll(), stopConnections() ...
STOPPING = re.compile(r"^(?:shutdown|stop|close|halt|destroy|terminate|dispose)(?:[A-Z_]\w*)?$")
# Runtime code says nothing about which component is stopped; application (and Kafka) code does.
JAVA_RUNTIME_PREFIXES = ("java.", "javax.", "jdk.", "sun.", "com.sun.", "scala.", "kotlin.")
PYTHON_RUNTIME_FILES = re.compile(
    r"(?:^|/)(?:threading|queue|selectors|socket|ssl|subprocess|weakref)\.py$|"
    r"(?:^|/)(?:concurrent|asyncio|multiprocessing)/|^<"
)
POOL_SHUTDOWN = ("concurrent/futures/thread.py", "shutdown")
POOL_WORKER = ("concurrent/futures/thread.py", "_worker")
# How far past the stopping method the chain is read for the component's other classes/files.
OUTER_FRAMES = 2
# More candidates than this and the dump cannot tell which of them the stop waits for.
MAX_CANDIDATES = 3


class _Stop(NamedTuple):
    """A thread waiting inside a stop: where it waits, the stopping frame, the last frame of the
    chain read for the component, and whether the stop is a Python pool's shutdown()."""

    waiter: Thread
    wait_index: int
    stop_index: int
    last_index: int
    pool_shutdown: bool


class ShutdownWaitsOnRunningThread(Rule[AnalysisContext]):
    code = "KD109"
    name = "shutdown-waits-on-running-thread"
    title = "A shutdown waits for threads of the component it stops, and they have not ended"
    severity = Severity.WARNING
    explanation = """
A thread is inside a method that stops a component (shutdown, stop, close) and waits there with
no time limit for the component's own threads to finish: a CountDownLatch they count down on
their way out (Kafka's ShutdownableThread.awaitShutdown, a server's processors), a Thread.join,
or a thread pool's shutdown(wait=True) in Python. Those threads are still in the dump, so the stop
cannot return. They finish only when they see the stop request, and a thread blocked in a socket
read without a timeout, waiting on a queue nobody feeds any more, or stuck on a lock never looks:
the shutdown hangs, and with it the process or the caller (a rebalance, a test's tear-down, a
consumer's close()). Neither side holds a lock the other needs, so no deadlock detector sees it.
One dump shows the stop waiting at that moment, not for how long: dumps a few seconds apart show
whether the named threads move (KD501). A dump does not say which threads a latch or a join waits
for: the threads named are those whose stacks run in the same component as the stopping code (its
classes and source files, narrowed by each caller in turn, and a Python pool's workers), at most
three of them.
"""
    remedy = """
Make the component's threads notice the stop: interrupt them or close the socket or selector
they block in (wakeup()), put a stop marker in the queue they take from, give blocking calls a
timeout and check the running flag after each. Wait for them with a timeout and report those
that do not finish, instead of waiting forever.
"""

    def check(self, context: AnalysisContext) -> Iterator[Finding]:
        dump = context.dump
        java = dump.format in JAVA_FORMATS
        if not java and dump.format not in PYTHON_FORMATS:
            return
        places: _Places | None = None  # built once, for the first waiter found
        # A Java waiter is in one of the waits; a Python one needs its frames read.
        waiters = stackindex.threads_with(dump, *JAVA_WAITS) if java else dump.threads
        for thread in waiters:
            wait_index = _java_wait(thread) if java else _python_wait(thread)
            if wait_index is None:
                continue
            stop_index = _stopping_frame(thread, wait_index)
            if stop_index is None:
                continue
            if java and stacks.index_of(thread, *PRODUCER_WAITS) is not None:
                continue  # flush() or Future.get(): it waits for the producer's I/O thread (KD308)
            last_index = _application_frame_after(thread, stop_index, java)
            stop = _Stop(
                thread, wait_index, stop_index, last_index, not java and _has_frame(thread, POOL_SHUTDOWN)
            )
            places = places or _Places(dump, java)
            candidates = _component_threads(dump, stop, places, java)
            if not candidates or len(candidates) > MAX_CANDIDATES:
                continue
            if java and _holds_what_they_wait_for(thread, candidates):
                continue  # a lock between them: KD103 reports that deadlock
            yield self._finding(context, stop, candidates, java)

    def _finding(
        self, context: AnalysisContext, stop: _Stop, candidates: Sequence[Thread], java: bool
    ) -> Finding:
        waiter = stop.waiter
        waited = (
            JAVA_WAITS.get(waiter.frames[stop.wait_index].function, "Thread.join") if java else "Thread.join"
        )
        if stop.pool_shutdown:
            waited = "ThreadPoolExecutor.shutdown(wait=True)"
        # The outermost stopping method read names the component best: close() over a pool's
        # shutdown(), SocketServer.shutdown over its processors' shutdown.
        stopping = next(
            frame.function
            for frame in reversed(waiter.frames[stop.stop_index : stop.last_index + 1])
            if STOPPING.match(frame.method)
        )
        name = context.label(waiter)
        names = context.labels(candidates)
        doing = "; ".join(f"{label} is {stacks.doing(other)}" for label, other in zip(names, candidates))
        evidence = [context.header(waiter), context.frame(waiter, stop.wait_index)]
        evidence.append(context.frame(waiter, stop.stop_index))
        for other in candidates:
            evidence.append(context.header(other))
            if other.frames:
                evidence.append(context.frame(other, 0))
        return self.finding(
            f"{name} waits in {waited} inside {stopping} for threads of the component it stops, and "
            f"{'it has' if len(candidates) == 1 else 'they have'} not ended: {doing}. The stop returns "
            f"only when {'it leaves its' if len(candidates) == 1 else 'they leave their'} loop; one "
            "that never sees the stop request (blocked without a timeout, waiting for work that no "
            "longer comes) hangs the shutdown for good.",
            [name, *names],
            evidence,
            # One dump shows the stop waiting, not that it waits for good: "hangs" needs dumps over time.
            story=f"A shutdown waits: {name} waits in {stopping} for {', '.join(names)}, not ended yet",
            details={"waits_in": waited, "stopping": stopping, "waited_for": names},
        )


def _java_wait(thread: Thread) -> int | None:
    if thread.status not in UNTIMED_JAVA:
        return None
    return stacks.index_of(thread, *JAVA_WAITS)


def _python_wait(thread: Thread) -> int | None:
    if thread.status not in (ThreadStatus.IDLE, ThreadStatus.UNKNOWN) and thread.active is not False:
        return None
    for index, frame in python_frames(thread)[:4]:  # --native interleaves the interpreter's C frames
        if frame.method in PYTHON_WAIT_METHODS and (frame.file or "").endswith("threading.py"):
            return index
    return None


def _stopping_frame(thread: Thread, wait_index: int) -> int | None:
    """The innermost caller of the wait that stops something, within a few frames of it."""
    read = 0
    for index in range(wait_index + 1, len(thread.frames)):
        frame = thread.frames[index]
        if frame.native:
            continue
        if STOPPING.match(frame.method):
            return index
        read += 1
        if read >= 7:
            break
    return None


class _Places:
    """The threads running in each place (`_place` of their frames), read once for every waiter:
    a dump of many stopping threads must not be scanned once per waiter and caller."""

    def __init__(self, dump: ThreadDump, java: bool) -> None:
        # Read per distinct stack: the threads sharing a stack share its places.
        positions_in: dict[tuple[str, str], list[list[int]]] = {}
        for frames, positions in stackindex.stack_index(dump).shared_stacks():
            for place in {place for frame in frames if (place := _place(frame, java)) is not None}:
                positions_in.setdefault(place, []).append(positions)
        threads = dump.threads
        self.threads_in: dict[tuple[str, str], list[Thread]] = {
            place: [threads[position] for position in stackindex.in_dump_order(sharing)]
            for place, sharing in positions_in.items()
        }

    def running_in(self, place: tuple[str, str], besides: Thread) -> list[Thread]:
        return [thread for thread in self.threads_in.get(place, ()) if thread is not besides]


def _component_threads(dump: ThreadDump, stop: _Stop, places: _Places, java: bool) -> list[Thread]:
    """Threads running in the component the waiter stops, narrowed by each caller in turn."""
    waiter = stop.waiter
    hints: list[list[Thread]] = []
    if java and waiter.frames[stop.wait_index].function == "java.lang.Thread.join":
        # the joined Thread subclass's run(), when it tells
        hints.append(joined_threads(dump, waiter))
    if stop.pool_shutdown:
        hints.append(
            [thread for thread in dump.threads if thread is not waiter and _has_frame(thread, POOL_WORKER)]
        )
    for frame in waiter.frames[stop.wait_index + 1 : stop.last_index + 1]:
        place = _place(frame, java)
        if place is not None:
            hints.append(places.running_in(place, besides=waiter))
    chosen: list[Thread] = []
    for hint in hints:
        if not hint:
            continue
        in_hint = {id(thread) for thread in hint}
        narrowed = [thread for thread in chosen if id(thread) in in_hint]
        chosen = list(hint) if not chosen else narrowed or chosen
    busy = [thread for thread in chosen if not _idle(thread, java)]
    return busy or chosen


def _application_frame_after(thread: Thread, stop_index: int, java: bool) -> int:
    """The last frame of the chain read: the stopping frame, or past it the first application
    frames (a pool's shutdown() is runtime code; the close() that called it names the component)."""
    seen = 0
    last = stop_index
    for index in range(stop_index, min(len(thread.frames), stop_index + 6)):
        if _place(thread.frames[index], java) is not None:
            last = index
            seen += 1
            if seen > OUTER_FRAMES:
                break
    return last


def _place(frame: Frame, java: bool) -> tuple[str, str] | None:
    """Where a frame's code lives, as far as a dump tells: (package, source file) for Java, the
    file for Python; None for the runtime's code, which every component runs."""
    if java:
        if frame.function.startswith(JAVA_RUNTIME_PREFIXES) or not frame.function:
            return None
        outer_class = frame.class_name.split("$", 1)[0]
        package = outer_class.rpartition(".")[0]
        return (package, frame.file or outer_class)
    file = frame.file or ""
    if frame.native or not file or PYTHON_RUNTIME_FILES.search(file):
        return None
    return ("", file)


def _has_frame(thread: Thread, place: tuple[str, str]) -> bool:
    file, method = place
    return any(frame.method == method and (frame.file or "").endswith(file) for frame in thread.frames)


def _idle(thread: Thread, java: bool) -> bool:
    if java:
        return stacks.is_idle_pool_worker(thread) or stacks.is_idle_wait(thread)
    return thread.status is ThreadStatus.IDLE


def _holds_what_they_wait_for(waiter: Thread, candidates: Sequence[Thread]) -> bool:
    held = {lock.lock_id for lock in waiter.held_locks()}
    return any((event := other.waits_for()) is not None and event.lock_id in held for other in candidates)
