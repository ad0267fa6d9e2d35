"""Stacks printed one after another with no line naming their thread.

`for frame in sys._current_frames().values(): traceback.print_stack(frame)` (and the greenlet
version of it that eventlet users paste) prints stack after stack, outermost frame first. GIVEN
such output from a real process with four waiting workers, with a blank line between the stacks
or with none, WHEN it is read, THEN each stack is a thread of its own: apart at the blank line, or
where a frame that only opens a stack (a thread's `_bootstrap`) follows another stack's frames.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kafkadiag.dumps import read_dumps
from kafkadiag.model import ThreadStatus

PROGRAM = """
import sys, threading, traceback

never = threading.Event()
workers = [threading.Thread(target=never.wait, name=f"w{i}", daemon=True) for i in range(4)]
for worker in workers:
    worker.start()
frames = sys._current_frames()
main = threading.main_thread().ident
for ident in [main] + [worker.ident for worker in workers]:  # main first: its stack opens with <module>
    traceback.print_stack(frames[ident], file=sys.stdout)
    if sys.argv[1] == "blank":
        print()
"""


@pytest.mark.parametrize("between", ["blank", "nothing"])
def test_every_unnamed_stack_is_a_thread(tmp_path: Path, between: str) -> None:
    printed = subprocess.run(
        [sys.executable, "-c", PROGRAM, between], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    path = tmp_path / "stacks.txt"
    path.write_text(printed)
    (dump,) = list(read_dumps(str(path)))
    assert len(dump.threads) == 5
    workers = dump.threads[1:]
    assert all(thread.frames[-1].function.endswith("_bootstrap") for thread in workers)
    assert all(thread.status is ThreadStatus.IDLE for thread in workers)
    assert dump.unparsed_count == 0
