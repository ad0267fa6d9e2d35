"""py-spy dumps: `py-spy dump` text, with or without `--locals` and `--native` (`--json`: pyspyjson.py).

Text layout (py-spy 0.3 and 0.4):

    Process 2137: /usr/bin/python3 app.py
    Python v3.11.7 (/usr/bin/python3.11)
    <blank>
    Thread 2137 (idle): "MainThread"              (thread id in hex when the OS id is unknown)
        Condition.wait (threading.py:327)         Python frame
            Arguments:                             --locals: arguments, then locals
                self: <Condition at 0x7fe46e4a2050>
            Locals:
                waiter: <_thread.lock at 0x7fe46e4a8b40>
        PyThread_acquire_lock_timed (libpython3.11.so.1.0)   --native: a native frame
        0x7fe46eaa3f16 (libc.so.6)

py-spy names no lock owners. Where --locals shows the object a thread waits on (the `self`
of Condition.wait, Event.wait, Semaphore.acquire, Thread.join), it becomes a lock event so
that rules can see which threads wait on the same object.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from kafkadiag.digits import decimal, is_decimal
from kafkadiag.dumps.pyqualify import qualify_methods
from kafkadiag.dumps.pyspyrewrap import logical_lines
from kafkadiag.dumps.pythreads import is_waiting
from kafkadiag.dumps.rewrap import rejoined_note
from kafkadiag.model import (
    DumpFormat,
    Frame,
    LockEvent,
    LockEventKind,
    Thread,
    ThreadDump,
    ThreadState,
    ThreadStatus,
    UnparsedLine,
    Variable,
)
from kafkadiag.threadheader import PYSPY as PYSPY_HEADER
from kafkadiag.threadheader import PYSPY_CORE

MAX_UNPARSED_KEPT = 200

_PROCESS = re.compile(r"^Process (?P<pid>\d+): (?P<command>.*)$")
_PYTHON = re.compile(r"^Python v(?P<version>\S+)")
# `--subprocesses`: a rule between the processes, and each child's parent named under its header.
_SUBPROCESS_LINE = re.compile(r"^(?:-{20,}|Parent Process \d+: .*)\s*$")
_THREAD = PYSPY_HEADER
# A frame may carry a reporter's note after its location: "(ssl.py:1138)   <- the blocking call".
_FRAME = re.compile(
    r"^(?P<function>.+?) \((?P<location>[^()]*)\)"
    r"(?:\s+(?:<-|<=|\u2190|#|//)\S*\s.*|\s{2,}\S.*)?$"
)
_ADDRESS = re.compile(r"<(?P<type>[\w.]+) (?:object )?at (?P<address>0x[0-9a-fA-F]+)>")

# Frames whose `self` is the object the thread is waiting on, and how it waits.
_WAITING_FRAMES = {
    "Condition.wait": LockEventKind.PARKING,
    "Condition.wait_for": LockEventKind.PARKING,
    "Event.wait": LockEventKind.PARKING,
    "Semaphore.acquire": LockEventKind.PARKING,
    "BoundedSemaphore.acquire": LockEventKind.PARKING,
    "Barrier.wait": LockEventKind.PARKING,
    "Thread.join": LockEventKind.WAITING_ON,
    "Thread._wait_for_tstate_lock": LockEventKind.WAITING_ON,
}


def python_frame(function: str, location: str, variables: tuple[Variable, ...]) -> Frame:
    file, colon, line = location.rpartition(":")
    text = f"{function} ({location})"
    if colon and is_decimal(line):
        return Frame(text, function, file, int(line), False, None, variables)
    # `--native`: "PyThread_acquire_lock_timed (libpython3.11.so.1.0)" names a library, no line.
    return Frame(text, function, location or None, None, True, None, variables)


def _events_from_locals(frames: list[Frame], header_line_no: int) -> list[LockEvent]:
    events: list[LockEvent] = []
    for index, frame in enumerate(frames):
        kind = _WAITING_FRAMES.get(frame.function)
        if kind is None or events:
            continue
        for variable in frame.locals:
            if variable.name == "self":
                match = _ADDRESS.search(variable.value)
                if match:
                    events.append(
                        LockEvent(
                            kind,
                            int(match["address"], 16),
                            match["type"],
                            index,
                            header_line_no,
                            f"{frame.text}: self = {variable.value}",
                        )
                    )
    return events


def _status(active: bool) -> tuple[ThreadState, ThreadStatus]:
    # py-spy calls a thread idle when it is not running Python code: in a lock, a sleep, I/O.
    return (
        (ThreadState.RUNNABLE, ThreadStatus.RUNNABLE) if active else (ThreadState.WAITING, ThreadStatus.IDLE)
    )


def pyspy_thread(
    name: str, flags: str, header: str, line_no: int, frames: list[Frame], stack_line_no: int = 0
) -> Thread:
    frames = qualify_methods(frames)
    if "active" in flags or "idle" in flags:
        state, status = _status("active" in flags)
    else:
        # A core file (`py-spy dump --core`): the top frame tells, as for faulthandler.
        state, status = _status(not is_waiting(frames))
    return Thread(
        name=name,
        state=state,
        status=status,
        line_no=line_no,
        header=header,
        frames=tuple(frames),
        lock_events=tuple(_events_from_locals(frames, line_no)),
        stack_line_no=stack_line_no,
    )


class _TextDump:
    def __init__(self, source: str, index: int, line_no: int) -> None:
        self.source = source
        self.index = index
        self.line_no = line_no
        self.end_line_no = line_no
        self.pid: int | None = None
        self.banner: str | None = None
        self.threads: list[Thread] = []
        self.unparsed: list[UnparsedLine] = []
        self.unparsed_count = 0
        self.rejoined = 0  # lines cut by hard wrapping, joined back (see pyspyrewrap)

    def build(self) -> ThreadDump:
        return ThreadDump(
            source=self.source,
            index=self.index,
            format=DumpFormat.PYSPY,
            line_no=self.line_no,
            end_line_no=self.end_line_no,
            threads=tuple(self.threads),
            banner=self.banner,
            producer="py-spy",
            pid=self.pid,
            unparsed=tuple(self.unparsed),
            unparsed_count=self.unparsed_count,
            notes=(rejoined_note(self.rejoined),) if self.rejoined else (),
        )


def parse_pyspy_text(batches: Iterable[list[str]], source: str) -> Iterator[ThreadDump]:
    reader = _PySpyTextReader(source)
    # Lines hard wrapping cut in two come joined back (blank lines, meaningless here, are dropped).
    for line_no, line, joined in logical_lines(batches):
        finished = reader.feed(line_no, line, joined)
        if finished is not None:
            yield finished
    last = reader.finish()
    if last is not None:
        yield last


class _PySpyTextReader:
    """`py-spy dump` text, read line by line: processes, threads, frames and their variables."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.dump: _TextDump | None = None
        self.thread_header: re.Match[str] | None = None
        self.header_line_no = 0
        self.frames: list[Frame] = []
        self.pending_frame: tuple[str, str] | None = None
        self.variables: list[Variable] = []
        self.in_arguments = False
        self.count = 0
        self.rejoined_in_thread = False
        # A dump quoted as a Markdown indented code block in a page: its own layout under the indent.
        self.block_indent = ""

    def _close_frame(self) -> None:
        if self.pending_frame is not None:
            function, location = self.pending_frame
            self.frames.append(python_frame(function, location, tuple(self.variables)))
        self.pending_frame, self.variables = None, []

    def _close_thread(self) -> None:
        self._close_frame()
        header = self.thread_header
        if header is not None and self.dump is not None:
            self.dump.threads.append(
                pyspy_thread(
                    header["name"] or "",
                    header["flags"] or "",
                    header.group(0).rstrip(),
                    self.header_line_no,
                    self.frames,
                    # Frame line numbers follow from the layout, unless wrapped lines were joined.
                    0 if self.rejoined_in_thread else self.header_line_no + 1,
                )
            )
        self.thread_header, self.frames, self.rejoined_in_thread = None, [], False

    def _new_dump(self, line_no: int) -> _TextDump:
        self.dump = _TextDump(self.source, self.count, line_no)
        self.count += 1
        return self.dump

    def finish(self) -> ThreadDump | None:
        self._close_thread()
        return self.dump.build() if self.dump is not None else None

    def feed(self, line_no: int, line: str, joined: bool) -> ThreadDump | None:
        """Read one (logical) line; return the dump it ends, if it ends one."""
        stripped = line.strip()
        indent = len(line) - len(line.lstrip())
        if indent >= 4 and _heads_dump_or_thread(stripped):
            self.block_indent = line[:indent]
        if self.block_indent and line.startswith(self.block_indent):
            line = line[len(self.block_indent) :]
            indent -= len(self.block_indent)
        if indent == 0:
            process = _PROCESS.match(line)
            if process:
                ended = self.finish()
                started = self._new_dump(line_no)
                started.pid = decimal(process["pid"])
                started.rejoined += joined
                return ended
            if self._flush_left(line, line_no, joined):
                return None
        dump = self.dump
        if dump is None:
            return None
        dump.end_line_no = line_no
        if joined:
            dump.rejoined += 1
            self.rejoined_in_thread = True
        if not self._stack_line(stripped, indent) and not _SUBPROCESS_LINE.match(line):
            dump.unparsed_count += 1
            if len(dump.unparsed) < MAX_UNPARSED_KEPT:
                dump.unparsed.append(UnparsedLine(line_no, line))
        return None

    def _flush_left(self, line: str, line_no: int, joined: bool) -> bool:
        """A thread's header, or the Python version line under the process's."""
        thread = _THREAD.match(line) or PYSPY_CORE.match(line)
        if thread:
            self._close_thread()
            dump = self.dump if self.dump is not None else self._new_dump(line_no)
            self.thread_header, self.header_line_no = thread, line_no
            dump.end_line_no = line_no
            dump.rejoined += joined
            self.rejoined_in_thread = joined
            return True
        if _PYTHON.match(line) and self.dump is not None:
            self.dump.banner = line.strip()
            return True
        return False

    def _stack_line(self, stripped: str, indent: int) -> bool:
        """A frame of the open thread, or a variable of its last frame (py-spy dump --locals)."""
        if self.thread_header is None:
            return False
        if indent >= 8 and self.pending_frame is not None:
            if stripped in ("Arguments:", "Locals:"):
                self.in_arguments = stripped == "Arguments:"
                return True
            name, colon, value = stripped.partition(": ")
            if colon or stripped.endswith(":"):
                self.variables.append(Variable(name.rstrip(":"), value, self.in_arguments))
                return True
        if indent >= 4:
            frame = _FRAME.match(stripped)
            if frame:
                self._close_frame()
                self.pending_frame = (frame["function"], frame["location"])
                self.in_arguments = False
                return True
        return False


def _heads_dump_or_thread(text: str) -> bool:
    return bool(_THREAD.match(text) or _PROCESS.match(text) or PYSPY_CORE.match(text))
