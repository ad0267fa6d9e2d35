"""`lag history` reads a damaged record without a traceback: each bad line is skipped with a note
naming file:line and what is wrong, and a record with nothing usable left exits 3."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kafkadiag.collect.lagrecord import RECORD_FILE, record_snapshot
from kafkadiag.collect.lagrecord_read import read_lines
from kafkadiag.lag.snapshot import CommittedOffset, GroupSnapshot, Snapshot
from tests.infra.cli import run

GOOD = Snapshot(
    taken_at_ms=1_700_000_000_000,
    sources=(("kafka", "127.0.0.1:9092"),),
    groups=(GroupSnapshot("orders", "kafka", offsets=(CommittedOffset("t", 0, 5),)),),
)


def good_line() -> dict:
    return json.loads((Path(record_with_good()) / RECORD_FILE).read_text())


def record_with_good(tmp: Path | None = None) -> str:
    import tempfile

    directory = tmp or Path(tempfile.mkdtemp())
    record_snapshot(str(directory), GOOD)
    return str(directory)


def damaged(**changes: object) -> bytes:
    document = good_line()
    document.update(changes)
    return json.dumps(document).encode() + b"\n"


VARIANTS = {
    "binary bytes": b"\xff\xfe\n",
    "a list": b"[1,2]\n",
    "taken_at_ms a string": damaged(taken_at_ms="soon"),
    "taken_at_ms null": damaged(taken_at_ms=None),
    "taken_at_ms a list": damaged(taken_at_ms=[1]),
    "sources a string": damaged(sources="zk"),
    "stats a string": damaged(stats="many"),
    "unreachable a string": damaged(unreachable="broker"),
    "errors of numbers": damaged(errors=[1]),
}


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_a_damaged_line_is_skipped_with_its_place_named(name: str, tmp_path: Path) -> None:
    record_snapshot(str(tmp_path), GOOD)
    with open(tmp_path / RECORD_FILE, "ab") as handle:
        handle.write(VARIANTS[name])
    code, out, err = run(["lag", "history", str(tmp_path), "--format", "json"])
    assert code != 4, (code, err)
    assert "Traceback" not in err
    assert f"{RECORD_FILE}:2: skipped" in err + out
    assert json.loads(out)["groups"][0]["group"] == "orders"


@pytest.mark.parametrize("name", sorted(VARIANTS))
def test_nothing_usable_left_exits_3(name: str, tmp_path: Path) -> None:
    (tmp_path / RECORD_FILE).write_bytes(VARIANTS[name])
    code, out, err = run(["lag", "history", str(tmp_path)])
    assert code == 3, (code, err)
    assert "Traceback" not in err
    assert f"{RECORD_FILE}:1: skipped" in err
    assert "lag --record" in err


def test_a_huge_line_is_passed_over_without_being_held(tmp_path: Path) -> None:
    path = tmp_path / RECORD_FILE
    with open(path, "wb") as handle:
        for _ in range(200):
            handle.write(b"x" * (1 << 20))
        handle.write(b"\n" + damaged())
    bound = 4 << 20
    with open(path, "rb") as handle:
        lines = list(read_lines(handle, bound))
    assert [number for number, _ in lines] == [1, 2]
    assert lines[0][1] is None
    assert lines[1][1] is not None and json.loads(lines[1][1])["taken_at_ms"] == GOOD.taken_at_ms
    code, out, err = run(["lag", "history", str(tmp_path), "--format", "json", "--max-json-size", "4MiB"])
    assert code != 4, err
    assert f"{RECORD_FILE}:1: skipped, not a recorded snapshot: a line longer than 4 MiB" in err, err
    assert json.loads(out)["groups"][0]["group"] == "orders"


def test_a_record_past_the_input_bound_is_refused_naming_the_option(tmp_path: Path) -> None:
    for _ in range(40):
        record_snapshot(str(tmp_path), GOOD)
    code, _, err = run(["lag", "history", str(tmp_path), "--max-input-size", "4K"])
    assert code == 3, err
    assert "--max-input-size" in err
    assert "Traceback" not in err


def test_a_record_that_never_ends_is_refused_at_the_input_bound(tmp_path: Path) -> None:
    # GIVEN a record that is a link to /dev/zero: one line without end, whose position stays 0
    (tmp_path / RECORD_FILE).symlink_to("/dev/zero")
    # WHEN read with a bound of 64 MiB THEN it is refused at the bound (it was read forever)
    started = time.monotonic()
    process = subprocess.run(
        [sys.executable, "-m", "kafkadiag", "lag", "history", str(tmp_path), "--max-input-size", "64MiB"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    err = process.stderr
    assert process.returncode == 3, err
    assert "a lag record of more than 64 MiB" in err and "--max-input-size" in err, err
    assert time.monotonic() - started < 30


def test_a_record_that_is_a_fifo_nobody_writes_into_is_empty_not_waited_for(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / RECORD_FILE)
    process = subprocess.run([sys.executable, "-m", "kafkadiag", "lag", "history", str(tmp_path)],
                             capture_output=True, text=True, timeout=60)  # fmt: skip
    assert process.returncode == 3 and "no usable recorded snapshot" in process.stderr, process.stderr


def test_recording_into_a_fifo_is_refused_not_waited_on(tmp_path: Path) -> None:
    # GIVEN a FIFO where `lag --record DIR` appends, nobody reading it
    os.mkfifo(tmp_path / RECORD_FILE)
    # WHEN a snapshot is recorded (in a process of its own: the open waited for a reader forever)
    recording = (
        "import sys\n"
        "from kafkadiag.collect.lagrecord import record_snapshot\n"
        "from kafkadiag.errors import InputUnreadableError\n"
        "from tests.lag.test_history_damaged_records import GOOD\n"
        "try:\n"
        "    record_snapshot(sys.argv[1], GOOD)\n"
        "except InputUnreadableError as error:\n"
        "    print(error.message)\n"
    )
    process = subprocess.run([sys.executable, "-c", recording, str(tmp_path)],
                             capture_output=True, text=True, timeout=60)  # fmt: skip
    # THEN it is refused, naming the file
    assert f"cannot record into {tmp_path}: its {RECORD_FILE} is not a regular file" in process.stdout, (
        process.stdout + process.stderr
    )
