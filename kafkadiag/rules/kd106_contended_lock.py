"""KD106: one lock with many threads waiting for it, and who holds it."""

from __future__ import annotations

from collections.abc import Iterator

from kafkadiag.lockgraph import LockNode
from kafkadiag.rules import stacks
from kafkadiag.rules.base import Finding, Requirement, Rule, Severity
from kafkadiag.rules.context import AnalysisContext

MIN_WAITERS = 3


class ContendedLock(Rule[AnalysisContext]):
    code = "KD106"
    name = "contended-lock"
    title = "Many threads wait for one lock"
    severity = Severity.WARNING
    requires = frozenset({Requirement.JAVA})
    explanation = """
Several threads are blocked entering the same monitor (or parked on the same lock) while one
thread holds it. Everything those threads do is serialised behind the holder; if the holder does
I/O or sleeps while holding the lock, they all wait for it. In a consumer this turns a pool of
workers into one.
"""
    remedy = """
See what the holder does while holding the lock (its stack is quoted). Move slow work (I/O,
remote calls) out of the locked region, split the lock, or use a concurrent structure.
"""

    def check(self, context: AnalysisContext) -> Iterator[Finding]:
        graph = context.graph()
        for node in graph.contended(MIN_WAITERS):
            if not node.holders:
                if not context.dump.has_lock_data and (node.lock_class or "").endswith(stacks.LOCK_SYNCS):
                    yield self._holder_not_visible(context, node)
                continue  # a condition or an unowned wait: idle waiting, not contention
            holder = graph.thread(node.holders[0])
            waiters = [graph.thread(i) for i in node.waiters]
            evidence = [context.header(holder)]
            held = next((lock for lock in holder.held_locks() if lock.lock_id == node.lock_id), None)
            if held is not None:
                evidence.append(context.held(holder, held))
            for waiter in waiters[:5]:
                evidence += context.waiting(waiter)
            yield self.finding(
                f"{len(waiters)} threads wait for <0x{node.lock_id:x}> ({node.lock_class}), held by "
                f"{context.label(holder)}, which is {stacks.doing(holder)}.",
                [context.label(holder), *context.labels(waiters)],
                evidence,
                story=f"{len(waiters)} threads queue behind {context.label(holder)} for one lock",
            )

    def _holder_not_visible(self, context: AnalysisContext, node: LockNode) -> Finding:
        graph = context.graph()
        waiters = [graph.thread(i) for i in node.waiters]
        evidence = []
        for waiter in waiters[:5]:
            evidence += context.waiting(waiter)
        return self.finding(
            f"{len(waiters)} threads wait for <0x{node.lock_id:x}> ({node.lock_class}); the dump has no "
            "lock data, so who holds it cannot be seen. Take the next dump with jstack -l (or jcmd "
            "Thread.print -l) to name the holder.",
            context.labels(waiters),
            evidence,
            severity=Severity.INFO,
        )
