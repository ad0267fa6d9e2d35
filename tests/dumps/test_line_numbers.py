"""Findings quote the input by line number, so every line number the model carries must be right.

Checked over every captured fixture and every corpus dump: a thread's header line, each frame's
computed line and each lock event's line hold exactly the text the model says they do.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from kafkadiag.dumps import read_dumps

from ..conftest import CAPTURED, CORPUS

CAPTURED_TEXT = sorted(p for p in CAPTURED.glob("*/*") if p.is_file() and not p.name.endswith(".json"))
TEXT_INPUTS = CAPTURED_TEXT + sorted(
    p
    for p in list(CORPUS.glob("*/*.txt")) + list(CORPUS.glob("dumpling/*/*.log"))
    if p.name not in ("no-threads.log", "thread-dump-jstack.txt")
)


@pytest.mark.parametrize("path", TEXT_INPUTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_header_frame_and_lock_line_numbers_point_at_their_text(path: Path) -> None:
    data = path.read_bytes()
    if path.suffix == ".gz":  # the 50-dump kill -3 log is stored gzipped; line numbers are the text's
        data = gzip.decompress(data)
    lines = data.decode("utf-8", errors="replace").replace("\r\n", "\n").split("\n")
    checked = 0
    for dump in read_dumps(str(path)):
        for thread in dump.threads:
            assert thread.header in lines[thread.line_no - 1], (thread.name, thread.line_no)
            for index, frame in enumerate(thread.frames):
                line_no = thread.frame_line_no(index)
                if line_no is not None:
                    assert frame.text in lines[line_no - 1], (thread.name, index, line_no)
                    checked += 1
            if dump.format.value == "hotspot":
                for event in thread.lock_events:
                    assert event.text.strip() in lines[event.line_no - 1], (thread.name, event)
    has_plain_frames = any(
        thread.frames and not any(frame.locals for frame in thread.frames)
        for dump in read_dumps(str(path))
        for thread in dump.threads
        if dump.unparsed_count == 0 and dump.format.value != "py-spy-json"
    )
    assert checked > 0 or not has_plain_frames
