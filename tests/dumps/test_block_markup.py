"""The lines that only open or close a pasted block are markup, not lines of the dump."""

from __future__ import annotations

import pytest

from kafkadiag.dumps.marks import is_block_markup


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
