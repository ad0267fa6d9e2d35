"""py-spy text hard-wrapped by a mail client or an issue tracker reads as the text py-spy printed.

The inputs are the captured py-spy dumps, wrapped the way tests/dumps/mangle.py wraps them (break at
the last space within the width, the rest at column 0, trailing spaces kept or dropped).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkadiag.dumps import read_dumps
from kafkadiag.model import DumpFormat, ThreadDump

from ..conftest import CAPTURED
from . import mangle

PYSPY_TEXT = sorted(
    path
    for path in CAPTURED.glob("py*/py-spy-dump*.txt")
    if next(read_dumps(str(path))).format is DumpFormat.PYSPY
)
LOCALS = CAPTURED / "py-queue-cycle" / "py-spy-dump-locals.txt"


def everything_read(dumps: list[ThreadDump]) -> list[tuple]:
    """Per thread: identity, state, frames with their locations and variables, lock events."""
    return [
        (
            thread.name,
            thread.status,
            thread.header,
            tuple((frame.function, frame.file, frame.line, frame.locals) for frame in thread.frames),
            tuple((event.kind, event.lock_id, event.lock_class) for event in thread.lock_events),
        )
        for dump in dumps
        for thread in dump.threads
    ]


def read(text: str, tmp_path: Path) -> list[ThreadDump]:
    path = tmp_path / "pasted.txt"
    path.write_text(text)
    return list(read_dumps(str(path)))


@pytest.mark.parametrize("strip_trailing", [True, False], ids=["trailing-dropped", "trailing-kept"])
@pytest.mark.parametrize("width", [60, 72, 100])
@pytest.mark.parametrize("path", PYSPY_TEXT, ids=[f"{p.parent.name}/{p.name}" for p in PYSPY_TEXT])
def test_wrapped_pyspy_text_reads_as_printed(
    path: Path, width: int, strip_trailing: bool, tmp_path: Path
) -> None:
    # GIVEN a captured py-spy dump hard-wrapped at `width`
    text = path.read_text(encoding="utf-8")
    # WHEN it is read
    dumps = read(mangle.hard_wrap(text, width, strip_trailing=strip_trailing), tmp_path)
    # THEN every thread, frame, location and variable is what py-spy printed, and a repair is a caveat
    assert everything_read(dumps) == everything_read(list(read_dumps(str(path))))
    was_wrapped = any(len(line) > width for line in text.split("\n"))
    assert any("cut by hard wrapping" in note for dump in dumps for note in dump.notes) == was_wrapped


def test_a_thread_name_moved_to_the_next_line_is_the_threads_name(tmp_path: Path) -> None:
    # GIVEN a header wrapped before its quoted name, as a narrow terminal leaves it
    text = LOCALS.read_text(encoding="utf-8").replace('(idle): "stage-a"', '(idle):\n"stage-a"')
    # WHEN it is read THEN the thread is stage-a, with the same stack
    assert everything_read(read(text, tmp_path)) == everything_read(list(read_dumps(str(LOCALS))))


def test_a_fence_after_the_last_wrapped_frame_is_not_part_of_it(tmp_path: Path) -> None:
    # GIVEN a wrapped dump pasted inside a Markdown fence, prose after it
    text = mangle.markdown_fenced(
        mangle.hard_wrap(LOCALS.read_text(encoding="utf-8"), 72, strip_trailing=True)
    )
    text += "\nSee the log (attached.txt)\n"
    # WHEN it is read THEN the fence and the prose are not read into the last thread
    dumps = read(text, tmp_path)
    assert everything_read(dumps) == everything_read(list(read_dumps(str(LOCALS))))
    assert "```" in [line.text for dump in dumps for line in dump.unparsed]
