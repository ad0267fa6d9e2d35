"""py-spy text whose lines a mail client, an issue tracker or a terminal hard-wrapped.

py-spy's layout is rigid: `Process`, `Python v` and `Thread` lines at column 0, frames indented by
4, `Arguments:` / `Locals:` by 8, variables by 12, and no blank line inside a thread. Wrapping at
72 to 132 columns breaks a line at its last space within the width (an indented line always has
one, in its indentation) and puts the rest at column 0, where py-spy never starts anything but
those three records. So a piece at column 0 that starts no record is the rest of the line before
it, joined back with the space the break took, when that line is visibly unfinished:

    a thread header without its quoted name      Thread 4127 (idle):  |  "kafka-poll-loop"
    a frame without its closing (location)       Queue.put  |  (queue.py:140)
    a variable whose repr has an unclosed bracket or quote
    the Process line, whose command line may run on

A frame whose only space within the width was in its indentation comes back whole at column 0
after a blank line (the indentation alone, its trailing spaces dropped or not): it is read as a
frame again when it has a frame's shape and a function name too long to have been broken at.

Inside a frame's location (a file or library path, which has no space) a break can only have cut
a word, and the pieces are glued. Elsewhere a cut inside a word (a name or repr with no space
within the width, or a tool cutting at an exact column) cannot be told from a break at a space:
the pieces are joined with a space, which misspells that name. The dump's caveat says lines were
joined.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from kafkadiag.dumps.rewrap import fits
from kafkadiag.threadheader import PYSPY_THREAD_ID

_RECORD = re.compile(rf"^(?:Process \d+:|Python v|Thread (?:{PYSPY_THREAD_ID}) \()")
_THREAD_START = re.compile(rf"^Thread (?:{PYSPY_THREAD_ID}) \(")
_THREAD = re.compile(rf'^Thread (?:{PYSPY_THREAD_ID}) \([^)]*\)(?:: ".*")?\s*$')
_FRAME = re.compile(r"^.+? \([^()]*\)$")
_VARIABLE = re.compile(r"^[A-Za-z_]\w*: ")
# A whole frame at column 0: one word, then its location. Its function name is at least this long,
# or the break would have come at the space before the location (the narrowest width is 72).
_WHOLE_FRAME = re.compile(r"^(?P<function>\S+) \([^()\s]*\)$")
_LONGEST_BREAKABLE = 40
# Wrapping at 72 columns or more leaves lines at least this long before a cut inside a name.
_SHORTEST_WRAPPED_LINE = 40
_OPENING = {"(": ")", "[": "]", "{": "}", "<": ">"}


def repr_unfinished(value: str) -> bool:
    """A repr with an unclosed quote or bracket (brackets inside quotes do not count)."""
    depth = 0
    quote = ""
    for char in value:
        if quote:
            if char == quote:
                quote = ""
        elif char in "\"'":
            quote = char
        elif char in _OPENING:
            depth += 1
        elif char in ")]}>" and depth:
            depth -= 1
    return bool(quote) or depth > 0


def unfinished(line: str) -> bool:
    """`line` cannot have ended where it did: what follows at column 0 is its rest."""
    if line.startswith("Process "):
        return True
    if _THREAD_START.match(line):
        return _THREAD.match(line) is None
    stripped = line.strip()
    if not line[:1].isspace() or stripped in ("Arguments:", "Locals:"):
        return False
    if _VARIABLE.match(stripped):
        return repr_unfinished(stripped.partition(": ")[2])
    return _FRAME.match(stripped) is None


def joined(line: str, piece: str) -> str:
    """`line` and the piece wrapping cut off it, with the space the break took.

    Inside a frame's location (a file or library path: py-spy prints none with a space in it) a
    break can only have cut a word: there the pieces are glued.
    """
    stripped = line.rstrip(" ")
    location = stripped.rfind(" (")
    if location >= 0 and ")" not in stripped[location:] and not _VARIABLE.match(stripped.lstrip()):
        return stripped + piece.strip()
    return stripped + " " + piece.strip()


def _name_breaks_line(header: str) -> bool:
    """A thread header whose quoted name is open on a line shorter than any wrapping would leave:
    the name itself holds a line break (py-spy prints it as it is)."""
    return (
        _THREAD_START.match(header) is not None
        and header.count('"') % 2 == 1
        and len(header.rstrip()) < _SHORTEST_WRAPPED_LINE
    )


def _whole_frame(line: str) -> bool:
    match = _WHOLE_FRAME.match(line.strip())
    return match is not None and len(match["function"]) >= _LONGEST_BREAKABLE


def logical_lines(batches: Iterable[list[str]]) -> Iterator[tuple[int, str, bool]]:
    """(line number, line, whether pieces were joined into it); blank lines are dropped.

    The number is that of the line's first piece.
    """
    pending: tuple[int, str, bool] | None = None
    in_thread = False
    after_blank = False
    line_no = 0
    for batch in batches:
        for line in batch:
            line_no += 1
            if not line.strip():
                after_blank = True
                continue
            at_column_0 = not line[:1].isspace()
            if at_column_0 and _RECORD.match(line) is None and pending is not None:
                # Joined only within MAX_REJOINED_CHARS: each join copies and rescans the line.
                if not after_blank and fits(pending[1], line) and unfinished(pending[1]):
                    if _name_breaks_line(pending[1]):
                        pending = (pending[0], pending[1] + "\n" + line, pending[2])
                    else:
                        pending = (pending[0], joined(pending[1], line), True)
                    continue
                if after_blank and in_thread and _whole_frame(line):
                    line = "    " + line.strip()  # a frame whose indentation the wrap cut off
                    yield pending
                    pending = (line_no, line, True)
                    after_blank = False
                    continue
            if at_column_0 and _RECORD.match(line) is not None:
                in_thread = _THREAD_START.match(line) is not None
            if pending is not None:
                yield pending
            pending = (line_no, line, False)
            after_blank = False
    if pending is not None:
        yield pending
