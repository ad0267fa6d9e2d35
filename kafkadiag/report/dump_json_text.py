"""The text of `kafkadiag dump parse --format json`, written straight from the model.

The document's members and types are report/dump_json.py's (schema `kafkadiag.dumps`,
docs/json.md); this module writes the same text json.dumps would make of them, faster.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Iterator
from json.encoder import encode_basestring as _string  # the C escaping json.dumps uses
from typing import Any, TextIO

from kafkadiag.dumps.summary import DumpSummary
from kafkadiag.model import Frame, LockEvent, LockEventKind, LockRef, Thread, ThreadState, ThreadStatus
from kafkadiag.report.dump_json import SCHEMA, VERSION, dump_head


class JsonDumpWriter:
    """Writes `{"schema":..., "version":..., "dumps": [...]}` one dump at a time."""

    def __init__(self, out: TextIO) -> None:
        self.out = out
        self.count = 0

    def begin(self) -> None:
        self.out.write(f'{{"schema": "{SCHEMA}", "version": {VERSION}, "dumps": [')

    def write(self, summary: DumpSummary) -> None:
        self.out.write(",\n" if self.count else "\n")
        for piece in dump_pieces(summary):
            self.out.write(piece)
        self.count += 1

    def end(self, inputs: Iterable[dict[str, Any]], error: dict[str, Any] | None = None) -> None:
        self.out.write('\n], "inputs": ')
        self.out.write(json.dumps(list(inputs), ensure_ascii=False))
        if error is not None:
            self.out.write(', "error": ')
            self.out.write(json.dumps(error, ensure_ascii=False))
        self.out.write("}\n")


# The text writer. A 10,000-thread dump makes about 33 MB of JSON; building a dict per frame and
# handing the tree to json.dumps cost three times the parse. The writer below produces the very
# same text (json.dumps' separators and its C string escaping, members in dump_json's order)
# straight from the model: enum values are escaped once, numbers and flags are spelled as
# json.dumps spells them without a call per value, and each distinct stack is written once per
# dump (the threads of a pool share their frames, so most stacks of a large dump are repeats).
# What every thread has of its own, its header, is read with one pattern (_HOTSPOT_HEADER), and
# the lock lines a pool's threads share are made into text once (_lock_event_text).

_NAMES = {
    member: _string(member.value) for enum in (ThreadState, ThreadStatus, LockEventKind) for member in enum
}


def dump_text(summary: DumpSummary) -> str:
    """`json.dumps(dump_json(summary), ensure_ascii=False)`, three times faster."""
    return "".join(dump_pieces(summary))


def dump_pieces(summary: DumpSummary) -> Iterator[str]:
    """dump_text in pieces of THREADS_PER_PIECE threads: a large dump's document is written as
    it is made, never held whole (33 MB for 10,000 threads, copied again to be written)."""
    head = json.dumps(dump_head(summary), ensure_ascii=False)
    yield f'{head[:-1]}, "threads": ['
    try:
        yield from _threads_pieces(summary.dump.threads)
    finally:
        _EVENT_TEXTS.clear()  # a cache of one dump's texts
    yield "]}"


def _threads_pieces(threads: tuple[Thread, ...]) -> Iterator[str]:
    stacks: dict[tuple[Frame, ...], str] = {}
    for start in range(0, len(threads), THREADS_PER_PIECE):
        parts: list[str] = []
        for thread in threads[start : start + THREADS_PER_PIECE]:
            frames = stacks.get(thread.frames)
            if frames is None:
                frames = stacks[thread.frames] = ", ".join(map(_frame_text, thread.frames))
            # The stack goes into the piece as it is, not copied into a text of its thread first.
            parts += (_thread_head(thread), frames, "], ", _locks_text(thread), "}, ")
        if start + THREADS_PER_PIECE >= len(threads):
            parts[-1] = "}"  # the last thread: no separator after it
        yield "".join(parts)


THREADS_PER_PIECE = 50  # about 160 kB: a piece is joined, escaped and encoded while in the cache


def _scalar(value: str | float | bool | None) -> str:
    """One JSON scalar as json.dumps writes it."""
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    if isinstance(value, str):
        return _string(value)
    if isinstance(value, float):
        return _float(value)
    return int.__repr__(value)


def _float(value: float) -> str:
    text = float.__repr__(value)
    return _SPECIAL_FLOATS.get(text, text)


_SPECIAL_FLOATS = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


def _hex(value: int | None) -> str:
    return "null" if value is None else f'"0x{value:x}"'  # hex digits need no escaping


def _thread_head(thread: Thread) -> str:
    """A thread's members up to the opening of its frames."""
    header = thread.header
    match = None if " Id=" in header else _HOTSPOT_HEADER.match(header)
    if match is None or match[13].startswith(_STATES_WITH_FIELDS):
        members = _fields_members(thread)
    else:
        members = _hotspot_members(match, thread.carried_virtual_thread)
    return (
        f'{{"name": {_string(thread.name)}, "state": {_NAMES[thread.state]}, '
        f'"status": {_NAMES[thread.status]}, "line": {thread.line_no}, '
        f'"header": {_string(header)}, "stack_line": {thread.stack_line_no or "null"}, '
        f'{members}"frames": ['
    )


