"""A thread header pasted without its opening quote is still a thread header, and the repair is said.

SPARK-9529's reporter pasted `pool-1-thread-1-ScalaTest-running-TungstenSortSuite" prio=5 tid=...`:
the selection started one character late. One quote, right after the name, then HotSpot's
fields: a log prefix before a quoted name would leave two quotes on the line.
"""

from __future__ import annotations

from pathlib import Path

from kafkadiag.dumps import read_dumps
from kafkadiag.model import ThreadStatus

from ..conftest import CAPTURED

WILD = Path(__file__).resolve().parents[1] / "wild" / "dumps"
ORIGINAL = CAPTURED / "lock-contention" / "jstack-l.txt"


def what_was_read(path: Path) -> list[tuple]:
    return [
        (thread.name, thread.nid, thread.status, tuple(frame.function for frame in thread.frames))
        for dump in read_dumps(str(path))
        for thread in dump.threads
    ]


def test_headers_without_their_opening_quote_are_read_with_a_caveat(tmp_path: Path) -> None:
    # GIVEN a captured dump in which every other thread header lost its opening quote
    lines = ORIGINAL.read_text(encoding="utf-8").split("\n")
    headers = [index for index, line in enumerate(lines) if line.startswith('"')]
    for index in headers[::2]:
        lines[index] = lines[index][1:]
    path = tmp_path / "unquoted.txt"
    path.write_text("\n".join(lines))
    # WHEN it is read
    dump = next(read_dumps(str(path)))
    # THEN the threads are those of the original, and a caveat names the repaired lines
    assert what_was_read(path) == what_was_read(ORIGINAL)
    (note,) = [note for note in dump.notes if "without their opening quote" in note]
    assert f"line {headers[0] + 1}, " in note


def test_a_log_line_with_one_quote_is_not_a_header(tmp_path: Path) -> None:
    # GIVEN a log line holding a single quote before a dump
    path = tmp_path / "log.txt"
    path.write_text('10:11:12 INFO said "hello to the world\n' + ORIGINAL.read_text(encoding="utf-8"))
    # WHEN it is read
    # THEN nothing more than the dump is read
    assert what_was_read(path) == what_was_read(ORIGINAL)


def test_spark_9529_thread_is_read() -> None:
    # GIVEN the SPARK-9529 paste, whose only header lost its opening quote
    (dump,) = list(read_dumps(str(WILD / "spark-9529-decimal-sort-busy.txt")))
    # WHEN it is read
    (thread,) = dump.threads
    # THEN it is the sort thread, busy in BigDecimal arithmetic
    assert thread.name == "pool-1-thread-1-ScalaTest-running-TungstenSortSuite"
    assert thread.status is ThreadStatus.RUNNABLE and thread.nid == 0x5103
    assert thread.frames[0].function == "java.math.BigInteger.<init>"
