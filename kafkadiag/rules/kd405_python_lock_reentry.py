"""KD405: a Python thread re-entering a non-reentrant lock it already holds."""

from __future__ import annotations

from collections.abc import Iterator

from kafkadiag.model import Frame, Thread
from kafkadiag.rules import eventloop, interrupts, python
from kafkadiag.rules.base import Finding, Requirement, Rule, Severity
from kafkadiag.rules.context import AnalysisContext
from kafkadiag.rules.kd404_python_lock_order_inversion import blocked_acquiring


class PythonLockReentry(Rule[AnalysisContext]):
    code = "KD405"
    name = "python-lock-reentry"
    title = "Python thread re-entering a lock it holds"
    severity = Severity.ERROR
    requires = frozenset({Requirement.PYTHON})
    explanation = """
The thread is stopped taking a lock in a function that appears again further down its own stack:
the inner call waits for a lock the outer call already took. threading.Lock is not reentrant, so
the thread waits for itself forever. A cache's get() that calls load() that calls get() again is
the classic case; with py-spy --locals both frames are shown to be on the same object (the same
`self`). The other classic needs no call chain at all: a signal handler (CPython runs it in the
main thread, on top of whatever that thread was doing) or a `__del__` finalizer that logs or
takes a lock while the code it interrupted holds that lock - a logging Handler guarded by a
threading.Lock, with SIGTERM arriving inside its emit(), is the usual one. Without --locals, the
rule reports only this second kind, where a frame entered asynchronously (a signal handler, a
finalizer) sits between the two calls; it is then a warning, because the dump cannot show that
the two calls are on the same object. --native shows the interpreter's signal dispatch under the
handler, --locals its (signum, frame) arguments; otherwise the handler is known by its name.
Either way the outer call must be stopped at a later line than the inner one (inside its critical
section): two calls stopped at the same line wait in the same call (a socket read interrupted and
re-entered by a signal handler), not for each other.
"""
    remedy = """
Use threading.RLock for locks that a method may take again through a call chain, or restructure
so the lock is not held across the call that re-enters (compute outside the lock, then store).
Do not log, print or take locks in signal handlers or __del__: set a flag (or an Event, or
loop.add_signal_handler in asyncio) and act on it from the main loop.
"""

    def check(self, context: AnalysisContext) -> Iterator[Finding]:
        for thread in context.dump.threads:
            finding = self._same_object(context, thread) or self._entered_asynchronously(context, thread)
            if finding is not None:
                yield finding

    def _same_object(self, context: AnalysisContext, thread: Thread) -> Finding | None:
        """With --locals: the same method twice on the same `self`."""
        if not blocked_acquiring(thread):
            return None
        frames = python.python_frames(thread)
        top_index, top = frames[0]
        top_self = python.self_address(top)
        if top_self is None:
            return None
        outer = next(
            (
                index
                for index, frame in frames[1:]
                if frame.function == top.function and python.self_address(frame) == top_self
            ),
            None,
        )
        if outer is None or not _outer_is_past_the_acquire(thread, top_index, outer):
            return None
        entry = _entry_between(thread, top_index, outer)
        how = (
            f", re-entered through the {entry.kind} {thread.frames[entry.frame_index].function}"
            if entry
            else ""
        )
        evidence = [context.header(thread), context.frame(thread, top_index)]
        if entry:
            evidence.append(context.frame(thread, entry.frame_index))
        evidence.append(context.frame(thread, outer))
        return self.finding(
            f"{thread.name} is stopped in {top.function} on the object at 0x{top_self:x}, which it "
            f"already entered further down its stack{how}: it waits for a lock it holds itself.",
            [thread.name],
            evidence,
            story=f"Thread {thread.name} waits for a lock it already holds ({top.function} re-entered)",
        )

    def _entered_asynchronously(self, context: AnalysisContext, thread: Thread) -> Finding | None:
        """Without the same `self` to compare: the lock-taking function twice, a signal handler
        or a finalizer between the two calls."""
        taker = interrupts.lock_taking_index(thread)
        if taker is None:
            return None
        function = thread.frames[taker]
        outer = next(
            (
                index
                for index in range(taker + 1, len(thread.frames))
                if thread.frames[index].function == function.function
                and thread.frames[index].file == function.file
            ),
            None,
        )
        if outer is None or not _outer_is_past_the_acquire(thread, taker, outer):
            return None
        entry = _entry_between(thread, taker, outer)
        if entry is None:
            return None
        inner_self, outer_self = python.self_address(function), python.self_address(thread.frames[outer])
        if inner_self is not None and outer_self is not None and inner_self != outer_self:
            return None  # --locals shows two objects: two locks, not one taken twice
        same_object = inner_self is not None and inner_self == outer_self
        handler = thread.frames[entry.frame_index]
        known = f"known as one by {entry.shown_by}"
        caveat = _caveat(thread, function, same_object)
        evidence = [context.header(thread)]
        evidence += [
            context.frame(thread, index) for index in _quoted_frames(thread, taker, entry.frame_index, outer)
        ]
        return self.finding(
            f"{thread.name} is stopped taking a lock in {function.text.strip()}, inside the {entry.kind} "
            f"{handler.text.strip()} ({known}), which interrupted {thread.frames[outer].text.strip()} "
            f"further down the same stack - the same function, which still holds the lock it took: the "
            f"thread waits for itself.{caveat}",
            [thread.name],
            evidence,
            severity=Severity.ERROR if same_object else Severity.WARNING,
            story=(
                f"Thread {thread.name} waits for a lock it already holds: its {entry.kind} "
                f"{handler.function} re-entered {function.function}"
            ),
            details={
                "function": function.function,
                "entered_by": entry.kind,
                "handler": handler.function,
                "shown_by": entry.shown_by,
                "confidence": "same object shown by --locals" if same_object else "same function",
            },
        )


