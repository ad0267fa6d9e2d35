"""KD503: the threads that the CPU figures given with a dump (a `top -H` / `ps -L` table, a
busy-thread script's lines, Arthas' sampling) show burning CPU."""

from __future__ import annotations

from collections.abc import Iterator

from kafkadiag.dumps.threadcpu import rows_with_threads
from kafkadiag.model import OsThreadCpu, Thread, ThreadStatus
from kafkadiag.rules import stacks
from kafkadiag.rules.base import Evidence, Finding, Requirement, Rule, Severity
from kafkadiag.rules.context import AnalysisContext

# %CPU (of one CPU) from which a thread counts as hot, and from which it saturates a CPU.
HOT_PERCENT = 50.0
SATURATED_PERCENT = 90.0
MAX_REPORTED = 5


class HotThreads(Rule[AnalysisContext]):
    code = "KD503"
    name = "hot-threads"
    title = "Threads burning CPU by the figures given with the dump (top -H, ps -L, busy-thread scripts)"
    severity = Severity.WARNING
    requires = frozenset({Requirement.OS_THREAD_CPU})
    explanation = """
The usual way to find a hot thread is `top -H -p PID` (or `ps -L`), then its thread id in hex,
then the thread with that `nid=0x...` in a dump taken right after. Given the table beside the
dump, kafkadiag does the join: each thread using at least half a CPU is named with its stack.
Scripts that do the join themselves (useful-scripts' show-busy-java-threads, home-grown ones
printing a thread's figure above its stack) and Arthas' `thread -n` (`cpuUsage=` in the header)
are read the same way. A thread of the application that uses a whole CPU while RUNNABLE is
spinning or CPU-bound: a busy-wait, an endless loop, a runaway regular expression or
deserialiser. JVM threads (GC, JIT) that are hot point at memory pressure or compilation
instead. Rows of a table that are not in the dump (native threads, or the process's first
thread, for which top may show the whole process) are listed but blamed on nothing.
"""
    remedy = """
Read the hot thread's top frames: a busy-wait needs a blocking wait (a latch, a queue, a
condition) instead; an endless loop needs its exit condition; CPU-bound processing needs more
threads or partitions. Hot GC threads: look at the heap (jstat -gcutil, a GC log).
"""

    def check(self, context: AnalysisContext) -> Iterator[Finding]:
        dump = context.dump
        hot = sorted(
            (
                (row, thread)
                for row, thread in rows_with_threads(dump.os_threads, dump.threads)
                if row.cpu_percent >= HOT_PERCENT and not row.process_leader
            ),
            key=lambda pair: (-pair[0].cpu_percent, pair[0].line_no),
        )
        missing = []
        for row, thread in hot[:MAX_REPORTED]:
            if thread is not None:
                yield self._hot(context, thread, row)
            elif row.tid:
                missing.append(row)
            # A figure alone that no thread follows is not an OS thread: nothing to list.
        if missing:
            yield self._not_in_dump(context, missing)

    def _hot(self, context: AnalysisContext, thread: Thread, row: OsThreadCpu) -> Finding:
        evidence = [Evidence(context.dump.source, row.line_no, row.text)]
        if row.line_no != thread.line_no:  # Arthas' figure is in the header itself
            evidence.append(context.header(thread))
        evidence += [context.frame(thread, index) for index in range(min(3, len(thread.frames)))]
        saturated = row.cpu_percent >= SATURATED_PERCENT and thread.status is ThreadStatus.RUNNABLE
        jvm_own = not thread.frames and not thread.fields.java_id
        whose = "a JVM thread (GC or JIT), " if jvm_own else ""
        alarming = saturated and not jvm_own
        os_thread = f" (OS thread {row.tid} = nid 0x{row.tid:x})" if row.tid else ""
        return self.finding(
            f"{thread.name}{os_thread} uses {row.cpu_percent:g}% of a CPU by the figures given with the "
            f"dump (line {row.line_no}): {whose}{stacks.doing(thread)}.",
            [thread.name],
            evidence,
            severity=Severity.WARNING if alarming else Severity.INFO,
            story=f"one thread burns a whole CPU: {thread.name}, {stacks.doing(thread)}" if alarming else "",
            details={"tid": row.tid or None, "cpu_percent": row.cpu_percent, "cpu_time": row.cpu_time},
        )

    def _not_in_dump(self, context: AnalysisContext, rows: list[OsThreadCpu]) -> Finding:
        listed = ", ".join(f"{row.tid} (0x{row.tid:x}, {row.cpu_percent:g}%)" for row in rows)
        return self.finding(
            f"OS threads {listed} use CPU by the figures given with the dump but are not in the dump: "
            "native threads, or the process's first thread, for which top may show the whole process.",
            [],
            [Evidence(context.dump.source, row.line_no, row.text) for row in rows],
            severity=Severity.INFO,
            details={"tids": [row.tid for row in rows]},
        )
