"""JSON from outside, read within stated bounds: the one way kafkadiag parses a JSON document.

Every JSON input (py-spy --json, jcmd Thread.dump_to_file, Spring Boot Actuator, Docker's log
records, capture-bundle manifests, lag snapshots, znode data) comes from a file or a server that
anyone may have written. Python's own reader has two ways to fail that are not a `ValueError`
naming the document: nesting deeper than the interpreter's recursion limit (RecursionError:
100,000 `[` were enough) and integers longer than the interpreter converts (4,300 digits, a
ValueError about `sys.set_int_max_str_digits`). Both become `JsonBoundsError`, a ValueError, so
each reader's existing "not valid JSON" error names the problem; and the document that parses is
held to bounds no tool's output comes near, so that nothing downstream meets a 900-level list or
a 4,000-digit thread id either.
"""

from __future__ import annotations

import json
import re
from typing import Any

# The deepest tool output read is jcmd's Thread.dump_to_file JSON: 7 levels. A manifest is 3.
MAX_DEPTH = 64
# A 64-bit id or offset has 20 digits; a nanosecond timestamp 19.
MAX_NUMBER_DIGITS = 64

# A run of digits that long anywhere in the text, in a string or not: only then are numbers
# checked one by one (a hook per number costs a Python call for each of a dump's line numbers).
_LONG_DIGITS = re.compile(rf"\d{{{MAX_NUMBER_DIGITS + 1},}}")


class JsonBoundsError(ValueError):
    """A JSON document beyond MAX_DEPTH or MAX_NUMBER_DIGITS; its message says which."""


def loads(text: str) -> Any:
    """`json.loads(text)` within MAX_DEPTH and MAX_NUMBER_DIGITS.

    Raises json.JSONDecodeError for text that is not JSON and JsonBoundsError (both ValueError)
    for a document out of bounds; nothing else.
    """
    try:
        if _LONG_DIGITS.search(text) is None:
            document = json.loads(text)
        else:
            document = json.loads(text, parse_int=_bounded_int, parse_float=_bounded_float)
    except RecursionError:
        raise JsonBoundsError(f"JSON nested deeper than {MAX_DEPTH} levels") from None
    except (json.JSONDecodeError, JsonBoundsError):
        raise
    except ValueError as error:  # the interpreter's integer-size limit, should the hook miss one
        raise JsonBoundsError(f"a JSON number too long to read ({error})") from None
    if text.count("[") + text.count("{") > MAX_DEPTH and _deeper_than(document, MAX_DEPTH):
        raise JsonBoundsError(f"JSON nested deeper than {MAX_DEPTH} levels")
    return document


def _bounded_int(digits: str) -> int:
    _check_length(digits)
    return int(digits)


def _bounded_float(digits: str) -> float:
    _check_length(digits)
    return float(digits)


def _check_length(number: str) -> None:
    if len(number) > MAX_NUMBER_DIGITS:
        raise JsonBoundsError(
            f"a JSON number of {len(number):,} characters (more than {MAX_NUMBER_DIGITS}): "
            "no tool writes such a number"
        )


def _deeper_than(document: Any, limit: int) -> bool:
    """Whether any array or object lies more than `limit` levels down. Level by level, not
    recursive, so that the check itself cannot run out of stack (and a list per level is several
    times quicker than a stack of (value, depth) pairs on a dump of many frames)."""
    level = [document] if isinstance(document, (dict, list)) else []
    depth = 1
    while level:
        if depth > limit:
            return True
        below = []
        for value in level:
            for child in value.values() if isinstance(value, dict) else value:
                if isinstance(child, (dict, list)):
                    below.append(child)
        level, depth = below, depth + 1
    return False
