"""Per-thread CPU figures given with a dump: `top -H`, `ps -L`, `ps H`, `ps -T` tables, the lines
busy-thread scripts print above each stack, Arthas' `cpuUsage=`.

The usual way to find a hot thread in a JVM is `top -H -p PID` (or `ps -L`), then the thread
id in hex, then the `nid=0x...` of the same thread in the dump. People paste the table next to
the dump; kafkadiag reads it and joins it to the dump's threads by OS thread id.

A table is a header naming a thread-id column (`LWP`, `TID`, `SPID`, or `PID` in top's thread
mode) and a CPU column (`%CPU`, or `C` in `ps -f`), then rows of numbers. Rows end at the first
line that is not one.

Scripts do the join themselves and print each busy thread's figure above its stack: useful-scripts'
show-busy-java-threads with the thread id (`[1] Busy(99.9%) thread(16581/0x40c5) stack of java
process(16495) under user(admin):`), home-grown ones often with the figure alone (`>>>> 高CPU线程
(99.9%):`), which then counts for the thread whose header follows.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import NamedTuple

from kafkadiag.model import OsThreadCpu, Thread

_THREAD_ID_COLUMNS = ("LWP", "TID", "SPID", "PID")  # by preference: PID is top -H's thread id
_CPU_COLUMNS = ("%CPU", "C", "CPU")
_TIME_COLUMNS = ("TIME+", "TIME")
_COMMAND_COLUMNS = ("COMMAND", "CMD")
# A quote marker, a table cell bar or a log prefix in front of the table.
_LEAD = re.compile(r"^(?:\s*(?:>|\|)\s?)+")
# show-busy-java-threads, current and older wording ("The stack of busy(57.0%) thread(7587/0x1da3)
# of java process(7579) of user(admin):").
_BUSY_THREAD = re.compile(r"\b[Bb]usy\((?P<cpu>\d+(?:[.,]\d+)?)%\) thread\((?P<tid>\d+)/")
# A figure alone: one percentage on a short line that speaks of CPU and ends with a colon.
_PERCENT = re.compile(r"(?<![\d.,])(?P<cpu>\d{1,3}(?:[.,]\d+)?)\s*%")
MAX_FIGURE_LINE = 120
# Arthas' `thread` command samples each thread's CPU into its header.
_ARTHAS_CPU = re.compile(r" cpuUsage=(?P<cpu>\d+(?:\.\d+)?)%")


class _Table(NamedTuple):
    columns: tuple[str, ...]
    pid: int | None  # a PID column beside the thread id column (ps -L, ps H)
    tid: int
    cpu: int
    time: int | None
    command: int | None


def _header(line: str) -> _Table | None:
    columns = tuple(_LEAD.sub("", line).split())
    if len(columns) < 2 or len(columns) > 20:
        return None
    tid = next((columns.index(name) for name in _THREAD_ID_COLUMNS if name in columns), None)
    cpu = next((columns.index(name) for name in _CPU_COLUMNS if name in columns), None)
    if tid is None or cpu is None:
        return None
    time = next((columns.index(name) for name in _TIME_COLUMNS if name in columns), None)
    command = next((columns.index(name) for name in _COMMAND_COLUMNS if name in columns), None)
    pid = columns.index("PID") if "PID" in columns and columns[tid] != "PID" else None
    return _Table(columns, pid, tid, cpu, time, command)


class ThreadCpuReader:
    """Feed every line that is not part of a dump; collect the rows of any table among them."""

    def __init__(self) -> None:
        self.table: _Table | None = None
        self.rows: list[OsThreadCpu] = []
        self.row_cut = False

    def feed(self, line: str, line_no: int) -> bool:
        """True when the line belonged to a table (a header or a row)."""
        if self.table is not None:
            row = self._row(line, line_no)
            if row is not None:
                self.rows.append(row)
                self.row_cut = len(row.text.split()) < len(self.table.columns)
                return True
            if not self.rows and line.strip() in _COMMAND_COLUMNS:
                # The header's last column, which hard wrapping put on a line of its own.
                columns = (*self.table.columns, line.strip())
                self.table = self.table._replace(columns=columns, command=len(columns) - 1)
                return True
            if self.row_cut and line.strip():
                # The rest of a row that hard wrapping cut (its TIME+ or COMMAND): skip it.
                self.row_cut = False
                return True
            self.table = None
        if "CPU" in line or " C " in line:
            self.table = _header(line)
            if self.table is not None:
                return True
        if "%" in line:
            row = _figure(line, line_no)
            if row is not None:
                self.rows.append(row)
                return True
        return False

    def take(self) -> list[OsThreadCpu]:
        rows, self.rows = self.rows, []
        return rows

    def _row(self, line: str, line_no: int) -> OsThreadCpu | None:
        table = self.table
        assert table is not None
        text = _LEAD.sub("", line).strip()
        cells = text.split(None, len(table.columns) - 1)
        if len(cells) <= table.cpu or len(cells) <= table.tid:
            return None
        try:
            tid = int(cells[table.tid])
            cpu = _percent(cells[table.cpu])
        except (ValueError, IndexError):
            return None
        time = cells[table.time] if table.time is not None and table.time < len(cells) else None
        command = cells[table.command] if table.command is not None and table.command < len(cells) else None
        leader = table.pid is not None and cells[table.pid] == cells[table.tid]
        return OsThreadCpu(tid, cpu, time, command, line_no, text, leader)


def _figure(line: str, line_no: int) -> OsThreadCpu | None:
    """A busy-thread script's line above a thread's stack, as a row."""
    text = _LEAD.sub("", line).strip()
    busy = _BUSY_THREAD.search(text)
    if busy is not None:
        return OsThreadCpu(int(busy["tid"]), _percent(busy["cpu"]), None, None, line_no, text)
    if len(text) > MAX_FIGURE_LINE or not text.endswith(":") or "cpu" not in text.casefold():
        return None  # a title for the stack below it ends with a colon
    figures = _PERCENT.findall(text)
    if len(figures) != 1:
        return None  # top's summary lines and prose comparing figures say nothing of one thread
    return OsThreadCpu(0, _percent(figures[0]), None, None, line_no, text)


def header_cpu(header: str, line_no: int) -> OsThreadCpu | None:
    """Arthas' `"name" Id=76 cpuUsage=98.54% deltaTime=203ms time=1012ms RUNNABLE`, as a row."""
    usage = _ARTHAS_CPU.search(header)
    if usage is None:
        return None
    return OsThreadCpu(0, float(usage["cpu"]), None, None, line_no, header, thread_line_no=line_no)


