"""KD501: threads that did not move at all across several dumps of one process."""

from __future__ import annotations

from collections.abc import Iterator

from kafkadiag.model import LockEventKind, Thread, ThreadDump, ThreadStatus
from kafkadiag.rules import newconsumer, queues, stacks
from kafkadiag.rules.base import Finding, Requirement, Rule, Severity
from kafkadiag.rules.context import AnalysisContext

QUEUE_PUTS = (
    "BlockingQueue.put",
    "LinkedBlockingQueue.put",
    "ArrayBlockingQueue.put",
    "LinkedBlockingDeque.put",
)
# CPU used between the first and last dump, as a share of the time between them, above which a
# thread with an unchanged stack is spinning, not stuck.
SPINNING_SHARE = 0.5


def fingerprint(thread: Thread) -> tuple[object, ...]:
    """Everything that would change if the thread made progress: every frame and its wait target."""
    waiting = thread.waits_for()
    return (
        thread.status,
        tuple(frame.text for frame in thread.frames),
        (waiting.kind, waiting.lock_id) if waiting is not None else None,
    )


def stuck_kind(thread: Thread) -> str | None:
    """Why an unchanged stack means stuck for this thread, or None when it means idle."""
    if not thread.frames or thread.status is ThreadStatus.SLEEPING:
        return None
    if thread.status is ThreadStatus.BLOCKED:
        return "blocked on a monitor"
    if (
        stacks.has_frame(thread, *QUEUE_PUTS, suffix=True)
        or queues.queue_frame(thread, queues.PUT_METHODS) is not None
    ):
        return "blocked putting into a full queue"
    if stacks.is_idle_wait(thread) or stacks.is_waiting_for_input(thread):
        return None
    if newconsumer.waits_for_network_client(thread):
        return None  # a consumer's heartbeat taking its turn on the network client's lock
    waiting = thread.waits_for()
    if (
        waiting is not None
        and waiting.kind is LockEventKind.PARKING
        and (waiting.lock_class or "").endswith(stacks.LOCK_SYNCS)
    ):
        return "waiting for a lock"
    if thread.status is ThreadStatus.RUNNABLE:
        return "running in the same place (native I/O or a loop)"
    return None


class ThreadNotMoving(Rule[AnalysisContext]):
    code = "KD501"
    name = "thread-not-moving"
    title = "Threads that did not move across dumps"
    severity = Severity.WARNING
    requires = frozenset({Requirement.JAVA, Requirement.SEVERAL_DUMPS})
    explanation = """
The same thread (same name and OS thread id) shows exactly the same stack, state and wait target
in every dump taken over time. A thread idle waiting for work does that too, so only threads that
are blocked on a monitor or a lock, blocked putting into a full queue, or running (I/O or a loop)
count. Threads that merely look alike - pool workers with identical stacks, or one thread that
waits on a different lock each time - are told apart by identity and wait target. A running
thread whose CPU time grows as fast as the clock is spinning, not stuck (see KD502).
"""
    remedy = """
These threads are where the process is stuck: read what they wait for or run in. A read that
never returns needs a timeout; a lock wait needs the holder's stack (KD105, KD106).
"""

    def check(self, context: AnalysisContext) -> Iterator[Finding]:
        series = list(context.series)
        first, last = series[0], series[-1]
        first_by_identity = {thread.identity: thread for thread in first.threads}
        for thread in last.threads:
            key = thread.identity
            if key not in first_by_identity or key[1] is None:
                continue
            why = stuck_kind(thread)
            if why is None:
                continue
            history = [_find(dump, key) for dump in series]
            if any(other is None for other in history):
                continue
            prints = {fingerprint(other) for other in history if other is not None}
            if len(prints) != 1:
                continue
            share = _cpu_share(first_by_identity[key], thread)
            if share is not None and share >= SPINNING_SHARE:
                continue
            evidence = [context.header(first_by_identity[key], first), context.header(thread, last)]
            if thread.frames:
                evidence.append(context.frame(thread, 0, last))
            span = _span(first, last)
            cpu = f"; cpu {share:.0%} of the time" if share is not None else ""
            name = context.label(thread, last)
            yield self.finding(
                f"{name} is {why}, with the same stack in all {len(series)} dumps{span}{cpu}: "
                f"{stacks.doing(thread)}.",
                [name],
                evidence,
                story=f"Thread {name} did not move in {len(series)} dumps ({why})",
            )


def _find(dump: ThreadDump, key: tuple[str, int | None]) -> Thread | None:
    for thread in dump.threads:
        if thread.identity == key:
            return thread
    return None


def _cpu_share(earlier: Thread, later: Thread) -> float | None:
    """CPU time used between two dumps as a share of the wall time between them."""
    if None in (earlier.cpu_ms, later.cpu_ms, earlier.elapsed_s, later.elapsed_s):
        return None
    wall_ms = (later.elapsed_s - earlier.elapsed_s) * 1000  # type: ignore[operator]
    if wall_ms <= 0:
        return None
    return max(0.0, (later.cpu_ms - earlier.cpu_ms) / wall_ms)  # type: ignore[operator]


def _span(first: ThreadDump, last: ThreadDump) -> str:
    if first.timestamp and last.timestamp and first.timestamp != last.timestamp:
        return f" ({first.timestamp} to {last.timestamp})"
    return ""
