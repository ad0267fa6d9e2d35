"""`jcmd PID Thread.dump_to_file -format=json FILE` (JDK 21+).

    {"threadDump": {"processId": "27590", "time": "...", "runtimeVersion": "25.0.3+9-LTS",
      "threadContainers": [{"container": "<root>", "threads": [
        {"tid": "22", "name": "ledger-waiter", "state": "BLOCKED",
         "blockedOn": "com.example.Ledger@1e17b697",
         "stack": ["com.example.Ledger.post(Ledger.java:116)", ...],
         "monitorsOwned": [{"depth": 4, "locks": ["com.example.Ledger@1e17b697"]}]},
        {"tid": "24", "name": "vt-ledger-waiter", "virtual": true, ...}]}]}}

JDK 24+ add `state`, `blockedOn`, `waitingOn`, `parkBlocker` and `monitorsOwned`; later JDKs
add the owner of a park blocker (`parkBlocker.owner`, a tid), which is used when present. The
document has no header lines, so each thread's header is composed in the layout of the text form
(`#22 "ledger-waiter" BLOCKED`) and its line number is that of its `"tid"` member.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import Any

from kafkadiag import boundedjson
from kafkadiag.digits import decimal
from kafkadiag.dumps.javaframes import parse_java_frame
from kafkadiag.dumps.jcmdtext import NOTE_NO_OWNERS, NOTE_NO_STATES, NOTE_VIRTUAL
from kafkadiag.dumps.jsonmembers import json_items, json_objects
from kafkadiag.dumps.jvmthreads import DumpCollector, attach_synchronizers, build_thread
from kafkadiag.dumps.states import state_from_top_frames
from kafkadiag.errors import NoDumpFoundError
from kafkadiag.model import DumpFormat, LockEvent, LockEventKind, LockRef, Thread, ThreadDump, ThreadState

_TID_LINE = re.compile(r'^\s*"tid": "(\d+)"')
_STATES = {state.value: state for state in ThreadState}


def split_lock(text: str) -> tuple[int | None, str | None]:
    """`pkg.Type@1e17b697` -> (identity hash, class)."""
    lock_class, at, identity = text.rpartition("@")
    if not at:
        return None, text or None
    try:
        return int(identity, 16), lock_class
    except ValueError:
        return None, lock_class


def parse_jcmd_json(batches: Iterable[list[str]], source: str) -> Iterator[ThreadDump]:
    lines: list[str] = []
    tid_lines: list[int] = []
    for batch in batches:
        for line in batch:
            lines.append(line)
            if _TID_LINE.match(line):
                tid_lines.append(len(lines))
    try:
        document = boundedjson.loads("\n".join(lines))
        root = document["threadDump"]
        containers = root["threadContainers"]
    except (ValueError, KeyError, TypeError) as error:
        raise NoDumpFoundError(
            f"{source}: not a jcmd Thread.dump_to_file JSON document ({error})",
        ) from None
    dump = DumpCollector(source, DumpFormat.JCMD_JSON, 0, 1)
    dump.end_line_no = len(lines)
    dump.producer = "jcmd Thread.dump_to_file"
    dump.timestamp = _text(root.get("time"))
    version = _text(root.get("runtimeVersion"))
    dump.banner = f"Java {version}" if version else None
    pid = _text(root.get("processId"))
    dump.pid = decimal(pid)
    records = [
        thread for container in json_objects(containers) for thread in json_objects(container.get("threads"))
    ]
    index_of_tid: dict[str, int] = {}
    owners: list[tuple[str, LockRef]] = []
    stateless = False
    for position, record in enumerate(records):
        line_no = tid_lines[position] if position < len(tid_lines) else 1
        thread, owner = _thread(record, line_no)
        stateless = stateless or "state" not in record
        index_of_tid[_text(record.get("tid")) or ""] = len(dump.threads)
        dump.threads.append(thread)
        if owner is not None:
            owners.append(owner)
    owned: dict[int, list[LockRef]] = {}
    for owner_tid, ref in owners:
        if owner_tid in index_of_tid:
            owned.setdefault(index_of_tid[owner_tid], []).append(ref)
    dump.threads = attach_synchronizers(dump.threads, owned)
    if owners:
        dump.has_lock_data = True
    else:
        dump.note(NOTE_NO_OWNERS)
    if stateless:
        dump.note(NOTE_NO_STATES.replace("text (JDK 21-23)", "JSON (JDK 21-23)"))
    if any(thread.virtual for thread in dump.threads):
        dump.note(NOTE_VIRTUAL)
    yield dump.build()


def _thread(record: dict[str, Any], line_no: int) -> tuple[Thread, tuple[str, LockRef] | None]:
    name = _text(record.get("name")) or ""
    tid = _text(record.get("tid")) or "?"
    state_text = _text(record.get("state"))
    state = _STATES.get(state_text or "", ThreadState.UNKNOWN)
    frames = [parse_java_frame(str(text)) for text in json_items(record.get("stack"))]
    detail = ""
    if state_text is None:
        # JDK 21 to 23 print no state: the top frame tells a park, a wait or a sleep.
        state, detail = state_from_top_frames(frames)
    # JDK 21 to 23 mark no thread virtual; a virtual thread's stack starts in VirtualThread.run.
    started_virtual = bool(frames) and frames[-1].function == "java.lang.VirtualThread.run"
    virtual = " virtual" if record.get("virtual") or started_virtual else ""
    header = f'#{tid} "{name}"{virtual}' + (f" {state_text}" if state_text else "")
    events: list[LockEvent] = []

    def add(kind: LockEventKind, text: str, depth: int, member: str) -> None:
        lock_id, lock_class = split_lock(text)
        events.append(LockEvent(kind, lock_id, lock_class, depth, line_no, f'"{member}": "{text}"'))

    if isinstance(record.get("blockedOn"), str):
        add(LockEventKind.WAITING_TO_LOCK, record["blockedOn"], 0, "blockedOn")
    if isinstance(record.get("waitingOn"), str):
        add(LockEventKind.WAITING_ON, record["waitingOn"], 0, "waitingOn")
    owner = None
    blocker = record.get("parkBlocker")
    if isinstance(blocker, dict) and isinstance(blocker.get("object"), str):
        add(LockEventKind.PARKING, blocker["object"], 0, "parkBlocker")
        owner_tid = _text(blocker.get("owner"))
        lock_id, lock_class = split_lock(blocker["object"])
        if owner_tid and lock_id is not None:
            owner = (owner_tid, LockRef(lock_id, lock_class, line_no, f'"owner": "{owner_tid}"'))
    for owned in json_objects(record.get("monitorsOwned")):
        depth = owned.get("depth", 0)
        for text in json_items(owned.get("locks")):
            if isinstance(text, str):
                add(LockEventKind.LOCKED, text, depth if isinstance(depth, int) else 0, "locks")
    events.sort(key=lambda event: event.frame_index)
    thread = build_thread(name, state, line_no, header, frames, events, state_detail=detail)
    return thread, owner


def _text(value: object) -> str | None:
    return None if value is None else str(value)
