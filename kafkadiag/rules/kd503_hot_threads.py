"""KD503: the threads a `top -H` / `ps -L` table given with the dump shows burning CPU."""

from __future__ import annotations

from collections.abc import Iterator

from kafkadiag.dumps.threadcpu import latest_rows
from kafkadiag.model import OsThreadCpu, Thread, ThreadStatus
from kafkadiag.rules import stacks
from kafkadiag.rules.base import Evidence, Finding, Requirement, Rule, Severity
from kafkadiag.rules.context import AnalysisContext

# %CPU (of one CPU) from which a thread counts as hot, and from which it saturates a CPU.
HOT_PERCENT = 50.0
SATURATED_PERCENT = 90.0
MAX_REPORTED = 5


class HotThreads(Rule):
    code = "KD503"
    name = "hot-threads"
    title = "Threads burning CPU by the top -H / ps -L table given with the dump"
    severity = Severity.WARNING
    requires = frozenset({Requirement.OS_THREAD_CPU})
    explanation = """
The usual way to find a hot thread is `top -H -p PID` (or `ps -L`), then its thread id in hex,
then the thread with that `nid=0x...` in a dump taken right after. Given the table beside the
dump, kafkadiag does the join: each thread using at least half a CPU is named with its stack. A
thread of the application that uses a whole CPU while RUNNABLE is spinning or CPU-bound: a
busy-wait, an endless loop, a runaway regular expression or deserialiser. JVM threads (GC, JIT)
that are hot point at memory pressure or compilation instead. Rows of the table that are not in
the dump (native threads, or the process's first thread, for which top may show the whole
process) are listed but blamed on nothing.
"""
    remedy = """
Read the hot thread's top frames: a busy-wait needs a blocking wait (a latch, a queue, a
condition) instead; an endless loop needs its exit condition; CPU-bound processing needs more
threads or partitions. Hot GC threads: look at the heap (jstat -gcutil, a GC log).
"""

    def check(self, context: AnalysisContext) -> Iterator[Finding]:
        dump = context.dump
        rows = latest_rows(dump.os_threads)
        by_nid = {thread.nid: thread for thread in dump.threads if thread.nid is not None}
        hot = sorted(
            (row for row in rows.values() if row.cpu_percent >= HOT_PERCENT and not row.process_leader),
            key=lambda row: (-row.cpu_percent, row.tid),
        )
        missing = []
        for row in hot[:MAX_REPORTED]:
            thread = by_nid.get(row.tid)
            if thread is None:
                missing.append(row)
                continue
            yield self._hot(context, thread, row)
        if missing:
            yield self._not_in_dump(context, missing)

    def _hot(self, context: AnalysisContext, thread: Thread, row: OsThreadCpu) -> Finding:
        evidence = [Evidence(context.dump.source, row.line_no, row.text), context.header(thread)]
        evidence += [context.frame(thread, index) for index in range(min(3, len(thread.frames)))]
        saturated = row.cpu_percent >= SATURATED_PERCENT and thread.status is ThreadStatus.RUNNABLE
        jvm_own = not thread.frames and not thread.fields.java_id
        whose = "a JVM thread (GC or JIT), " if jvm_own else ""
        alarming = saturated and not jvm_own
        return self.finding(
            f"{thread.name} (OS thread {row.tid} = nid 0x{row.tid:x}) uses {row.cpu_percent:g}% of a CPU "
            f"by the table given with the dump: {whose}{stacks.doing(thread)}.",
            [thread.name],
            evidence,
            severity=Severity.WARNING if alarming else Severity.INFO,
            story=f"one thread burns a whole CPU: {thread.name}, {stacks.doing(thread)}" if alarming else "",
            details={"tid": row.tid, "cpu_percent": row.cpu_percent, "cpu_time": row.cpu_time},
        )

    def _not_in_dump(self, context: AnalysisContext, rows: list[OsThreadCpu]) -> Finding:
        listed = ", ".join(f"{row.tid} (0x{row.tid:x}, {row.cpu_percent:g}%)" for row in rows)
        return self.finding(
            f"OS threads {listed} use CPU by the table given with the dump but are not in the dump: "
            "native threads, or the process's first thread, for which top may show the whole process.",
            [],
            [Evidence(context.dump.source, row.line_no, row.text) for row in rows],
            severity=Severity.INFO,
            details={"tids": [row.tid for row in rows]},
        )
