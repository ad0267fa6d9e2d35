"""Lines a reporter marked with an arrow or stars are still the lines they were.

KAFKA-916's reporter put '--->' in front of the two lines that decide the deadlock (the held map
lock and the fetcher's wait for it), before the log prefix every line of that dump carries.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkadiag.dumps import read_dumps

from ..conftest import CAPTURED

WILD = Path(__file__).resolve().parents[1] / "wild" / "dumps"
DEADLOCK = CAPTURED / "deadlock" / "jstack-l.txt"
LOG_PREFIX = "2013-05-22 20:23:11.95771 "


def what_was_read(path: Path) -> list[tuple]:
    return [
        (
            thread.name,
            thread.status,
            tuple(frame.function for frame in thread.frames),
            tuple((event.kind, event.lock_id, event.lock_class) for event in thread.lock_events),
        )
        for dump in read_dumps(str(path))
        for thread in dump.threads
    ]


def _marked(text: str, mark: str, prefix: str) -> str:
    """Prefix every line, and put `mark` in front of every lock line and every frame of the top."""
    lines = []
    for line in text.split("\n"):
        marked = line.startswith("\t- ") or line.startswith("\tat java.lang.Thread.run")
        lines.append((mark + " " if marked else "") + prefix + line)
    return "\n".join(lines)


@pytest.mark.parametrize("mark", ["--->", "==>", "->", ">>>", "***", "<---"])
@pytest.mark.parametrize("prefix", ["", LOG_PREFIX], ids=["bare", "log-prefixed"])
def test_marked_lock_lines_and_frames_are_read(mark: str, prefix: str, tmp_path: Path) -> None:
    # GIVEN a captured dump whose lock lines and some frames a reporter marked
    path = tmp_path / "marked.txt"
    path.write_text(_marked(DEADLOCK.read_text(encoding="utf-8"), mark, prefix))
    # WHEN it is read
    # THEN it reads as the dump without the marks
    assert what_was_read(path) == what_was_read(DEADLOCK)


def test_prose_after_an_arrow_stays_prose(tmp_path: Path) -> None:
    # GIVEN a remark starting with an arrow between two threads of a dump
    lines = DEADLOCK.read_text(encoding="utf-8").split("\n")
    second_header = [i for i, line in enumerate(lines) if line.startswith('"')][1]
    lines.insert(second_header, "---> this one never returns")
    path = tmp_path / "remark.txt"
    path.write_text("\n".join(lines))
    # WHEN it is read
    dump = next(read_dumps(str(path)))
    # THEN the remark is a line the parser did not understand, kept as it was written
    assert [line.text for line in dump.unparsed] == ["---> this one never returns"]


def test_kafka_916_marked_lock_lines_link_the_fetcher_to_main() -> None:
    # GIVEN the KAFKA-916 excerpt, its two lock lines marked '--->' before the log prefix
    dump = next(read_dumps(str(WILD / "kafka-916-fetcher-shutdown-deadlock.txt")))
    main, fetcher = dump.threads[0], dump.threads[1]
    # WHEN it is read
    # THEN main holds the map lock the fetcher waits to lock
    waited = fetcher.waits_for()
    assert waited is not None and waited.lock_id == 0x7F1A2AE92510
    assert 0x7F1A2AE92510 in {lock.lock_id for lock in main.held_locks()}
