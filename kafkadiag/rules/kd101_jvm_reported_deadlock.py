"""KD101: the JVM itself found a deadlock ("Found one Java-level deadlock")."""

from __future__ import annotations

from collections.abc import Iterator

from kafkadiag.model import DeadlockLink, Thread, ThreadDump
from kafkadiag.rules.base import Evidence, Finding, Requirement, Rule, Severity
from kafkadiag.rules.context import AnalysisContext


class JvmReportedDeadlock(Rule):
    code = "KD101"
    name = "jvm-reported-deadlock"
    title = "The JVM reports a deadlock"
    severity = Severity.ERROR
    requires = frozenset({Requirement.JAVA})
    explanation = """
HotSpot checks monitors and ownable synchronizers for wait-for cycles whenever it prints a thread
dump, and prints "Found one Java-level deadlock" for each cycle. The threads in it will never
run again: each waits for a lock another one holds. Any consumer work on those threads (a stream,
a poll loop, a rebalance) is stopped for good.
"""
    remedy = """
Restart the process to recover. To fix, make every code path take these locks in one global
order, or replace nested locking with a single lock or lock-free hand-off; the report names the
locks and the frames that take them.
"""

    def check(self, context: AnalysisContext) -> Iterator[Finding]:
        dump = context.dump
        for cycle in dump.jvm_deadlocks:
            members = [_waiter(dump, link) for link in cycle]
            names = [
                context.label(thread) if thread is not None else link.thread_name
                for link, thread in zip(cycle, members)
            ]
            evidence: list[Evidence] = []
            for link, thread in zip(cycle, members):
                if thread is None:
                    evidence.append(Evidence(dump.source, None, f'"{link.thread_name}": {link.waiting_for}'))
                    continue
                evidence.append(context.header(thread))
                waiting = thread.waits_for()
                if waiting is not None:
                    evidence.append(context.event(thread, waiting))
            chain = "; ".join(
                f"{name} waits for {names[(position + 1) % len(cycle)]}"
                for position, name in enumerate(names)
            )
            yield self.finding(
                f"The JVM found a deadlock of {len(cycle)} threads: {chain}.",
                names,
                evidence,
                story=f"The JVM reports a deadlock between {', '.join(names)}",
            )


def _waiter(dump: ThreadDump, link: DeadlockLink) -> Thread | None:
    """The thread of a deadlock link: by name, and by the lock it waits for when names repeat."""
    named = [thread for thread in dump.threads if thread.name == link.thread_name]
    if len(named) > 1 and link.lock_id is not None:
        for thread in named:
            waiting = thread.waits_for()
            if waiting is not None and waiting.lock_id == link.lock_id:
                return thread
    return named[0] if named else None
