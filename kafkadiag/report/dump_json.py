"""`kafkadiag dump parse --format json`: the versioned, documented machine-readable model.

Schema `kafkadiag.dumps`, version 1 (docs/json.md). Additions of new keys keep the
version; renaming or removing a key, or changing a type, bumps it. Lock ids and thread
pointers are hex strings: they are 64-bit values, which JSON numbers cannot carry exactly in
most consumers.

This module is the document's shape, as dicts (the reference, and what tests compare with);
report/dump_json_text.py writes the same text straight from the model, dump by dump, so a log
holding hundreds of dumps never sits in memory, and closes the document properly with an `error`
member if reading fails half-way.
"""

from __future__ import annotations

from typing import Any

from kafkadiag.dumps.summary import DumpSummary
from kafkadiag.dumps.threadcpu import rows_with_threads
from kafkadiag.model import (
    Frame,
    LockEvent,
    LockRef,
    Thread,
    ThreadDump,
)

SCHEMA = "kafkadiag.dumps"
VERSION = 1


def hex_id(value: int | None) -> str | None:
    return None if value is None else f"0x{value:x}"


def frame_json(frame: Frame) -> dict[str, Any]:
    data: dict[str, Any] = {
        "text": frame.text,
        "function": frame.function,
        "file": frame.file,
        "line": frame.line,
        "native": frame.native,
        "module": frame.module,
    }
    if frame.locals:
        data["locals"] = [{"name": v.name, "value": v.value, "argument": v.is_argument} for v in frame.locals]
    return data


def lock_event_json(event: LockEvent) -> dict[str, Any]:
    return {
        "kind": event.kind.value,
        "lock_id": hex_id(event.lock_id),
        "lock_class": event.lock_class,
        "frame": event.frame_index,
        "line": event.line_no,
        "text": event.text,
    }


def lock_ref_json(lock: LockRef) -> dict[str, Any]:
    return {"lock_id": hex_id(lock.lock_id), "lock_class": lock.lock_class, "line": lock.line_no or None}


def thread_json(thread: Thread) -> dict[str, Any]:
    waits_for = thread.waits_for()
    return {
        "name": thread.name,
        "state": thread.state.value,
        "status": thread.status.value,
        "line": thread.line_no,
        "header": thread.header,
        "stack_line": thread.stack_line_no or None,
        "java_id": thread.java_id,
        "daemon": thread.daemon,
        "priority": thread.priority,
        "os_priority": thread.os_priority,
        "cpu_ms": thread.cpu_ms,
        "elapsed_s": thread.elapsed_s,
        "tid": hex_id(thread.tid),
        "nid": thread.nid,
        "virtual": thread.virtual,
        "carried_virtual_thread": thread.carried_virtual_thread,
        "active": thread.active,
        "owns_gil": thread.owns_gil,
        "frames": [frame_json(frame) for frame in thread.frames],
        "lock_events": [lock_event_json(event) for event in thread.lock_events],
        "held_synchronizers": None
        if thread.held_synchronizers is None
        else [lock_ref_json(lock) for lock in thread.held_synchronizers],
        "holds": [lock_ref_json(lock) for lock in thread.held_locks()],
        "waits_for": None if waits_for is None else lock_event_json(waits_for),
    }


def dump_json(summary: DumpSummary) -> dict[str, Any]:
    return {**dump_head(summary), "threads": [thread_json(thread) for thread in summary.dump.threads]}


def dump_head(summary: DumpSummary) -> dict[str, Any]:
    """Every member of a dump's document but its threads (which come last)."""
    dump: ThreadDump = summary.dump
    return {
        "source": dump.source,
        "index": dump.index,
        "format": dump.format.value,
        "producer": dump.producer,
        "line": dump.line_no,
        "end_line": dump.end_line_no,
        "timestamp": dump.timestamp,
        "banner": dump.banner,
        "pid": dump.pid,
        "truncated": dump.truncated,
        "has_lock_data": dump.has_lock_data,
        "notes": list(dump.notes),
        "thread_count": len(dump.threads),
        "by_state": summary.by_state,
        "by_status": summary.by_status,
        "unparsed_count": dump.unparsed_count,
        "unparsed": [{"line": u.line_no, "text": u.text} for u in dump.unparsed],
        "log_signals": [{"line": u.line_no, "text": u.text} for u in dump.log_signals],
        "os_threads": _os_threads(dump),
        "jvm_deadlocks": [
            [
                {
                    "thread": link.thread_name,
                    "waiting_for": link.waiting_for,
                    "lock_id": hex_id(link.lock_id),
                    "held_by": link.held_by,
                }
                for link in cycle
            ]
            for cycle in dump.jvm_deadlocks
        ],
        "lock_cycles": [list(cycle) for cycle in summary.deadlocked],
        "identical_stacks": [
            {
                "status": group.status,
                "count": len(group.thread_names),
                "threads": list(group.thread_names),
                "frames": [frame.text for frame in group.frames],
            }
            for group in summary.identical_stacks
        ],
        "locks": [
            {
                "lock_id": hex_id(lock.lock_id),
                "lock_class": lock.lock_class,
                "holders": list(lock.holders),
                "blocked": list(lock.blocked),
                "parked": list(lock.parked),
                "waiting": list(lock.waiting),
            }
            for lock in summary.locks
        ],
    }


def _os_threads(dump: ThreadDump) -> list[dict[str, Any]]:
    """The per-thread CPU figures given with the dump, each with the dump's thread it is of, if any."""
    if not dump.os_threads:
        return []  # most dumps: no need to map the threads by their OS ids
    return [
        {
            "tid": row.tid or None,
            "cpu_percent": row.cpu_percent,
            "cpu_time": row.cpu_time,
            "thread": thread.name if thread is not None else None,
            "line": row.line_no,
        }
        for row, thread in rows_with_threads(dump.os_threads, dump.threads)
    ]
