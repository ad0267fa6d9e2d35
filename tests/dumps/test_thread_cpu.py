"""Per-thread CPU tables: real `top -H` and `ps` output of a real process read whole, and recorded
tables with given figures read to those figures.

How much CPU the spinning thread gets depends on what else the machine runs, so no test here
asserts a share measured now: the live tables are checked for what the reader takes from them
(every thread, the leader, the figure each row prints, top's last frame), and the figures are
checked on tables whose numbers are fixed.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import time
from collections.abc import Iterator

import pytest

from kafkadiag.dumps.threadcpu import ThreadCpuReader, latest_rows
from kafkadiag.model import OsThreadCpu

# One thread spins, two sleep; the child prints the spinning thread's Linux thread id.
_PROGRAM = """
import threading, time
def spin():
    print(threading.get_native_id(), flush=True)
    while True:
        pass
for _ in range(2):
    threading.Thread(target=time.sleep, args=(600,), daemon=True).start()
threading.Thread(target=spin, daemon=True).start()
time.sleep(600)
"""

PS_COMMANDS = [
    ("ps", "-L", "-o", "pid,lwp,pcpu,comm", "-p"),
    ("ps", "-Lf", "-p"),
    ("ps", "H", "-o", "pid,tid,%cpu,comm", "-p"),
]
PS_IDS = ["ps-L-o", "ps-Lf", "ps-H"]


@pytest.fixture(scope="module")
def hot_process() -> Iterator[tuple[int, int]]:
    child = subprocess.Popen([sys.executable, "-c", _PROGRAM], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        hot_tid = int(child.stdout.readline())
        time.sleep(0.5)  # the sleepers are started before the spinner prints its id
        yield child.pid, hot_tid
    finally:
        child.kill()
        child.wait()


def read_table(text: str) -> dict[int, OsThreadCpu]:
    reader = ThreadCpuReader()
    for number, line in enumerate(text.split("\n"), start=1):
        reader.feed(line, number)
    return latest_rows(tuple(reader.take()))


def run(*argv: str) -> str:
    return subprocess.run(argv, capture_output=True, text=True, check=True, timeout=30).stdout


def printed_figures(text: str, cpu_column: str) -> dict[int, list[float]]:
    """Each thread id's CPU figures as the table prints them, read by column position: the
    figures the reader must give back, whatever the machine's load made them."""
    figures: dict[int, list[float]] = {}
    columns: list[str] = []
    for line in text.split("\n"):
        cells = line.split()
        if cpu_column in cells:
            columns = cells  # a table's header
        elif not cells:
            columns = []  # a blank line ends a table (top's next frame starts with its summary)
        elif columns:
            tid_column = next(name for name in ("LWP", "TID", "PID") if name in columns)
            tid = int(cells[columns.index(tid_column)])
            figures.setdefault(tid, []).append(float(cells[columns.index(cpu_column)].replace(",", ".")))
    return figures


@pytest.mark.parametrize("command", PS_COMMANDS, ids=PS_IDS)
def test_ps_tables_give_every_thread_with_the_figure_it_prints(
    command: tuple[str, ...], hot_process: tuple[int, int]
) -> None:
    # GIVEN a real ps table of a process with four threads
    assert shutil.which("ps"), "procps ps is needed: it is the tool whose output this reads"
    pid, hot_tid = hot_process
    text = run(*command, str(pid))
    # WHEN it is read
    rows = read_table(text)
    # THEN every thread is there, with the figure its row prints
    assert set(rows) == set(printed_figures(text, "C" if "-Lf" in command else "%CPU")), text
    assert set(rows) >= {pid, hot_tid} and len(rows) == 4, text  # main, two sleepers, the spinner
    cpu_column = "C" if "-Lf" in command else "%CPU"
    for tid, printed in printed_figures(text, cpu_column).items():
        assert rows[tid].cpu_percent == printed[-1], text
    # The first thread's row carries the whole process's CPU, so it is marked and set aside.
    assert [tid for tid, row in rows.items() if row.process_leader] == [pid]


