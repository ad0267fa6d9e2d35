"""`lag --record DIR --keep 7d|500MB`: how long or how large a recording may grow.

The recording is one file of JSON lines, appended in time order. After each append, when the
oldest snapshot is past the age by more than a twentieth of it (at least a minute), the older
lines are dropped; when the file is past the size, the oldest lines are dropped down to nine
tenths of it. The slack keeps the rewrite (a copy, then a rename over the file, so a reader
sees the old file or the new one) to one in many appends instead of one per append.
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import BinaryIO

from kafkadiag import boundedjson
from kafkadiag.readlimits import DEFAULT_MAX_JSON_CHARS

_AGE_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86400, "w": 604800}
_SIZE_UNITS = {"b": 1, "kb": 10**3, "mb": 10**6, "gb": 10**9, "kib": 2**10, "mib": 2**20, "gib": 2**30}
_KEEP = re.compile(r"^\s*(?P<number>\d+(?:\.\d+)?)\s*(?P<unit>[a-z]+)\s*$", re.IGNORECASE)


@dataclass(frozen=True)
class Keep:
    max_age_s: float | None = None
    max_bytes: int | None = None


def parse_keep(text: str) -> Keep:
    """`7d`, `36h`, `90m`, `2w` (age) or `500MB`, `2GiB` (size); ValueError naming the problem."""
    match = _KEEP.match(text)
    unit = match.group("unit").lower() if match else ""
    if match is None or (unit not in _AGE_UNITS and unit not in _SIZE_UNITS):
        raise ValueError(f"{text!r} is neither an age (7d, 36h, 90m) nor a size (500MB, 2GiB)")
    number = float(match.group("number"))
    if number <= 0:
        raise ValueError(f"--keep {text} keeps nothing: give an age or size above zero")
    if unit in _AGE_UNITS:
        return Keep(max_age_s=number * _AGE_UNITS[unit])
    return Keep(max_bytes=int(number * _SIZE_UNITS[unit]))


def prune(path: str, keep: Keep, now_ms: int) -> int:
    """Drop what `keep` no longer allows from the recording at `path`; the lines dropped."""
    try:
        size = os.path.getsize(path)
    except FileNotFoundError:
        return 0
    if keep.max_bytes is not None and size > keep.max_bytes:
        return _rewrite_from(path, _newest_within(path, keep.max_bytes * 9 // 10, size))
    if keep.max_age_s is not None:
        cutoff_ms = now_ms - keep.max_age_s * 1000
        slack_ms = max(keep.max_age_s * 50, 60_000)  # a twentieth, in ms
        with open(path, "rb") as handle:
            first = next((_taken_at_ms(line) for line, _ in _lines(handle)), None)
        if first is not None and first < cutoff_ms - slack_ms:
            return _rewrite_from(path, _first_at_or_after(path, cutoff_ms))
    return 0


def _lines(handle: BinaryIO) -> Iterator[tuple[bytes | None, int]]:
    """Each line and its length in bytes; a line longer than any record (a damaged file) is
    passed over in bounded pieces and given as None, never held whole."""
    while line := handle.readline(_MAX_LINE_BYTES):
        length = len(line)
        if line.endswith(b"\n") or length < _MAX_LINE_BYTES:
            yield line, length
            continue
        while (rest := handle.readline(_MAX_LINE_BYTES)) and not rest.endswith(b"\n"):
            length += len(rest)
        yield None, length + len(rest)


_MAX_LINE_BYTES = DEFAULT_MAX_JSON_CHARS  # a snapshot line is one JSON document


def _taken_at_ms(line: bytes | None) -> int | None:
    if line is None:
        return None
    try:
        record = boundedjson.loads(line.decode("utf-8"))
    except ValueError:  # UnicodeDecodeError and the bounds' errors are ValueErrors
        return None  # a torn or foreign line: `lag history` skips it and says so; so does pruning
    value = record.get("taken_at_ms") if isinstance(record, dict) else None
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _first_at_or_after(path: str, cutoff_ms: float) -> int:
    """Byte offset of the first line taken at or after the cutoff (lines are in time order, so
    only the dropped ones are parsed)."""
    offset = 0
    with open(path, "rb") as handle:
        for line, length in _lines(handle):
            taken = _taken_at_ms(line)
            if taken is not None and taken >= cutoff_ms:
                break
            offset += length
    return offset


def _newest_within(path: str, budget: int, size: int) -> int:
    """Byte offset of the first whole line of the newest `budget` bytes."""
    offset = 0
    with open(path, "rb") as handle:
        for _, length in _lines(handle):
            if size - offset <= budget:
                break
            offset += length
    return offset


def _rewrite_from(path: str, offset: int) -> int:
    if offset <= 0:
        return 0
    temporary = f"{path}.pruning"
    dropped = 0
    with open(path, "rb") as source, open(temporary, "wb") as target:
        remaining = offset
        while remaining > 0 and (chunk := source.read(min(remaining, 1 << 20))):
            dropped += chunk.count(b"\n")
            remaining -= len(chunk)
        while chunk := source.read(1 << 20):
            target.write(chunk)
    os.chmod(temporary, os.stat(path).st_mode & 0o777)
    os.replace(temporary, path)
    return dropped
