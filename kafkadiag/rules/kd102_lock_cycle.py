"""KD102: a wait-for cycle in the lock graph that the dump carries no JVM report for."""

from __future__ import annotations

from collections.abc import Iterator

from kafkadiag.model import Thread
from kafkadiag.rules.base import Finding, Requirement, Rule, Severity
from kafkadiag.rules.context import AnalysisContext


class LockCycle(Rule[AnalysisContext]):
    code = "KD102"
    name = "lock-cycle"
    title = "Threads wait for each other's locks (deadlock not reported by the JVM)"
    severity = Severity.ERROR
    requires_any = frozenset({Requirement.JAVA})
    explanation = """
Following "waiting to lock" and "parking to wait for" lines to the threads that hold those
monitors and synchronizers closes a cycle: every thread in it waits for the next. The dump has no
JVM deadlock report for it - dumps taken through JMX (ThreadInfo), VisualVM or cut from a log
carry none, and the JVM does not check cycles among virtual threads. A cycle over ownable
synchronizers needs `jstack -l` to be visible at all.
"""
    remedy = """
Restart the process to recover. To fix, take these locks in one global order everywhere, or
narrow the code that holds one lock while taking another.
"""

    def check(self, context: AnalysisContext) -> Iterator[Finding]:
        dump = context.dump
        graph = context.graph()
        # Thread and lock together: names alone would match a different cycle of same-named threads.
        reported = {
            frozenset((link.thread_name, link.lock_id) for link in cycle) for cycle in dump.jvm_deadlocks
        }
        for cycle in graph.cycles():
            threads = [graph.thread(index) for index in cycle]
            names = context.labels(threads)
            members = frozenset((thread.name, _waited_lock(thread)) for thread in threads)
            if any(members <= jvm_cycle for jvm_cycle in reported):
                continue  # the JVM's report lists the threads leading into a cycle as well
            evidence = []
            steps = []
            for position, thread in enumerate(threads):
                waiting = thread.waits_for()
                holder = threads[(position + 1) % len(threads)]
                evidence.append(context.header(thread))
                if waiting is not None:
                    evidence.append(context.event(thread, waiting))
                    steps.append(
                        f"{context.label(thread)} waits for <0x{waiting.lock_id or 0:x}> "
                        f"held by {context.label(holder)}"
                    )
            yield self.finding(
                f"{len(threads)} threads wait for each other: {'; '.join(steps)}.",
                names,
                evidence,
                story=f"Threads {', '.join(names)} are deadlocked on each other's locks",
            )


def _waited_lock(thread: Thread) -> int | None:
    waiting = thread.waits_for()
    return waiting.lock_id if waiting is not None else None
