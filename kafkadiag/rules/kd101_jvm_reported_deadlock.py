"""KD101: the JVM itself found a deadlock ("Found one Java-level deadlock")."""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from kafkadiag.jvmreport import JvmReport, read_jvm_report
from kafkadiag.model import DeadlockLink, Thread, ThreadDump
from kafkadiag.rules.base import Evidence, Finding, Requirement, Rule, Severity
from kafkadiag.rules.context import AnalysisContext

# The lock a report line names, as the report prints it: "(object 0x..., a pkg.Class)",
# "ownable synchronizer 0x..., (a pkg.Class)", the serviceability agent's "(Object@0x..., a pkg/Class)".
_LOCK = re.compile(r"(?:object |synchronizer |Object@)(?P<address>0x[0-9a-fA-F]+),? \(?(?P<what>an? [^)]+)\)")

STACKS_MISSING = (
    "The input holds the JVM's deadlock report without the threads' stacks (no \"Java stack "
    'information for the threads listed above"): the frames that took these locks are not in it.'
)


class JvmReportedDeadlock(Rule[AnalysisContext]):
    code = "KD101"
    name = "jvm-reported-deadlock"
    title = "The JVM reports a deadlock"
    severity = Severity.ERROR
    requires = frozenset({Requirement.JAVA})
    explanation = """
HotSpot checks monitors and ownable synchronizers for wait-for cycles whenever it prints a thread
dump, and prints "Found one Java-level deadlock" for each cycle. The threads in it will never
run again: each waits for a lock another one holds. Any consumer work on those threads (a stream,
a poll loop, a rebalance) is stopped for good. The report also lists threads that only wait for a
lock a deadlocked thread holds (often first): they are stuck behind the deadlock without being
part of it, and the finding names them apart.
"""
    remedy = """
Restart the process to recover. To fix, make every code path take these locks in one global
order, or replace nested locking with a single lock or lock-free hand-off; the report names the
locks and the frames that take them.
"""

    def check(self, context: AnalysisContext) -> Iterator[Finding]:
        for links in context.dump.jvm_deadlocks:
            yield self._finding(context, read_jvm_report(links))

    def _finding(self, context: AnalysisContext, report: JvmReport) -> Finding:
        dump = context.dump
        threads = [_waiter(dump, link) for link in report.links]
        names = [
            context.label(thread) if thread is not None else link.thread_name
            for link, thread in zip(report.links, threads)
        ]
        cycle = [names[position] for position in report.cycle]
        behind = [names[position] for position in report.behind]
        missing = [link.thread_name for link, thread in zip(report.links, threads) if thread is None]
        message = _message(report, names)
        if not dump.threads:
            message += " " + STACKS_MISSING
        elif missing:
            message += (
                f" The input holds no stack for {', '.join(missing)}; the report's lines are quoted instead."
            )
        return self.finding(
            message,
            cycle or names,
            _evidence(context, report, threads),
            story=_story(cycle, behind, names),
            details={
                "cycle": cycle,
                "blocked_behind": behind,
                "edges": [
                    {"thread": link.thread_name, "waiting_for": link.waiting_for, "held_by": link.held_by}
                    for link in report.links
                ],
                "stacks_not_in_input": missing,
            },
        )


def _story(cycle: Sequence[str], behind: Sequence[str], names: Sequence[str]) -> str:
    if not cycle:
        return f"The JVM reports a deadlock that the input shows only in part ({', '.join(names)} wait in it)"
    story = f"The JVM reports a deadlock between {', '.join(cycle)}"
    if behind:
        story += f"; {', '.join(behind)} {'is' if len(behind) == 1 else 'are'} blocked behind it"
    return story


def _message(report: JvmReport, names: Sequence[str]) -> str:
    """The report's own edges: the cycle first, then the threads waiting into it."""
    if not report.cycle:
        # The lines given do not lead back to a thread they list (a report cut short): the edges
        # are stated as printed, no cycle is named.
        edges = _edges(report, names, range(len(report.links)))
        return f"The JVM reports a deadlock; the lines given do not close its cycle: {edges}."
    message = (
        f"The JVM found a deadlock of {len(report.cycle)} threads: {_edges(report, names, report.cycle)}."
    )
    if report.behind:
        message += (
            f" Also blocked behind the deadlock, not part of it: {_edges(report, names, report.behind)}."
        )
    if report.unresolved:
        message += f" The report also lists: {_edges(report, names, report.unresolved)}."
    return message


def _edges(report: JvmReport, names: Sequence[str], positions: Sequence[int]) -> str:
    steps = []
    for position in positions:
        link = report.links[position]
        holder = report.holders[position]
        held_by = names[holder] if holder is not None else link.held_by
        steps.append(f"{names[position]} waits for {_lock_words(link)} held by {held_by}")
    return "; ".join(steps)


def _lock_words(link: DeadlockLink) -> str:
    """`<0x00000006b0563fe8> (a java.util.LinkedList)`, as the report's line names the lock."""
    named = _LOCK.search(link.waiting_for)
    if named is None:
        return f'"{link.waiting_for}"' if link.waiting_for else "a lock"
    return f"<{named['address']}> ({named['what']})"


def _evidence(
    context: AnalysisContext, report: JvmReport, threads: Sequence[Thread | None]
) -> list[Evidence]:
    """The report's lines for each thread, then the thread's own header and wait line: the cycle's
    threads first, then those behind it, as the message names them."""
    dump = context.dump
    evidence: list[Evidence] = []
    for position in (*report.cycle, *report.behind, *report.unresolved):
        link, thread = report.links[position], threads[position]
        if link.lines:
            evidence.extend(Evidence(dump.source, line.line_no, line.text) for line in link.lines)
        else:
            evidence.append(Evidence(dump.source, None, f'"{link.thread_name}": {link.waiting_for}'))
        if thread is None:
            continue
        evidence.append(context.header(thread))
        waiting = thread.waits_for()
        if waiting is not None:
            evidence.append(context.event(thread, waiting))
    return evidence


def _waiter(dump: ThreadDump, link: DeadlockLink) -> Thread | None:
    """The thread of a deadlock link: by name, and by the lock it waits for when names repeat."""
    named = [thread for thread in dump.threads if thread.name == link.thread_name]
    if len(named) > 1 and link.lock_id is not None:
        for thread in named:
            waiting = thread.waits_for()
            if waiting is not None and waiting.lock_id == link.lock_id:
                return thread
    return named[0] if named else None
