"""Per-thread CPU tables read from real `top -H` and `ps` output of a real process with a hot thread."""

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


@pytest.fixture(scope="module")
def hot_process() -> Iterator[tuple[int, int]]:
    child = subprocess.Popen([sys.executable, "-c", _PROGRAM], stdout=subprocess.PIPE, text=True)
    try:
        assert child.stdout is not None
        hot_tid = int(child.stdout.readline())
        time.sleep(2)  # ps shows CPU over each thread's life: let the spin outweigh start-up
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


@pytest.mark.skipif(shutil.which("ps") is None, reason="procps ps is not installed")
@pytest.mark.parametrize(
    "command",
    [
        ("ps", "-L", "-o", "pid,lwp,pcpu,comm", "-p"),
        ("ps", "-Lf", "-p"),
        ("ps", "H", "-o", "pid,tid,%cpu,comm", "-p"),
    ],
    ids=["ps-L-o", "ps-Lf", "ps-H"],
)
def test_ps_tables_give_every_thread_and_the_hot_one(
    command: tuple[str, ...], hot_process: tuple[int, int]
) -> None:
    pid, hot_tid = hot_process
    rows = read_table(run(*command, str(pid)))
    assert set(rows) >= {pid, hot_tid}
    assert len(rows) == 4  # main, two sleepers, the spinner
    # The first thread's row carries the whole process's CPU, so it is marked and set aside.
    assert [tid for tid, row in rows.items() if row.process_leader] == [pid]
    sleepers = [row.cpu_percent for tid, row in rows.items() if tid not in (hot_tid, pid)]
    assert rows[hot_tid].cpu_percent >= 50 and max(sleepers) < 5


@pytest.mark.skipif(shutil.which("top") is None, reason="procps top is not installed")
def test_top_thread_mode_keeps_the_last_frame(hot_process: tuple[int, int]) -> None:
    pid, hot_tid = hot_process
    text = run("top", "-H", "-b", "-n", "2", "-d", "0.5", "-p", str(pid))
    rows = read_table(text)
    # top -H marks no leader (it has one id column); the spinner tops every other thread.
    others = [row.cpu_percent for tid, row in rows.items() if tid not in (hot_tid, pid)]
    assert rows[hot_tid].cpu_percent >= 25 and max(others) < rows[hot_tid].cpu_percent / 2
    # The second frame is the one kept: its row comes after the first frame's.
    first_frame_rows = [n for n, line in enumerate(text.split("\n"), 1) if line.split()[:1] == [str(hot_tid)]]
    assert rows[hot_tid].line_no == first_frame_rows[-1]
