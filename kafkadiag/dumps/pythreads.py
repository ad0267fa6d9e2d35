"""Threads of Python dumps that print stacks but no thread state (faulthandler, traceback, gdb).

py-spy says whether a thread is running Python code; faulthandler, `traceback.print_stack`,
gdb's py-bt, gevent and asyncio print frames only. A thread's status is then read from its top
frame, as the Python rules read py-spy dumps: a thread whose innermost frame is one of the
standard library's waits (Condition.wait, Queue.get, a selector's select, Thread.join) or any
`acquire` (a library's lock wrapper, which waits in the C acquire it wraps) is IDLE.
When the dump quotes the source line of an application frame on top (traceback, gdb), a call
that blocks on that line (`time.sleep(...)`, `lock.acquire()`, `with lock:`) makes it IDLE too.
Anything else is RUNNABLE: as far as the dump shows, the thread runs Python code.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from kafkadiag.dumps.pyqualify import qualify_methods
from kafkadiag.model import DumpFormat, Frame, Thread, ThreadDump, ThreadState, ThreadStatus, UnparsedLine

MAX_UNPARSED_KEPT = 200

# Standard-library functions (as pyqualify names them) that wait in C for a lock, a timer or I/O.
WAITING_FUNCTIONS = frozenset(
    {
        "Condition.wait",
        "Condition.wait_for",
        "Event.wait",
        "Semaphore.acquire",
        "BoundedSemaphore.acquire",
        "Barrier.wait",
        "Barrier._wait",
        "Thread.join",
        "Thread._wait_for_tstate_lock",
        "Queue.get",
        "Queue.put",
        "Future.result",
        "Future.exception",
    }
)
# Modules whose functions on top of a stack mean a wait in a system call (or, for a greenlet, a
# switch to the hub that waits for it).
WAITING_MODULES = (
    "selectors.py",
    "socket.py",
    "ssl.py",
    "subprocess.py",
    "gevent/hub.py",
    "eventlet/hubs/hub.py",
)
# C functions that block, when a format prints them above the Python frames (gdb's
# `<built-in method acquire of _thread.lock ...>`; `with lock:` calls the lock's __enter__).
BLOCKING_BUILTINS = frozenset(
    {"sleep", "acquire", "__enter__", "select", "poll", "recv", "recv_into", "accept", "wait", "join"}
)
# A source line that blocks in C: the frame printed on top cannot be below the call, the call
# is in C, so the line itself says what the thread waits for.
BLOCKING_SOURCE = re.compile(
    r"\bsleep\(|\.acquire\(|\.wait\(|\.result\(|\.recv\w*\(|\.accept\(|\.select\(|"
    r"\bwith\s+[\w.]*(?:lock|_lock|cond|condition|mutex|semaphore)\w*\s*:",
    re.IGNORECASE,
)


def python_frame(text: str, function: str, file: str | None, line: int | None) -> Frame:
    """A frame of Python code; `text` is the frame as printed, for quoting."""
    return Frame(text.strip(), function, file, line, False)


def native_frame(text: str, function: str) -> Frame:
    """A C frame some formats print between Python frames (gdb's `<built-in method ...>`)."""
    return Frame(text.strip(), function, None, None, True)


def is_waiting(frames: Sequence[Frame], top_source: str | None = None) -> bool:
    """Does the innermost Python frame (or the line it stopped on) wait for something?"""
    if frames and frames[0].native and frames[0].function.rpartition(".")[2] in BLOCKING_BUILTINS:
        return True
    top = next((frame for frame in frames if not frame.native), None)
    if top is None:
        return False
    if top.function in WAITING_FUNCTIONS:
        return True
    if top.function.rpartition(".")[2] == "acquire":
        # A lock wrapper's own acquire (tqdm's TqdmDefaultWriteLock, a pool's, a semaphore
        # subclass): on top of a stack it is waiting in the C acquire it wraps.
        return True
    if (top.file or "").replace("\\", "/").endswith(WAITING_MODULES):
        return True
    return bool(top_source and BLOCKING_SOURCE.search(top_source))


def python_thread(
    name: str,
    header: str,
    line_no: int,
    frames: list[Frame],
    stack_line_no: int = 0,
    top_source: str | None = None,
    frame_line_nos: tuple[int, ...] = (),
) -> Thread:
    """A thread with its stdlib methods qualified and its status read from the top frame.

    `frames` are innermost first. `stack_line_no` is the line of the first frame when each frame
    takes exactly one line (faulthandler); otherwise `frame_line_nos` holds each frame's line.
    """
    frames = qualify_methods(frames)
    waiting = is_waiting(frames, top_source)
    return Thread(
        name=name,
        state=ThreadState.WAITING if waiting else ThreadState.RUNNABLE,
        status=ThreadStatus.IDLE if waiting else ThreadStatus.RUNNABLE,
        line_no=line_no,
        header=header.rstrip(),
        frames=tuple(frames),
        stack_line_no=stack_line_no,
        frame_line_nos=frame_line_nos,
    )


class UnparsedKeeper:
    """Counts lines a parser did not understand and keeps the first few for display."""

    def __init__(self) -> None:
        self.lines: list[UnparsedLine] = []
        self.count = 0

    def add(self, line_no: int, text: str) -> None:
        self.count += 1
        if len(self.lines) < MAX_UNPARSED_KEPT:
            self.lines.append(UnparsedLine(line_no, text))


class PythonDump:
    """The dump a parser of Python stacks is reading.

    `seen` holds the keys of the threads read so far (a name, an ident, gdb's thread number): a
    key seen again means the next dump of the same process has begun.
    """

    def __init__(
        self,
        source: str,
        index: int,
        line_no: int,
        dump_format: DumpFormat,
        producer: str,
        banner: str | None = None,
        notes: Sequence[str] = (),
    ) -> None:
        self.source = source
        self.index = index
        self.line_no = line_no
        self.end_line_no = line_no
        self.dump_format = dump_format
        self.producer = producer
        self.banner = banner
        self.notes = list(notes)
        self.threads: list[Thread] = []
        self.seen: set[str] = set()
        self.unparsed = UnparsedKeeper()
        self.signals: list[UnparsedLine] = []  # what the tool itself reported beside the stacks

    def build(self) -> ThreadDump:
        return ThreadDump(
            source=self.source,
            index=self.index,
            format=self.dump_format,
            line_no=self.line_no,
            end_line_no=self.end_line_no,
            threads=tuple(self.threads),
            banner=self.banner,
            producer=self.producer,
            unparsed=tuple(self.unparsed.lines),
            unparsed_count=self.unparsed.count,
            notes=tuple(self.notes),
            log_signals=tuple(self.signals),
        )
