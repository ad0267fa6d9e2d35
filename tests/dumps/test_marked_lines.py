"""Lines a reporter marked with an arrow or stars are still the lines they were.

KAFKA-916's reporter put '--->' in front of the two lines that decide the deadlock (the held map
lock and the fetcher's wait for it), before the log prefix every line of that dump carries.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkadiag.dumps import read_dumps

from ..conftest import CAPTURED
from .reading import what_was_read

WILD = Path(__file__).resolve().parents[1] / "wild" / "dumps"
DEADLOCK = CAPTURED / "deadlock" / "jstack-l.txt"
LOG_PREFIX = "2013-05-22 20:23:11.95771 "


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


PY_SPY = CAPTURED / "py-poll-queue-full" / "py-spy-dump.txt"
FAULTHANDLER = CAPTURED / "pyfmt-poll-queue-full" / "faulthandler-sigusr1.txt"


def _noted(text: str, is_line_to_note, note: str) -> str:
    return "\n".join(line + note if is_line_to_note(line) else line for line in text.split("\n"))


@pytest.mark.parametrize("note", ["   <--- here", "  <- blocked here", "\t// stuck", " ~[app.jar:1.0]"])
def test_notes_after_java_frames_and_lock_lines_are_not_part_of_them(note: str, tmp_path: Path) -> None:
    # GIVEN a captured dump where a reporter wrote a note after every frame and lock line
    path = tmp_path / "noted.txt"
    text = DEADLOCK.read_text(encoding="utf-8")
    path.write_text(_noted(text, lambda line: line.startswith(("\tat ", "\t- ")), note))
    # WHEN it is read THEN it reads as the dump without the notes
    assert what_was_read(path) == what_was_read(DEADLOCK)


@pytest.mark.parametrize("note", ["   <- the blocking call", "      \u2190 stuck here", "  # never returns"])
@pytest.mark.parametrize("source", [PY_SPY, FAULTHANDLER], ids=["py-spy", "faulthandler"])
def test_notes_after_python_frames_are_not_part_of_them(source: Path, note: str, tmp_path: Path) -> None:
    # GIVEN a captured Python dump where a reporter annotated every frame
    path = tmp_path / source.name
    text = source.read_text(encoding="utf-8")
    path.write_text(
        _noted(
            text,
            lambda line: (
                line.startswith("    ") and line.rstrip().endswith(")") or line.lstrip().startswith('File "')
            ),
            note,
        )
    )
    # WHEN it is read THEN every frame is the frame it was
    assert what_was_read(path) == what_was_read(source)
    assert sum(len(thread[2]) for thread in what_was_read(path)) > 5
