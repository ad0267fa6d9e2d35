"""KD502: threads that used the most CPU between the first and the last dump."""

from __future__ import annotations

from collections.abc import Iterator

from kafkadiag.rules import stacks
from kafkadiag.rules.base import Finding, Requirement, Rule, Severity
from kafkadiag.rules.context import AnalysisContext
from kafkadiag.rules.kd501_thread_not_moving import _cpu_share, _find, fingerprint

BUSY_SHARE = 0.5
MAX_REPORTED = 5


class BusyThreads(Rule[AnalysisContext]):
    code = "KD502"
    name = "busy-threads"
    title = "Threads using most of a CPU between dumps"
    severity = Severity.INFO
    requires = frozenset({Requirement.JAVA, Requirement.SEVERAL_DUMPS, Requirement.CPU_TIMES})
    explanation = """
JDK 11+ dumps carry each thread's CPU time (cpu=) and age (elapsed=). Between two dumps of the
same thread, the CPU time used divided by the time passed says how busy it was. A consumer thread
near 100% is CPU-bound (deserialisation, processing); one whose stack did not change at all while
it burned CPU is spinning in one place. Busy is not stuck: this is information for sizing and
for telling a hot loop from a blocked thread.
"""
    remedy = """
A CPU-bound consumer needs more partitions and threads, or cheaper processing. A thread spinning
with an unchanged stack is a busy-wait or an endless loop: read its top frames.
"""

    def check(self, context: AnalysisContext) -> Iterator[Finding]:
        series = list(context.series)
        first, last = series[0], series[-1]
        busy = []
        for thread in last.threads:
            earlier = _find(first, thread.identity)
            if earlier is None or thread.nid is None:
                continue
            share = _cpu_share(earlier, thread)
            if share is not None and share >= BUSY_SHARE:
                same = fingerprint(earlier) == fingerprint(thread)
                busy.append((share, thread, earlier, same))
        busy.sort(key=lambda item: -item[0])
        for share, thread, earlier, same in busy[:MAX_REPORTED]:
            evidence = [context.header(earlier, first), context.header(thread, last)]
            if thread.frames:
                evidence.append(context.frame(thread, 0, last))
            spinning = "; its stack did not change (spinning in one place)" if same else ""
            yield self.finding(
                f"{thread.name} used {share:.0%} of a CPU between the first and the last dump, "
                f"{stacks.doing(thread)}{spinning}.",
                [thread.name],
                evidence,
                details={"cpu_share": round(share, 3)},
            )