def _caveat(thread: Thread, function: Frame, same_object: bool) -> str:
    """What the dump cannot show when --locals does not prove both calls are on one object."""
    if same_object:
        return ""
    if any(frame.locals for frame in thread.frames):
        return (
            f" {function.function} has no `self` to compare, so the dump cannot show that both calls "
            "take the same lock."
        )
    return (
        " py-spy shows no locals here, so the dump cannot show that both calls are on the same "
        "object (the same lock): capture with --locals to confirm."
    )


def _quoted_frames(thread: Thread, taker: int, handler: int, outer: int) -> list[int]:
    """The frames a finding quotes: the lock-taking call, the handler, the call it interrupted and,
    with --native, the C lock acquire on top and the C function that called the handler."""
    quoted = {taker, handler, outer}
    acquire = next(
        (i for i in range(taker) if thread.frames[i].function in interrupts.LOCK_ACQUIRE_NATIVE), None
    )
    quoted |= {
        index
        for index in (acquire, handler + 1)
        if index is not None and index < len(thread.frames) and eventloop.is_native(thread.frames[index])
    }
    return sorted(quoted)


def _outer_is_past_the_acquire(thread: Thread, inner: int, outer: int) -> bool:
    """The outer call holds the lock only if it got past the line where the inner one waits: a
    `with lock:` body runs at later lines. Stopped at the same line, both wait in one call (a
    socket read re-entered by a signal handler), and --native frames without a lock acquire say
    the inner one is not acquiring at all."""
    if thread.frames[inner].line == thread.frames[outer].line:
        return False
    natives = thread.frames[:inner]
    if any(eventloop.is_native(frame) for frame in natives):
        return any(frame.function in interrupts.LOCK_ACQUIRE_NATIVE for frame in natives)
    return True


def _entry_between(thread: Thread, inner: int, outer: int) -> interrupts.AsyncEntry | None:
    """The innermost frame entered asynchronously between frames `inner` and `outer`."""
    for index in range(inner + 1, outer):
        if eventloop.is_native(thread.frames[index]):
            continue
        entry = interrupts.async_entry(thread, index)
        if entry is not None:
            return entry
    return None
