"""The thread section of GoCD's support report (`/go/api/support`): ThreadMXBean's threads, in
GoCD's words.

The report holds the server's configuration, memory pools and, under "Thread information", every
thread as ThreadMXBean.dumpAllThreads gives it:

    All thread stacktraces
    ----------------------
    4495564, qtp975379630-4495564, BLOCKED
    Locked Monitors:
    org.h2.jdbc.JdbcConnection@620c62ea at org.h2.jdbc.JdbcConnection.commit(...)Locked Synchronizers:
    Stacktrace:
      org.h2.command.Command.executeUpdate(Command.java:223)
      org.h2.jdbc.JdbcConnection.commit(JdbcConnection.java:441)

The id, the name and the state, then the monitors the thread holds (MonitorInfo: class@identity
hash and the frame that took it), written one after another without a line break, and so is the
"Locked Synchronizers:" heading after them; then the ownable synchronizers it holds, and its frames.
The lock a thread waits for is not printed: a BLOCKED thread is blocked, on a monitor no line names.
A caveat says so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from kafkadiag.dumps.javaframes import parse_java_frame
from kafkadiag.dumps.jvmthreads import DumpCollector, OpenThread, build_thread
from kafkadiag.dumps.linefeed import numbered_lines
from kafkadiag.model import (
    DumpFormat,
    LockEvent,
    LockEventKind,
    LockRef,
    Thread,
    ThreadDump,
    ThreadState,
)

SECTION = "All thread stacktraces"
# "4495564, qtp975379630-4495564, BLOCKED": the name may hold ", ", the state is the last word.
THREAD_LINE = re.compile(
    r"^(?P<id>\d+), (?P<name>.*), (?P<state>NEW|RUNNABLE|BLOCKED|WAITING|TIMED_WAITING|TERMINATED)\s*$"
)
MONITORS = "Locked Monitors:"
SYNCHRONIZERS = "Locked Synchronizers:"
STACK = "Stacktrace:"
# A held monitor (`Class@hash at frame`) or synchronizer (`Class@hash`), as many as the line holds
# (glued to each other: "...(JdbcConnection.java:441)java.lang.String@36036f62 at ..."). Matched
# from the start of its class name only (see _held_locks); a frame holds no "@".
_HELD = re.compile(r"(?P<class>[\w.$\[\];]+)@(?P<hash>[0-9a-f]+)(?: at (?P<frame>[^()@]*\([^()@]*\)))?")
_AT_HASH = re.compile(r"@[0-9a-f]")
_CLASS_CHAR = re.compile(r"[\w.$\[\];]")

NOTE_NO_WAIT_TARGETS = (
    "GoCD's support report: the lock a BLOCKED or waiting thread waits for is not printed, only the "
    "locks each thread holds; a blocked thread is not linked to the holder of its lock"
)


def _held_locks(text: str) -> Iterator[re.Match[str]]:
    """`_HELD.finditer(text)`, in time linear in the text.

    finditer tried _HELD from every character of a long run of class-name characters (up to where
    "@" fails): a monitor list of 256 KB without "@" took minutes. Here each "@hash" is found
    once and its class name is the run of class characters right before it, read back once.
    """
    position = 0
    while (at := _AT_HASH.search(text, position)) is not None:
        start = at.start()
        while start > position and _CLASS_CHAR.match(text, start - 1):
            start -= 1
        held = _HELD.match(text, start) if start < at.start() else None
        if held is None:
            position = at.start() + 1
            continue
        yield held
        position = held.end()


class _Thread(OpenThread):
    """The thread being read, its held locks kept until its frames tell where each was taken."""

    def __init__(self, name: str, state: ThreadState, line_no: int, header: str) -> None:
        super().__init__(name, state, line_no, header)
        self.monitors: list[tuple[str, int, str, int, str]] = []  # class, id, frame text, line, text
        self.synchronizers: list[LockRef] = []

    def held(self, text: str, line_no: int, monitors: bool) -> None:
        for held in _held_locks(text):
            lock_id = int(held["hash"], 16)
            if monitors:
                self.monitors.append((held["class"], lock_id, held["frame"] or "", line_no, held[0]))
            else:
                self.synchronizers.append(LockRef(lock_id, held["class"], line_no, held[0]))

    def build(self) -> Thread:
        texts = [frame.text for frame in self.frames]
        events = [
            LockEvent(
                LockEventKind.LOCKED,
                lock_id,
                lock_class,
                texts.index(frame_text) if frame_text in texts else 0,
                line_no,
                text,
            )
            for lock_class, lock_id, frame_text, line_no, text in self.monitors
        ]
        events.sort(key=lambda event: event.frame_index)
        return build_thread(
            self.name,
            self.state,
            self.line_no,
            self.header,
            self.frames,
            events,
            synchronizers=self.synchronizers,
            stack_line_no=self.stack_line_no,
        )


def parse_gocd_support(batches: Iterable[list[str]], source: str) -> Iterator[ThreadDump]:
    dump: DumpCollector | None = None
    thread: _Thread | None = None
    section = ""  # the heading read last under the thread: monitors, synchronizers or stack

    def finish_thread() -> None:
        nonlocal thread
        if thread is not None and dump is not None:
            dump.threads.append(thread.build())
        thread = None

    for line_no, line in numbered_lines(batches):
        header = THREAD_LINE.match(line)
        if header is not None:
            if dump is None:
                dump = DumpCollector(source, DumpFormat.GOCD_SUPPORT, 0, line_no)
                dump.producer = "GoCD"
                dump.has_lock_data = True
                dump.note(NOTE_NO_WAIT_TARGETS)
            finish_thread()
            thread = _Thread(header["name"], ThreadState(header["state"]), line_no, line.strip())
            section = ""
            dump.end_line_no = line_no
            continue
        if thread is None or dump is None:
            continue  # the report's other sections, before the threads
        if not line.strip():
            if section == STACK:
                finish_thread()  # a blank line ends the stack; the report's next section may follow
            continue
        if line.startswith(MONITORS):
            section = MONITORS
            line = line[len(MONITORS) :]
        if line.startswith(STACK):
            section = STACK
            thread.stack_line_no = line_no + 1
            continue
        if section == STACK and line.startswith("  "):
            thread.frames.append(parse_java_frame(line.strip()))
            dump.end_line_no = line_no
            continue
        if section in (MONITORS, SYNCHRONIZERS):
            monitors, glued, synchronizers = line.partition(SYNCHRONIZERS)
            if section == MONITORS:
                thread.held(monitors, line_no, monitors=True)
            else:
                thread.held(line, line_no, monitors=False)
            if glued:
                section = SYNCHRONIZERS
                thread.held(synchronizers, line_no, monitors=False)
            dump.end_line_no = line_no
            continue
        finish_thread()  # the line after the last thread: the report goes on
    finish_thread()
    if dump is not None:
        yield dump.build()