# Reading a header's fields (kafkadiag.threadheader) was half the cost of a dump's JSON when
# every thread has a header of its own, as in a real JVM's dump. Most headers are HotSpot's,
# fields in their usual order: this pattern reads them in one match, and a number spelled as
# json.dumps spells it (no leading zero, no trailing zero in a fraction, tid= as "0x" and its
# significant digits) is written as it is, without converting it. It takes only what threadheader
# reads the same way (ASCII digits of bounded length, exactly two quotes, so the name ends where
# threadheader ends it, a tid= and a nid=, each value ending where threadheader's ends); any
# other header goes through threadheader. tests/dumps/test_json_writer.py holds the two readers
# to the same text on every header of the fixtures and the corpus, and on edge cases.
_DECIMAL = r"(0|-?[1-9][0-9]{0,23})"  # as json.dumps writes an int; prio=-0 is left to threadheader
# As json.dumps writes the float, then any other fraction threadheader reads (1.20, 0.00).
_FRACTION = r"(?:((?:0|[1-9][0-9]{0,6})\.[0-9]{0,3}[1-9])|([0-9]{1,24}(?:\.[0-9]{1,24})?))"
_HOTSPOT_HEADER = re.compile(
    r'"[^"]*"'
    rf"(?: #{_DECIMAL})?"  # 1 java_id
    r"(?: \[[0-9]+\])?"  # the OS id again, in decimal (JDK 19+): nid= is read instead
    r"( daemon)?"  # 2
    r"( virtual)?"  # 3
    rf"(?: prio={_DECIMAL})?"  # 4
    rf"(?: os_prio={_DECIMAL})?"  # 5
    rf"(?: cpu={_FRACTION}ms)?"  # 6, 7
    rf"(?: elapsed={_FRACTION}s)?"  # 8, 9
    r'(?: allocated=[^\s"]+)?'
    r"(?: defined_classes=[0-9]+)?"
    r" tid=0x0*([1-9a-f][0-9a-f]*)"  # 10: the pointer's significant digits
    r" nid=(?:0x([0-9a-fA-F]+)|(0|[1-9][0-9]{0,23}))(?= |\Z)"  # 11 (hex), 12 (decimal)
    r' *([^"]*)\Z'  # 13: the state words and the stack's address
)
# State words after which threadheader reads a field from them (VisualVM's id, IntelliJ's flag).
_STATES_WITH_FIELDS = ("- Thread t@", "virtual ")


def _hotspot_members(match: re.Match[str], carried: int | None) -> str:
    """The members java_id to owns_gil, from a _HOTSPOT_HEADER match."""
    (
        java_id,
        daemon,
        virtual,
        priority,
        os_priority,
        cpu,
        cpu_other,
        elapsed,
        elapsed_other,
        tid,
        nid_hex,
        nid,
        _,
    ) = match.groups()
    if cpu is None:
        cpu = "null" if cpu_other is None else _float(float(cpu_other))
    if elapsed is None:
        elapsed = "null" if elapsed_other is None else _float(float(elapsed_other))
    return (
        f'"java_id": {java_id or "null"}, "daemon": {"false" if daemon is None else "true"}, '
        f'"priority": {priority or "null"}, "os_priority": {os_priority or "null"}, '
        f'"cpu_ms": {cpu}, "elapsed_s": {elapsed}, "tid": "0x{tid}", '
        f'"nid": {nid or int(nid_hex, 16)}, "virtual": {"false" if virtual is None else "true"}, '
        f'"carried_virtual_thread": {"null" if carried is None else carried}, '
        '"active": null, "owns_gil": null, '
    )


