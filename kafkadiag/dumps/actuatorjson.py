"""Spring Boot Actuator's `/actuator/threaddump` as JSON: every ThreadInfo of the JVM.

    {"threads":[{"threadName":"billing-poll-0","threadId":12,"threadState":"RUNNABLE",
      "lockOwnerId":-1,"daemon":false,"inNative":true,...,
      "stackTrace":[{"classLoaderName":"app","moduleName":"java.base","moduleVersion":"17.0.15",
                     "methodName":"read0","fileName":"SocketDispatcher.java","lineNumber":-2,
                     "nativeMethod":true,"className":"sun.nio.ch.SocketDispatcher"},...],
      "lockedMonitors":[{"className":"pkg.Lock","identityHashCode":1494279232,
                         "lockedStackDepth":7,"lockedStackFrame":{...}}],
      "lockedSynchronizers":[{"className":"...ReentrantLock$NonfairSync","identityHashCode":...}],
      "lockInfo":{"className":"pkg.Lock","identityHashCode":...},"lockOwnerName":"x"}]}

This is how a Spring Kafka application in a container usually hands over its threads (`curl
/actuator/threaddump`). The endpoint sends it compact, on one line, or indented when the
application's Jackson is set to. What a thread waits for (`lockInfo`) is a lock line under its top
frame: entering a monitor when BLOCKED, in Object.wait, or parked; `lockedMonitors` are `- locked`
lines at their stack depth and `lockedSynchronizers` its ownable synchronizers, so the lock graph
sees the same relations as in a `jstack -l`. Locks are named by identity hash, as in the
endpoint's text form (`Accept: text/plain`, read as the VisualVM layout it copies).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from typing import Any

from kafkadiag import boundedjson
from kafkadiag.dumps.javaframes import parse_java_frame
from kafkadiag.dumps.jsonmembers import json_objects
from kafkadiag.dumps.jvmthreads import DumpCollector, build_thread
from kafkadiag.dumps.states import OBJECT_WAIT_FUNCTIONS
from kafkadiag.errors import NoDumpFoundError
from kafkadiag.model import (
    DumpFormat,
    Frame,
    LockEvent,
    LockEventKind,
    LockRef,
    Thread,
    ThreadDump,
    ThreadState,
)

# Where a thread's object starts in an indented document: its name member (one per thread; the
# frames and locks inside have none).
_NAME_LINE = re.compile(r'^\s*"threadName"\s*:')
_STATES = {state.value: state for state in ThreadState}


def looks_like_actuator_json(lines: Sequence[str]) -> bool:
    """A JSON document with a `threads` array of objects named by `threadName`."""
    head = "".join(line[:4096] for line in lines[:50])
    return head.lstrip()[:1] == "{" and '"threads"' in head and '"threadName"' in head


def parse_actuator_json(batches: Iterable[list[str]], source: str) -> Iterator[ThreadDump]:
    lines: list[str] = []
    name_lines: list[int] = []
    for batch in batches:
        for line in batch:
            lines.append(line)
            if _NAME_LINE.match(line):
                name_lines.append(len(lines))
    try:
        records = boundedjson.loads("\n".join(lines))["threads"]
        if not isinstance(records, list):
            raise TypeError("'threads' is not a list")
    except (ValueError, KeyError, TypeError) as error:
        raise NoDumpFoundError(f"{source}: not a Spring Boot Actuator thread dump ({error})") from None
    dump = DumpCollector(source, DumpFormat.ACTUATOR_JSON, 0, 1)
    dump.end_line_no = len(lines)
    dump.producer = "Spring Boot Actuator /threaddump"
    dump.has_lock_data = True  # the endpoint asks for locked monitors and synchronizers alike
    for position, record in enumerate(json_objects(records)):
        line_no = name_lines[position] if position < len(name_lines) else 1
        dump.threads.append(_thread(record, line_no))
    yield dump.build()


def _thread(record: dict[str, Any], line_no: int) -> Thread:
    name = str(record.get("threadName", ""))
    state = _STATES.get(str(record.get("threadState", "")), ThreadState.UNKNOWN)
    frames = [_frame(element) for element in json_objects(record.get("stackTrace"))]
    header = f'"{name}" - Thread t@{record.get("threadId", "?")}'
    if record.get("daemon"):
        header += " daemon"
    events: list[LockEvent] = []
    waited = _lock(record.get("lockInfo"), line_no, "lockInfo")
    if waited is not None:
        kind = _wait_kind(state, frames)
        events.append(LockEvent(kind, waited.lock_id, waited.lock_class, 0, line_no, waited.text))
    for monitor in json_objects(record.get("lockedMonitors")):
        held = _lock(monitor, line_no, "lockedMonitors")
        if held is not None:
            depth = monitor.get("lockedStackDepth")
            depth = depth if isinstance(depth, int) and 0 <= depth < max(len(frames), 1) else 0
            locked = LockEventKind.LOCKED
            events.append(LockEvent(locked, held.lock_id, held.lock_class, depth, line_no, held.text))
    synchronizers = [
        held
        for synchronizer in json_objects(record.get("lockedSynchronizers"))
        if (held := _lock(synchronizer, line_no, "lockedSynchronizers")) is not None
    ]
    events.sort(key=lambda event: event.frame_index)
    return build_thread(name, state, line_no, header, frames, events, synchronizers)


def _wait_kind(state: ThreadState, frames: list[Frame]) -> LockEventKind:
    in_wait = bool(frames) and frames[0].function in OBJECT_WAIT_FUNCTIONS
    if state is ThreadState.BLOCKED:
        # Woken from Object.wait and taking its monitor back, or entering a synchronized block.
        return LockEventKind.WAITING_TO_RELOCK if in_wait else LockEventKind.WAITING_TO_LOCK
    return LockEventKind.WAITING_ON if in_wait else LockEventKind.PARKING


def _lock(member: object, line_no: int, key: str) -> LockRef | None:
    """`{"className": "pkg.Lock", "identityHashCode": 1494279232}` -> the lock, quoted as the
    endpoint's text form names it (`pkg.Lock@5910e440`)."""
    if not isinstance(member, dict):
        return None
    identity = member.get("identityHashCode")
    lock_class = member.get("className")
    if not isinstance(identity, int) or not isinstance(lock_class, str):
        return None
    return LockRef(identity, lock_class, line_no, f'"{key}": {lock_class}@{identity:x}')


def _frame(element: dict[str, Any]) -> Frame:
    """A stackTrace element as StackTraceElement.toString() prints it, then read as any frame."""
    loader = element.get("classLoaderName")
    module = element.get("moduleName")
    version = element.get("moduleVersion")
    prefix = f"{loader}/" if loader else ""
    if module:
        prefix += f"{module}@{version}/" if version else f"{module}/"
    elif loader:
        prefix += "/"
    line = element.get("lineNumber")
    file = element.get("fileName")
    if element.get("nativeMethod"):
        location = "Native Method"
    elif file and isinstance(line, int) and line >= 0:
        location = f"{file}:{line}"
    else:
        location = file or "Unknown Source"
    function = f"{element.get('className', '')}.{element.get('methodName', '')}"
    return parse_java_frame(f"{prefix}{function}({location})")
