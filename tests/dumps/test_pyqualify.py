"""py-spy dumps of Python before 3.11 name methods without their class ("put", not "Queue.put").
The standard library's methods get the name 3.11 prints, so one set of rules reads both; the
dumps are captured from the same reproducer under Python 3.10 and 3.11 (fixtures/capture.py)."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkadiag.dumps import read_dumps


def python_functions(path: Path) -> dict[str, list[str]]:
    (dump,) = read_dumps(str(path))
    return {
        thread.name: [frame.function for frame in thread.frames if not frame.native]
        for thread in dump.threads
    }


@pytest.mark.parametrize("name", ["py-spy-dump.txt", "py-spy-dump.json", "py-spy-dump-locals.txt"])
def test_a_310_dump_reads_as_the_311_one(captured: Path, name: str) -> None:
    old = python_functions(captured / "py310-poll-queue-full" / name)
    new = python_functions(captured / "py-poll-queue-full" / name)
    assert "put" in (captured / "py310-poll-queue-full" / name).read_text()  # as py-spy printed it
    assert old["kafka-poll-loop"][:2] == new["kafka-poll-loop"][:2] == ["Condition.wait", "Queue.put"]
    assert old["MainThread"][:2] == new["MainThread"][:2] == ["Thread._wait_for_tstate_lock", "Thread.join"]
    assert old["group1-heartbeat"][0] == "Condition.wait"
    # application methods stay as printed: 3.10 cannot tell a method from a function
    assert new["group1-heartbeat"][1] == "HeartbeatThread.run" and old["group1-heartbeat"][1] == "run"
