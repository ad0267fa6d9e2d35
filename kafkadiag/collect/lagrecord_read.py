"""Reading back a lag record (DIR/lag-snapshots.jsonl): one validated snapshot per line.

The file is appended to by `lag --record` and the exporter, and may be truncated by a full disk,
copied through a ticket, or edited by hand. Each line is read within the JSON document bound
(--max-json-size, docs/inputs.md) without holding a longer one, and checked against the
documented shape (docs/json.md, "lag snapshot") before it is rebuilt, so that a damaged line is
skipped with a note naming file:line and what is wrong, never a traceback.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any, BinaryIO, cast

from kafkadiag import boundedjson
from kafkadiag.lag.snapshot import Snapshot, from_json
from kafkadiag.readlimits import (
    ENV_MAX_INPUT_SIZE,
    InputTooLargeError,
    MemoryWatch,
    ReadLimits,
    format_size,
)

_CHUNK = 1 << 20


def read_lines(handle: BinaryIO, max_bytes: int) -> Iterator[tuple[int, bytes | None]]:
    """(line number, bytes) for each line; None for a line longer than max_bytes, which is read
    past a chunk at a time and never held whole."""
    number = 0
    while True:
        line = handle.readline(max_bytes + 1)
        if not line:
            return
        number += 1
        if len(line) <= max_bytes or line.endswith(b"\n"):
            yield number, line
            continue
        while line and not line.endswith(b"\n"):
            line = handle.readline(_CHUNK)
        yield number, None


def parse_record(line: bytes) -> Snapshot:
    """One line as a Snapshot; ValueError saying what is wrong with it."""
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ValueError(f"not UTF-8 text (byte {error.start})") from None
    try:
        document = boundedjson.loads(text)
    except ValueError as error:
        raise ValueError(f"not JSON ({error})") from None
    check_record(document)
    try:
        return from_json(document)
    except (KeyError, TypeError, AttributeError, IndexError) as error:
        raise ValueError(f"{type(error).__name__}: {error}") from None


def read_records(path: str, handle: BinaryIO) -> tuple[list[Snapshot], list[str]]:
    """The snapshots a record holds, in file order, and a note for each line skipped; within
    --max-input-size and --max-memory for the whole record, as any input."""
    limits = ReadLimits.from_environment()
    limit = limits.max_json_chars
    watch = MemoryWatch(path, limits.max_memory_bytes)
    snapshots: list[Snapshot] = []
    problems: list[str] = []
    counted = _Counted(handle, path, limits.max_input_bytes)
    for number, line in read_lines(cast(BinaryIO, counted), limit):
        watch.check()
        if line is None:
            problems.append(
                f"{path}:{number}: skipped, not a recorded snapshot: a line longer than "
                f"{format_size(limit)} "
                "(--max-json-size raises the bound)"
            )
            continue
        if not line.strip():
            continue
        try:
            snapshots.append(parse_record(line))
        except ValueError as error:
            problems.append(f"{path}:{number}: skipped, not a recorded snapshot: {error}")
    return snapshots, problems


class _Counted:
    """The record's bytes counted as they are read, past `max_bytes` an InputTooLargeError, also
    while a long line is skipped. Counted, not asked of the file (tell()): read through a link to
    /dev/zero, the position stays 0 and the line never ends."""

    def __init__(self, handle: BinaryIO, path: str, max_bytes: int) -> None:
        self._handle = handle
        self._path = path
        self._max_bytes = max_bytes
        self._read = 0

    def readline(self, size: int = -1) -> bytes:
        line = self._handle.readline(size)
        self._read += len(line)
        if self._read > self._max_bytes:
            raise _record_too_large(self._path, self._max_bytes)
        return line


def _record_too_large(path: str, max_bytes: int) -> InputTooLargeError:
    return InputTooLargeError(
        f"{path}: a lag record of more than {format_size(max_bytes)}, the bound on one input",
        "--max-input-size",
        ENV_MAX_INPUT_SIZE,
        format_size(max_bytes * 4).replace(" ", ""),
    )


def check_record(document: Any) -> None:
    """The shape docs/json.md documents for a lag snapshot; ValueError naming the first field
    that does not fit."""
    if not isinstance(document, dict):
        raise ValueError(f"a JSON {type(document).__name__}, not a snapshot object")
    if not _is_int(document.get("taken_at_ms")):
        raise ValueError("taken_at_ms is not a whole number of milliseconds")
    if not _is_number(document.get("duration_ms", 0.0)):
        raise ValueError("duration_ms is not a number")
    for name, second in (("sources", str), ("unreachable", str), ("stats", int)):
        _check_pairs(document.get(name, []), name, second)
    _check_strings(document.get("errors", []), "errors")
    for group in _objects(document.get("groups", []), "groups"):
        _check_group(group)
    for partition in _objects(document.get("partitions", []), "partitions"):
        _check_partition(partition, "partitions")
    for topic in _objects(document.get("topics", []), "topics"):
        _check_text(topic, ("topic", "source"), "topics")
        if not all(_is_int(number) for number in _list(topic.get("partitions", []), "topics")):
            raise ValueError("topics: a partition number is not a whole number")
        _check_pairs(topic.get("leaders", []), "topics.leaders", int)


def _check_group(group: dict[str, Any]) -> None:
    _check_text(group, ("group", "source"), "groups")
    _check_strings(group.get("errors", []), "groups.errors")
    for member in _objects(group.get("members", []), "groups.members"):
        _check_text(member, ("member_id",), "groups.members")
        _check_pairs(member.get("subscription", []), "groups.members.subscription", int)
        _check_pairs(member.get("assignment", []), "groups.members.assignment", int)
    for offset in _objects(group.get("offsets", []), "groups.offsets"):
        _check_partition(offset, "groups.offsets")


def _check_partition(partition: dict[str, Any], where: str) -> None:
    _check_text(partition, ("topic",), where)
    if not _is_int(partition.get("partition")):
        raise ValueError(f"{where}: partition is not a whole number")
    for name, value in partition.items():
        if name.endswith(("offset", "_ms")) and value is not None and not _is_int(value):
            raise ValueError(f"{where}: {name} is not a whole number")


def _check_text(item: dict[str, Any], names: tuple[str, ...], where: str) -> None:
    for name in names:
        if not isinstance(item.get(name), str):
            raise ValueError(f"{where}: {name} is not a string")


def _check_strings(value: Any, where: str) -> None:
    if not all(isinstance(item, str) for item in _list(value, where)):
        raise ValueError(f"{where} holds something other than strings")


def _check_pairs(value: Any, where: str, second: type) -> None:
    for item in _list(value, where):
        if not isinstance(item, list) or len(item) != 2:
            raise ValueError(f"{where} holds something other than [name, value] pairs")
        ok = _is_int(item[1]) if second is int else isinstance(item[1], second)
        if not isinstance(item[0], (str, int)) or not ok:
            raise ValueError(f"{where} holds a pair of the wrong types")


def _objects(value: Any, where: str) -> list[dict[str, Any]]:
    items = _list(value, where)
    if not all(isinstance(item, dict) for item in items):
        raise ValueError(f"{where} holds something other than objects")
    return items


def _list(value: Any, where: str) -> list[Any]:
    if not isinstance(value, list):
        raise ValueError(f"{where} is not a list")
    return value


def _is_int(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)