def _fields_members(thread: Thread) -> str:
    """The members java_id to owns_gil, from the header's fields as threadheader reads them."""
    fields = thread.fields
    java_id, priority, os_priority, nid = fields.java_id, fields.priority, fields.os_priority, fields.nid
    cpu_ms, elapsed_s, active, owns_gil = fields.cpu_ms, fields.elapsed_s, fields.active, fields.owns_gil
    carried = thread.carried_virtual_thread
    return (
        f'"java_id": {"null" if java_id is None else java_id}, '
        f'"daemon": {"true" if fields.daemon else "false"}, '
        f'"priority": {"null" if priority is None else priority}, '
        f'"os_priority": {"null" if os_priority is None else os_priority}, '
        f'"cpu_ms": {"null" if cpu_ms is None else _float(cpu_ms)}, '
        f'"elapsed_s": {"null" if elapsed_s is None else _float(elapsed_s)}, '
        f'"tid": {_hex(fields.tid)}, '
        f'"nid": {"null" if nid is None else nid}, '
        f'"virtual": {"true" if fields.virtual else "false"}, '
        f'"carried_virtual_thread": {"null" if carried is None else carried}, '
        f'"active": {"null" if active is None else "true" if active else "false"}, '
        f'"owns_gil": {"null" if owns_gil is None else "true" if owns_gil else "false"}, '
    )


# A thread without lock lines: what its last four members say, with and without a "Locked
# ownable synchronizers" section (most threads of a dump).
_NO_LOCKS_WITHOUT_SECTION = '"lock_events": [], "held_synchronizers": null, "holds": [], "waits_for": null'
_NO_LOCKS = '"lock_events": [], "held_synchronizers": [], "holds": [], "waits_for": null'


def _locks_text(thread: Thread) -> str:
    """The members lock_events, held_synchronizers, holds and waits_for."""
    synchronizers = thread.held_synchronizers
    if not thread.lock_events and not synchronizers:
        return _NO_LOCKS_WITHOUT_SECTION if synchronizers is None else _NO_LOCKS
    events = thread.lock_events
    texts = list(map(_lock_event_text, events))
    waits_for = thread.waits_for()
    waits_text = "null"
    if waits_for is not None:  # one of the thread's events: its text is already made
        waits_text = texts[_position(events, waits_for)]
    held = "null" if synchronizers is None else f"[{', '.join(map(_lock_ref_text, synchronizers))}]"
    return (
        f'"lock_events": [{", ".join(texts)}], "held_synchronizers": {held}, '
        f'"holds": [{", ".join(map(_lock_ref_text, thread.held_locks()))}], "waits_for": {waits_text}'
    )


def _position(events: tuple[LockEvent, ...], event: LockEvent) -> int:
    for index, candidate in enumerate(events):
        if candidate is event:
            return index
    raise ValueError("not one of the thread's lock events")  # waits_for() returns one of them


def _frame_text(frame: Frame) -> str:
    text = (
        f'{{"text": {_string(frame.text)}, "function": {_string(frame.function)}, '
        f'"file": {_scalar(frame.file)}, "line": {_scalar(frame.line)}, '
        f'"native": {_scalar(frame.native)}, "module": {_scalar(frame.module)}'
    )
    if frame.locals:
        variables = ", ".join(
            f'{{"name": {_string(variable.name)}, "value": {_string(variable.value)}, '
            f'"argument": {_scalar(variable.is_argument)}}}'
            for variable in frame.locals
        )
        text += f', "locals": [{variables}]'
    return text + "}"


def _lock_event_text(event: LockEvent) -> str:
    """An event's text. The threads of a pool print the same lock lines under the same frames, at
    other line numbers: the text around the line number is made once per dump (cleared with it)."""
    kind, lock_id, lock_class, frame_index, text = (
        event.kind,
        event.lock_id,
        event.lock_class,
        event.frame_index,
        event.text,
    )
    around = _EVENT_TEXTS.get((kind, lock_id, lock_class, frame_index, text))
    if around is None:
        lock = "null" if lock_id is None else f'"0x{lock_id:x}"'
        around = _EVENT_TEXTS[kind, lock_id, lock_class, frame_index, text] = (
            f'{{"kind": {_NAMES[kind]}, "lock_id": {lock}, '
            f'"lock_class": {"null" if lock_class is None else _string(lock_class)}, '
            f'"frame": {frame_index}, "line": ',
            f', "text": {_string(text)}}}',
        )
    return f"{around[0]}{event.line_no}{around[1]}"


_EVENT_TEXTS: dict[tuple[LockEventKind, int | None, str | None, int, str], tuple[str, str]] = {}


def _lock_ref_text(lock: LockRef) -> str:
    lock_class = lock.lock_class
    return (
        f'{{"lock_id": {_hex(lock.lock_id)}, '
        f'"lock_class": {"null" if lock_class is None else _string(lock_class)}, '
        f'"line": {lock.line_no or "null"}}}'
    )
