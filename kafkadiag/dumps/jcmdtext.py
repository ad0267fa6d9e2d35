"""`jcmd PID Thread.dump_to_file -format=text FILE` (JDK 21+): every thread, virtual ones too.

    27590                                            pid
    2026-11-25T06:37:32.497265439Z                   when
    25.0.3+9-LTS                                     runtime version

    #22 "ledger-waiter" BLOCKED 2026-11-25T06:37:32.512888810Z
        at com.example.Ledger.post(Ledger.java:116)
        - waiting to lock <com.example.Ledger@1e17b697>
    #24 "vt-ledger-waiter" virtual BLOCKED 2026-11-25T06:37:32.514965752Z

JDK 21 prints neither the state nor the lock lines (`#22 "name"`, then each frame without `at `);
JDK 24+ prints both. Locks are named by class and identity hash (`<class@hash>`), never by address, so the
same lock has another id here than in a jstack of the same JVM. What no JDK up to 25 prints is
who owns a java.util.concurrent lock: a thread parked on a ReentrantLock cannot be linked to
the thread holding it. Each dump carries those gaps as notes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from kafkadiag.digits import decimal
from kafkadiag.dumps.javaframes import BARE_FRAME, parse_java_frame
from kafkadiag.dumps.jvmthreads import DumpCollector, OpenThread, lock_event
from kafkadiag.dumps.linefeed import numbered_lines
from kafkadiag.dumps.states import state_from_top_frames
from kafkadiag.model import DumpFormat, LockEventKind, ThreadDump, ThreadState

_HEADER = re.compile(r'^#(?P<tid>\d+) "(?P<name>.*)"(?P<rest>.*)$')
_STATES = {state.value: state for state in ThreadState}
_LOCK_LINE = re.compile(r"^- (?P<words>[a-z ()-]+?) <(?P<class>[^<>@]+)@(?P<hash>[0-9a-f]+)>$")
_KINDS = {
    "locked": LockEventKind.LOCKED,
    "waiting to lock": LockEventKind.WAITING_TO_LOCK,
    "waiting on": LockEventKind.WAITING_ON,
    "parking to wait for": LockEventKind.PARKING,
    "waiting to re-lock in wait()": LockEventKind.WAITING_TO_RELOCK,
    "eliminated": LockEventKind.ELIMINATED,
}
_PID = re.compile(r"^\d+$")
_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}")

NOTE_NO_OWNERS = (
    "jcmd Thread.dump_to_file does not say who owns a java.util.concurrent lock (ReentrantLock, "
    "ReadWriteLock, ...): threads parked on one cannot be linked to its holder; jstack -l names "
    "holders, but only of platform threads"
)
NOTE_NO_STATES = (
    "this Thread.dump_to_file text (JDK 21-23) prints no thread states and no lock lines: waits are "
    "read from each top frame (park, Object.wait, sleep) and a thread entering a monitor looks like a "
    "running one; take it with JDK 24+ for states and locks"
)
NOTE_VIRTUAL = (
    "lists virtual threads, which jstack does not show unless mounted; their lock ids are identity "
    "hashes, not the addresses jstack prints"
)


def parse_lock_text(text: str) -> tuple[LockEventKind, int, str] | None:
    """`- waiting to lock <pkg.Type@1e17b697>` -> (kind, identity hash, class)."""
    match = _LOCK_LINE.match(text)
    if match is None:
        return None
    kind = _KINDS.get(match["words"])
    if kind is None:
        return None
    return kind, int(match["hash"], 16), match["class"]


def parse_jcmd_text(batches: Iterable[list[str]], source: str) -> Iterator[ThreadDump]:
    dump = DumpCollector(source, DumpFormat.JCMD_TEXT, 0, 1)
    dump.producer = "jcmd Thread.dump_to_file"
    thread: OpenThread | None = None
    preamble: list[str] = []
    stateless = False

    def close() -> None:
        nonlocal thread
        if thread is not None:
            if thread.state is ThreadState.UNKNOWN and not thread.events:
                # JDK 21 to 23 print no state: the top frame tells a park, a wait or a sleep.
                thread.state, thread.detail = state_from_top_frames(thread.frames)
            dump.threads.append(thread.build())
        thread = None

    for line_no, line in numbered_lines(batches):
        stripped = line.strip()
        if not stripped:
            continue
        dump.end_line_no = line_no
        header = _HEADER.match(line)
        if header:
            close()
            words = header["rest"].split()
            if words[:1] == ["virtual"]:
                words = words[1:]
            state = _STATES.get(words[0], ThreadState.UNKNOWN) if words else ThreadState.UNKNOWN
            stateless = stateless or not words
            thread = OpenThread(header["name"], state, line_no, line, stack_line_no=line_no + 1)
            continue
        if thread is None:
            preamble.append(stripped)
            _read_preamble(dump, preamble, line_no, stripped)
            continue
        if stripped.startswith("at "):
            thread.frames.append(parse_java_frame(stripped[3:]))
        elif line[:1] in " \t" and BARE_FRAME.match(stripped):  # JDK 21 to 23: no "at ", six spaces in
            thread.frames.append(parse_java_frame(stripped))
        elif stripped.startswith("- ") and (parsed := parse_lock_text(stripped)) is not None:
            thread.events.append(lock_event(*parsed, thread.frames, line_no, stripped))
        else:
            dump.unparsed_line(line_no, line)
    close()
    dump.note(NOTE_NO_OWNERS)
    if stateless:
        dump.note(NOTE_NO_STATES)
    if any(thread.virtual for thread in dump.threads):
        dump.note(NOTE_VIRTUAL)
    yield dump.build()


def _read_preamble(dump: DumpCollector, preamble: list[str], line_no: int, text: str) -> None:
    """The three lines before the first thread: pid, time, runtime version."""
    if len(preamble) == 1 and _PID.match(text):
        dump.pid = decimal(text)
    elif _TIMESTAMP.match(text) and dump.timestamp is None:
        dump.timestamp = text
    elif dump.banner is None and len(preamble) <= 3:
        dump.banner = f"Java {text}"
    else:
        dump.unparsed_line(line_no, text)
