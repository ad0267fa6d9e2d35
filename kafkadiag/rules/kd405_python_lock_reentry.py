"""KD405: a Python thread re-entering a non-reentrant lock it already holds."""

from __future__ import annotations

from collections.abc import Iterator

from kafkadiag.rules import python
from kafkadiag.rules.base import Finding, Requirement, Rule, Severity
from kafkadiag.rules.context import AnalysisContext
from kafkadiag.rules.kd404_python_lock_order_inversion import blocked_acquiring


class PythonLockReentry(Rule):
    code = "KD405"
    name = "python-lock-reentry"
    title = "Python thread re-entering a lock it holds"
    severity = Severity.ERROR
    requires = frozenset({Requirement.PYTHON, Requirement.PYSPY_LOCALS})
    explanation = """
The thread is stopped in a method that appears twice in its own stack on the same object (the
same `self`), and it is not running: the inner call is waiting for a lock the outer call on the
same object already took. threading.Lock is not reentrant, so the thread waits for itself forever.
A cache's get() that calls load() that calls get() again is the classic case.
"""
    remedy = """
Use threading.RLock for locks that a method may take again through a call chain, or restructure
so the lock is not held across the call that re-enters (compute outside the lock, then store).
"""

    def check(self, context: AnalysisContext) -> Iterator[Finding]:
        for thread in context.dump.threads:
            if not blocked_acquiring(thread):
                continue
            frames = python.python_frames(thread)
            top_index, top = frames[0]
            top_self = python.self_address(top)
            if top_self is None:
                continue
            outer = next(
                (
                    index
                    for index, frame in frames[1:]
                    if frame.function == top.function and python.self_address(frame) == top_self
                ),
                None,
            )
            if outer is None:
                continue
            yield self.finding(
                f"{thread.name} is stopped in {top.function} on the object at 0x{top_self:x}, which it "
                f"already entered further down its stack: it waits for a lock it holds itself.",
                [thread.name],
                [context.header(thread), context.frame(thread, top_index), context.frame(thread, outer)],
                story=f"Thread {thread.name} waits for a lock it already holds ({top.function} re-entered)",
            )
