"""Per-thread CPU tables pasted beside a dump: `top -H`, `ps -L`, `ps H`, `ps -T`.

The usual way to find a hot thread in a JVM is `top -H -p PID` (or `ps -L`), then the thread
id in hex, then the `nid=0x...` of the same thread in the dump. People paste the table next to
the dump; kafkadiag reads it and joins it to the dump's threads by OS thread id.

A table is a header naming a thread-id column (`LWP`, `TID`, `SPID`, or `PID` in top's thread
mode) and a CPU column (`%CPU`, or `C` in `ps -f`), then rows of numbers. Rows end at the first
line that is not one.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from kafkadiag.model import OsThreadCpu

_THREAD_ID_COLUMNS = ("LWP", "TID", "SPID", "PID")  # by preference: PID is top -H's thread id
_CPU_COLUMNS = ("%CPU", "C", "CPU")
_TIME_COLUMNS = ("TIME+", "TIME")
_COMMAND_COLUMNS = ("COMMAND", "CMD")
# A quote marker, a table cell bar or a log prefix in front of the table.
_LEAD = re.compile(r"^(?:\s*(?:>|\|)\s?)+")


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
            return self.table is not None
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
            cpu = float(cells[table.cpu].replace(",", "."))  # top in a locale with decimal commas
        except (ValueError, IndexError):
            return None
        time = cells[table.time] if table.time is not None and table.time < len(cells) else None
        command = cells[table.command] if table.command is not None and table.command < len(cells) else None
        leader = table.pid is not None and cells[table.pid] == cells[table.tid]
        return OsThreadCpu(tid, cpu, time, command, line_no, text, leader)


def latest_rows(rows: tuple[OsThreadCpu, ...]) -> dict[int, OsThreadCpu]:
    """One row per thread: top's last frame (its first is an average since the process started)."""
    latest: dict[int, OsThreadCpu] = {}
    for row in rows:
        latest[row.tid] = row
    return latest
