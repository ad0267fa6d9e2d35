"""An asyncio debug-mode log is not a thread dump, though it prints stacks.

With debug=True asyncio logs where a task was created (`source_traceback: Object created at (most
recent call last):`) above an exception's traceback, and warns of slow callbacks. GIVEN such a log
from a real process, WHEN it is read as a dump, THEN it is refused as holding no dump (exit 3 in
the CLI), the same answer a plain exception log gets, instead of two "threads" named after the
traceback headings.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kafkadiag.dumps import read_dumps
from kafkadiag.errors import NoDumpFoundError

PROGRAM = """
import asyncio, gc, logging, time

logging.basicConfig(level=logging.DEBUG)

async def fails():
    raise ValueError("boom")

async def main():
    task = asyncio.get_running_loop().create_task(fails())
    await asyncio.sleep(0.01)
    time.sleep(0.2)  # a slow callback, which debug mode warns of
    del task
    gc.collect()

asyncio.run(main(), debug=True)
"""


def test_an_asyncio_debug_log_is_no_dump(tmp_path: Path) -> None:
    log = subprocess.run(
        [sys.executable, "-c", PROGRAM], capture_output=True, text=True, timeout=60, check=True
    ).stderr
    assert "source_traceback: Object created at (most recent call last):" in log
    assert "Traceback (most recent call last):" in log
    path = tmp_path / "asyncio-debug.log"
    path.write_text(log)
    with pytest.raises(NoDumpFoundError):
        list(read_dumps(str(path)))
