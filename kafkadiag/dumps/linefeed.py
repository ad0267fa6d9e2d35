"""Feed a dump's numbered lines to a line-by-line reader and collect the dumps it finishes.

Most readers are a small state machine with `feed(line_no, line)`, which gives back a dump when
a line closes one, and `finish()` for the dump still open at the end of the input; this is the
loop they all share.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Protocol

from kafkadiag.model import ThreadDump


class LineReader(Protocol):
    def feed(self, line_no: int, line: str) -> ThreadDump | None: ...

    def finish(self) -> ThreadDump | None: ...


def numbered_lines(batches: Iterable[list[str]]) -> Iterator[tuple[int, str]]:
    """The lines of the batches with their line numbers (from 1), the numbers findings cite."""
    line_no = 0
    for batch in batches:
        for line in batch:
            line_no += 1
            yield line_no, line


def feed_lines(reader: LineReader, lines: Iterable[tuple[int, str]]) -> Iterator[ThreadDump]:
    """The dumps `reader` finishes while fed `lines`, then the one still open at the end."""
    for line_no, line in lines:
        finished = reader.feed(line_no, line)
        if finished is not None:
            yield finished
    last = reader.finish()
    if last is not None:
        yield last
