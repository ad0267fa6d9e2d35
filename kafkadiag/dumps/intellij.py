"""IntelliJ IDEA debugger thread exports: "Export Threads" and the Frames view's copied stacks.

"Export Threads" (Run > Debugging Actions > Get Thread Dump, then export) writes a jstack-like
layout, with the debugger's object ids after each name and the lock relations in words:

    "Thread-0@687" prio=5 tid=0x11 nid=NA waiting for monitor entry
      java.lang.Thread.State: BLOCKED
             blocks Thread-1@691
             waiting for Thread-1@691 to release lock on <0x2d7> (a com.example.Account)
              at com.example.Bank.transfer(Bank.java:26)
              - locked <0x2d6> (a com.example.Account)

The Frames view copies a thread as a title and `method:line, Class (package)` frames:

    "main"@1 in group "main": RUNNING
    parseConfiguration:117, XMLConfigBuilder {org.apache.ibatis.builder.xml}

Lock ids are the debugger's object ids (unique within one session, which is all a lock graph
needs). Names lose the debugger's `@N` suffix so that they match the application's names.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from kafkadiag.digits import decimal
from kafkadiag.dumps.javaframes import parse_java_frame
from kafkadiag.dumps.jvmthreads import DumpCollector, OpenThread, lock_event
from kafkadiag.dumps.linefeed import numbered_lines
from kafkadiag.dumps.marks import is_block_markup
from kafkadiag.dumps.states import parse_state_line
from kafkadiag.model import DumpFormat, Frame, LockEventKind, ThreadDump, ThreadState

# "Thread-0@687" prio=5 tid=0x11 nid=NA waiting for monitor entry; a virtual thread has no priority
# and often no name ("@960" tid=0x19 nid=NA virtual runnable), a coroutine is "virtual" too
# ("scope:2@301" virtual tid=0x0 nid=NA running [Coroutine]).
EXPORT_HEADER = re.compile(
    r'^"(?P<name>.*?)@(?P<object>[\d,]+)"(?: virtual)? (?:daemon )?(?:prio=\d+ )?tid=0x[0-9a-fA-F]+ nid=NA\b'
)
# "main"@1 in group "main": RUNNING
COPIED_HEADER = re.compile(
    r'^"(?P<name>.*)"@(?P<object>[\d,]+)(?: in group "[^"]*")?: (?P<status>[A-Z_]+)\s*$'
)
_RELEASE = re.compile(
    r"^-? ?waiting for (?P<holder>.+) to release lock on <(?P<id>0x[0-9a-fA-F]+)>(?: \(a (?P<class>.+)\))?$"
)
_LOCK = re.compile(
    r"^- (?P<words>locked|waiting on|waiting to lock|parking to wait for) <(?P<id>0x[0-9a-fA-F]+)>"
    r"(?: \(a (?P<class>.+)\))?$"
)
# method:line, Class (package)   or   method:line, Class {package}
_COPIED_FRAME = re.compile(
    r"^(?P<method>[^:\s]+):(?P<line>-?\d+), (?P<cls>[\w$]+) [({](?P<package>[\w.$]*)[)}]$"
)
_STATUS = {
    "RUNNING": (ThreadState.RUNNABLE, ""),
    "WAIT": (ThreadState.WAITING, ""),
    "SLEEPING": (ThreadState.TIMED_WAITING, "sleeping"),
    "MONITOR": (ThreadState.BLOCKED, ""),
    "ZOMBIE": (ThreadState.TERMINATED, ""),
    "NOT_STARTED": (ThreadState.NEW, ""),
}
_KINDS = {
    "locked": LockEventKind.LOCKED,
    "waiting on": LockEventKind.WAITING_ON,
    "waiting to lock": LockEventKind.WAITING_TO_LOCK,
    "parking to wait for": LockEventKind.PARKING,
}
_STATE_LINE = "java.lang.Thread.State: "


def copied_frame(text: str) -> Frame | None:
    match = _COPIED_FRAME.match(text)
    if match is None:
        return None
    package = match["package"]
    function = (
        f"{package}.{match['cls']}.{match['method']}" if package else f"{match['cls']}.{match['method']}"
    )
    return Frame(text, function, None, decimal(match["line"]))


def parse_intellij(batches: Iterable[list[str]], source: str) -> Iterator[ThreadDump]:
    dump = DumpCollector(source, DumpFormat.INTELLIJ, 0, 1)
    dump.producer = "IntelliJ IDEA debugger"
    thread: OpenThread | None = None
    started = False

    def close() -> None:
        nonlocal thread
        if thread is not None:
            dump.threads.append(thread.build())
        thread = None

    for line_no, line in numbered_lines(batches):
        stripped = line.strip()
        if not stripped:
            continue
        exported = EXPORT_HEADER.match(line)
        copied = None if exported else COPIED_HEADER.match(line)
        if exported or copied:
            close()
            if not started:
                dump.line_no, started = line_no, True
            if copied:
                state, detail = _STATUS.get(copied["status"], (ThreadState.UNKNOWN, ""))
                thread = OpenThread(copied["name"], state, line_no, line, detail)
            else:
                assert exported is not None
                name = exported["name"] or f"@{exported['object']}"  # an unnamed virtual thread
                thread = OpenThread(name, ThreadState.UNKNOWN, line_no, line)
            dump.end_line_no = line_no
            continue
        if thread is None:
            continue  # text around the export (a bug report, a README) is not part of it
        dump.end_line_no = line_no
        if not _thread_line(thread, stripped, line_no):
            dump.unparsed_line(line_no, line)
    close()
    dump.note("IntelliJ exports carry no ownable-synchronizer lists: a ReentrantLock's holder is not named")
    yield dump.build()


def _thread_line(thread: OpenThread, stripped: str, line_no: int) -> bool:
    """A line of a thread's block: its state, a frame, a lock it holds or waits for."""
    if stripped.startswith(_STATE_LINE):
        thread.state, thread.detail = parse_state_line(stripped[len(_STATE_LINE) :])
        return True
    if stripped.startswith("at "):
        thread.frames.append(parse_java_frame(stripped[3:]))
        return True
    release = _RELEASE.match(stripped)
    if release:
        thread.events.append(
            lock_event(
                LockEventKind.WAITING_TO_LOCK,
                int(release["id"], 16),
                release["class"],
                thread.frames,
                line_no,
                stripped,
            )
        )
        return True
    lock = _LOCK.match(stripped)
    if lock:
        thread.events.append(
            lock_event(
                _KINDS[lock["words"]],
                int(lock["id"], 16),
                lock["class"],
                thread.frames,
                line_no,
                stripped,
            )
        )
        return True
    if stripped.startswith("blocks "):
        return True  # "blocks X" restates the other side of a waiting-for line
    frame = copied_frame(stripped)
    if frame is not None:
        thread.frames.append(frame)
        return True
    if is_block_markup(stripped):
        return True  # the fence or {code} tag around the pasted block, not a line of the dump
    return False