def test_top_thread_mode_keeps_the_last_frame(hot_process: tuple[int, int]) -> None:
    # GIVEN two frames of a real `top -H` of the process
    assert shutil.which("top"), "procps top is needed: it is the tool whose output this reads"
    pid, hot_tid = hot_process
    text = run("top", "-H", "-b", "-n", "2", "-d", "0.5", "-p", str(pid))
    # WHEN it is read
    rows = read_table(text)
    # THEN each thread's row is the one of the second frame, with its figure
    assert set(rows) >= {pid, hot_tid}, text
    frames = printed_figures(text, "%CPU")
    assert all(len(figures) == 2 for figures in frames.values()), text
    for tid, figures in frames.items():
        assert rows[tid].cpu_percent == figures[-1], text
    first_frame_rows = [n for n, line in enumerate(text.split("\n"), 1) if line.split()[:1] == [str(hot_tid)]]
    assert rows[hot_tid].line_no == first_frame_rows[-1]
    # top -H has one id column: it marks no leader
    assert not any(row.process_leader for row in rows.values())


# Recorded in procps-ng 4.0's layouts, with the figures fixed: a spinner and two sleepers.
RECORDED_PS_L = """\
  PID   LWP %CPU COMMAND
 4100  4100  0.4 python3
 4100  4101  0.0 python3
 4100  4102  0.0 python3
 4100  4103 97.5 python3
"""
RECORDED_PS_LF = """\
UID          PID    PPID     LWP  C NLWP STIME TTY          TIME CMD
kafka       4100    4000    4100  0    4 05:22 pts/0    00:00:00 python3 -c spin
kafka       4100    4000    4101  0    4 05:22 pts/0    00:00:00 python3 -c spin
kafka       4100    4000    4103 98    4 05:22 pts/0    00:00:12 python3 -c spin
"""
RECORDED_TOP_H = """\
top - 05:23:02 up  3:00,  0 user,  load average: 6.73, 3.56, 2.05
Threads:   4 total,   1 running,   3 sleeping,   0 stopped,   0 zombie

    PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND
   4103 kafka     20   0   26996   9280   5632 R  12,5   0.0   0:00.10 python3
   4100 kafka     20   0   26996   9280   5632 S   0,0   0.0   0:00.02 python3

top - 05:23:03 up  3:00,  0 user,  load average: 6.73, 3.56, 2.05
Threads:   4 total,   1 running,   3 sleeping,   0 stopped,   0 zombie

    PID USER      PR  NI    VIRT    RES    SHR S  %CPU  %MEM     TIME+ COMMAND
   4103 kafka     20   0   26996   9280   5632 R  99,9   0.0   0:00.60 python3
   4100 kafka     20   0   26996   9280   5632 S   0,0   0.0   0:00.02 python3
"""


def test_a_recorded_ps_table_gives_each_thread_its_figure_and_marks_the_leader() -> None:
    rows = read_table(RECORDED_PS_L)
    assert {tid: row.cpu_percent for tid, row in rows.items()} == {
        4100: 0.4,
        4101: 0.0,
        4102: 0.0,
        4103: 97.5,
    }
    assert [tid for tid, row in rows.items() if row.process_leader] == [4100]
    assert rows[4103].command == "python3" and rows[4103].line_no == 5


def test_ps_f_reads_its_c_column_as_the_figure() -> None:
    rows = read_table(RECORDED_PS_LF)
    assert {tid: row.cpu_percent for tid, row in rows.items()} == {4100: 0.0, 4101: 0.0, 4103: 98.0}
    assert rows[4103].cpu_time == "00:00:12"
    assert [tid for tid, row in rows.items() if row.process_leader] == [4100]


def test_top_h_keeps_the_last_frame_and_reads_decimal_commas() -> None:
    # The first frame is an average since the process started; the second is the last 0.5 s.
    rows = read_table(RECORDED_TOP_H)
    assert rows[4103].cpu_percent == 99.9 and rows[4103].line_no == 12
    assert rows[4100].cpu_percent == 0.0 and not rows[4100].process_leader
