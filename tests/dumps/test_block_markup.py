"""The lines that only open or close a pasted block are markup, not lines of the dump."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kafkadiag.dumps import read_dumps
from kafkadiag.dumps.detect import SNIFF_LINES
from kafkadiag.dumps.marks import is_block_markup

from ..conftest import CAPTURED


@pytest.mark.parametrize(
    "line", ["```", "````", "```java", "``` java", "~~~", "~~~~text", "{code}", "{code:java}", "{noformat}"]
)
def test_fences_and_tracker_tags_are_markup(line: str) -> None:
    assert is_block_markup(line)


@pytest.mark.parametrize(
    "line", ["``` two words", "`code`", "{codec}", '"main" #1 prio=5', "at a.B.c(B.java:1)"]
)
def test_other_lines_are_not(line: str) -> None:
    assert not is_block_markup(line)


def _threads_by_line(path: Path) -> list[tuple[str, str, tuple[str, ...]]]:
    (dump,) = list(read_dumps(str(path)))
    return [(t.name, t.status.value, tuple(f.function for f in t.frames)) for t in dump.threads]


def test_a_fence_typed_on_the_first_header_after_a_long_log_keeps_that_thread(tmp_path: Path) -> None:
    # GIVEN the threads of a captured dump without its banner (as an issue quotes them), pasted
    # after more log lines than the format sniffer reads, the opening fence typed on the first
    # header's line and the closing fence on the last line
    original = CAPTURED / "real-old-consumer-stall-0.8.2.2" / "jstack-l.txt"
    text = original.read_text(encoding="utf-8")
    threads = text[text.index('"') : text.index("JNI global")].rstrip("\n")
    # Headers trimmed to the name and number, as reporters shorten them ("name" #56)
    threads = re.sub(r'^("[^"\n]*" #\d+) [^\n]*', r"\1", threads, flags=re.M)
    log = "".join(
        f"2026-11-27 10:00:{n % 60:02d} INFO poll loop alive ({n})\n" for n in range(SNIFF_LINES + 5)
    )
    pasted = tmp_path / "pasted.txt"
    pasted.write_text(log + "```" + threads + "```\n", encoding="utf-8")
    # WHEN it is read THEN every thread, state and frame is the captured one's
    assert _threads_by_line(pasted) == _threads_by_line(original)


def test_a_tag_typed_after_the_last_frame_is_not_part_of_that_frame(tmp_path: Path) -> None:
    original = CAPTURED / "real-old-consumer-stall-0.8.2.2" / "jstack-l.txt"
    lines = original.read_text(encoding="utf-8").rstrip("\n").split("\n")
    last_frame = max(index for index, line in enumerate(lines) if line.startswith("\tat "))
    lines[last_frame] += "{code}"
    pasted = tmp_path / "pasted.txt"
    pasted.write_text("\n".join(lines) + "\n", encoding="utf-8")
    (dump,) = list(read_dumps(str(pasted)))
    frames = [frame for thread in dump.threads for frame in thread.frames]
    assert not any("{code}" in (frame.file or "") + frame.function for frame in frames)
    assert _threads_by_line(pasted) == _threads_by_line(original)
