"""A recursion folded by the traceback module stays one thread, with its frames unfolded.

Python 3.6+ prints `[Previous line repeated N more times]` for a frame repeated more than three
times in a row. GIVEN a real process whose thread waits 60 calls deep in a recursion, its stacks
printed by traceback.print_stack under each thread's repr, WHEN the output is read, THEN that
thread is one thread, waiting, with all of its recursion's frames.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from kafkadiag.dumps import read_dumps
from kafkadiag.model import ThreadStatus

PROGRAM = """
import sys, threading, traceback

ready = threading.Event()
never = threading.Event()

def deep(n):
    if n < 60:
        return deep(n + 1)
    ready.set()
    never.wait()

threading.Thread(target=deep, args=(0,), name="w-deep", daemon=True).start()
ready.wait()
threads = {thread.ident: thread for thread in threading.enumerate()}
for ident, frame in sys._current_frames().items():
    print(threads[ident])
    traceback.print_stack(frame, file=sys.stdout)
    print()
"""


def test_a_folded_recursion_is_one_waiting_thread_with_every_frame(tmp_path: Path) -> None:
    printed = subprocess.run(
        [sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    assert "[Previous line repeated" in printed  # the fold this test is about
    path = tmp_path / "stacks.txt"
    path.write_text(printed)
    (dump,) = list(read_dumps(str(path)))
    assert sorted(thread.name for thread in dump.threads) == ["MainThread", "w-deep"]
    (deep,) = [thread for thread in dump.threads if thread.name == "w-deep"]
    assert deep.status is ThreadStatus.IDLE
    assert [frame.function for frame in deep.frames].count("deep") == 61
    assert dump.unparsed_count == 0