def _percent(text: str) -> float:
    """A CPU figure, also as a locale with decimal commas prints it (top, ps)."""
    return float(text.replace(",", "."))


def latest_rows(rows: tuple[OsThreadCpu, ...]) -> dict[int, OsThreadCpu]:
    """One row per thread: top's last frame (its first is an average since the process started).

    Figures printed with a stack have no frames to choose from: each is kept, under minus its
    line number.
    """
    latest: dict[int, OsThreadCpu] = {}
    for row in rows:
        latest[row.tid or -(row.thread_line_no or row.line_no)] = row
    return latest


def rows_with_threads(
    rows: tuple[OsThreadCpu, ...], threads: Sequence[Thread]
) -> list[tuple[OsThreadCpu, Thread | None]]:
    """Each thread's latest row with the dump's thread it gives the figure of, None when that thread
    is not in the dump: by OS thread id (`nid`), by header line, or for a figure alone the thread
    whose header follows it (at most a blank line between)."""
    by_nid: dict[int, Thread] = {}
    for thread in threads:
        if thread.nid is not None:
            by_nid.setdefault(thread.nid, thread)  # the first of a repeated nid, as printed
    by_line = {thread.line_no: thread for thread in threads}
    joined: list[tuple[OsThreadCpu, Thread | None]] = []
    for row in latest_rows(rows).values():
        if row.thread_line_no:
            joined.append((row, by_line.get(row.thread_line_no)))
        elif row.tid:
            joined.append((row, by_nid.get(row.tid)))
        else:
            joined.append((row, by_line.get(row.line_no + 1) or by_line.get(row.line_no + 2)))
    return joined
