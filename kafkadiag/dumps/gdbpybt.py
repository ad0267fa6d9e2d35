"""gdb's `thread apply all py-bt`: Python stacks read from outside by CPython's gdb extension.

    Thread 4 (Thread 0x7f5fc56596c0 (LWP 27352) "python3.11"):
    Traceback (most recent call first):
      <built-in method __enter__ of _thread.lock object at remote 0x7f5fc6712580>   a C function
      File "/usr/lib/python3.11/threading.py", line 320, in wait
        waiter.acquire()                                                            its source line

gdb numbers threads itself; `LWP` is the Linux thread id (py-spy's thread number) and the quoted
name is the OS thread name, which CPython before 3.14 leaves as the program's. A thread is named
`LWP <n>` so that it can be matched with a py-spy dump of the same process. gdb prints its own
lines around the stacks (`[New LWP ...]`, the frame it stopped in, `Unable to locate python
frame` for threads that run no Python): they are kept as unparsed lines or ignored.

`py-bt-full` (and `py-bt` of Python 2.7, as old bug reports carry it) numbers each frame and gives
its locals instead of a `File` line:

    #13 Frame 0x7efd043321f0, for file /app/poll_queue_full.py, line 40, in process_record (record='x')
        with state_lock:
    #9 <built-in method __enter__ of _thread.lock object at remote 0x7efd04d4e1c0>
    #4 Waiting for a lock (e.g. GIL)

The locals are gdb's renderings of remote objects, not py-spy's: they are not kept.

A session pasted as typed also reads: `thread 5` answered by `[Switching to thread 5 (Thread 0x...
(LWP 27352))]` and then `py-bt` is that thread; a lone `py-bt` is "current thread". Prompts
(`(gdb) `, gdb-dashboard's `>>> `) and the C frame gdb stopped in are skipped.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from typing import NamedTuple

from kafkadiag.digits import decimal
from kafkadiag.dumps.excerpts import headerless_name
from kafkadiag.dumps.pythreads import PythonDump, native_frame, python_frame, python_thread
from kafkadiag.model import DumpFormat, Frame, ThreadDump

THREAD_HEADER = re.compile(
    r"^Thread (?P<number>\d+) \(Thread (?P<pthread>0x[0-9a-fA-F]+) \(LWP (?P<lwp>\d+)\)"
    r'(?: "(?P<name>.*)")?\):\s*$'
    # gdb's answer to `thread N`, before a `py-bt` of that one thread
    r"|^\[Switching to thread (?P<switched>\d+) \(Thread (?P<switched_pthread>0x[0-9a-fA-F]+)"
    r" \(LWP (?P<switched_lwp>\d+)\)\)\]\s*$"
)
TRACEBACK = "Traceback (most recent call first):"
# gdb's prompt and commands ("(gdb) py-bt", gdb-dashboard's ">>> thread 1"), a C frame it stopped
# in ("#0  PyException_GetContext (self=...) at Objects/exceptions.c:350") and the source line it
# quotes under it ("350\t    PyObject *context = ..."): the C side, before the Python stack. A
# function gdb has no symbol for is "??" ("#1  0x00007fc6fbeb8aae in ?? () from librdkafka.so.1").
GDB_OWN_LINE = re.compile(r"^(?:\(gdb\) |>>> )|^#\d+\s+(?:0x[0-9a-fA-F]+ in )?(?:\w+|\?\?) \(|^\d+\t")
FRAME = re.compile(
    r'^\s+File "(?P<file>.*)", line (?P<line>\d+), in (?P<function>.+?)\s*$'
    r"|^#\d+ Frame 0x[0-9a-fA-F]+, for file (?P<full_file>.*?), line (?P<full_line>\d+), "
    r"in (?P<full_function>[^\s(]+)"
)
BUILTIN = re.compile(r"^(?:\s+|#\d+ )<built-in (?:method|function) (?P<function>[\w.]+)")
# Lines the extension prints where a frame cannot be shown; they say nothing about state.
KNOWN_EXTRA = re.compile(
    r"^\s*(?:#\d+ )?(?:Unable to locate python frame|Waiting for the GIL|Waiting for a lock|"
    r"Garbage-collecting|"
    r"\(unable to read python frame information\)|\(frame information optimized out\))"
    # gdb's own status lines: "[New LWP 1235]", "[Inferior 1 (process 1234) detached]".
    r"|^\[.*\]\s*$"
)


C_FRAME = re.compile(r"^#\d+\s+")
# A py-bt-full (or Python 2.7 py-bt) frame, numbered from the innermost: an excerpt pasted without
# its thread line starts with one, and a number lower than the one before (or any frame after a
# thread's outermost one) starts the next stack.
NUMBERED_FRAME = re.compile(r"^#(?P<number>\d+) (?:Frame 0x|<built-in )")
NOTE_HEADERLESS = (
    "py-bt frames without a thread line before them (from line {lines}): each run of frames read "
    "as a thread named '(no header, line N)'; which thread ran them is not in the text"
)
NOTE_C_ONLY = (
    "gdb printed C stacks only (`bt`, not `py-bt`): no thread has a Python frame to analyse; run "
    "`thread apply all py-bt` with CPython's gdb extension loaded (python3.X-gdb.py), or py-spy dump"
)


def _ends_a_thread(frames: list[Frame]) -> bool:
    """The outermost frame of every thread the threading module started: nothing runs below it."""
    return (
        bool(frames)
        and frames[-1].function.rpartition(".")[2] == "_bootstrap"
        and ((frames[-1].file or "").endswith("threading.py"))
    )


def _finished(dump: PythonDump, c_frames: int, headerless: list[int]) -> ThreadDump:
    """The dump, saying so when gdb showed C frames and no thread got a Python one, and where
    stacks had no thread line."""
    if c_frames and not any(thread.frames for thread in dump.threads):
        dump.notes.append(NOTE_C_ONLY)
    starts = [line_no for line_no in headerless if dump.line_no <= line_no <= dump.end_line_no]
    if starts:
        dump.notes.append(NOTE_HEADERLESS.format(lines=", ".join(map(str, starts[:5]))))
    return dump.build()


_HEADERLESS = "no header: "


class _Header(NamedTuple):
    key: str  # gdb's thread number: a number seen again starts the next dump
    name: str  # `LWP <n>`, the Linux thread id py-spy also shows
    text: str  # the line as printed


def read_header(line: str) -> _Header | None:
    match = THREAD_HEADER.match(line)
    if match is None:
        return None
    lwp = match["lwp"] or match["switched_lwp"]
    return _Header(match["number"] or match["switched"], f"LWP {lwp}", match.group(0))


def parse_gdb_py_bt(batches: Iterable[list[str]], source: str) -> Iterator[ThreadDump]:
    reader = _GdbReader(source)
    line_no = 0
    for batch in batches:
        for line in batch:
            line_no += 1
            if not line.strip():
                continue
            finished = reader.feed(line_no, line)
            if finished is not None:
                yield finished
    last = reader.finish(line_no)
    if last is not None:
        yield last


class _GdbReader:
    """gdb's `thread apply all py-bt` (or one `py-bt`), read line by line."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.dump: PythonDump | None = None
        self.count = 0
        self.header: _Header | None = None
        self.header_line_no = 0
        self.frames: list[Frame] = []
        self.frame_line_nos: list[int] = []
        self.sources: dict[int, str] = {}
        self.c_frames = 0  # gdb's C frame lines in the dump being read
        self.headerless: list[int] = []  # where stacks pasted without their thread line start
        self.last_number = -1  # the number of the last numbered frame of the thread being read

    def _close_thread(self, line_no: int) -> None:
        header, dump, frames = self.header, self.dump, self.frames
        if header is not None and dump is not None:
            top_python = next((i for i, frame in enumerate(frames) if not frame.native), None)
            top_source = self.sources.get(top_python) if top_python is not None else None
            dump.threads.append(
                python_thread(
                    header.name,
                    header.text,
                    self.header_line_no,
                    frames,
                    top_source=top_source,
                    frame_line_nos=tuple(self.frame_line_nos),
                )
            )
            dump.seen.add(header.key)
            dump.end_line_no = line_no
        self.header, self.frames, self.sources, self.frame_line_nos = None, [], {}, []

    def finish(self, line_no: int) -> ThreadDump | None:
        self._close_thread(line_no)
        return _finished(self.dump, self.c_frames, self.headerless) if self.dump is not None else None

    def _thread_header(self, line_no: int, line: str) -> tuple[_Header | None, bool]:
        """The header of the thread `line` starts, if it starts one, and whether it is a numbered
        frame (the first of a stack pasted without its thread line, or a frame)."""
        thread_header = read_header(line)
        numbered = NUMBERED_FRAME.match(line) if thread_header is None else None
        if numbered is not None:
            frame_number = int(numbered["number"])
            next_stack = frame_number < self.last_number or _ends_a_thread(self.frames)
            if self.header is None or (self.header.key.startswith(_HEADERLESS) and next_stack):
                name = headerless_name(line_no)
                thread_header = _Header(f"{_HEADERLESS}{line_no}", name, line.rstrip())
                self.headerless.append(line_no)
            self.last_number = frame_number
        if thread_header is None and line.startswith(TRACEBACK) and self.header is None:
            # A lone `py-bt` of the thread gdb stopped in, no thread line before it.
            thread_header = _Header("current", "current thread", line.rstrip())
        return thread_header, numbered is not None

    def feed(self, line_no: int, line: str) -> ThreadDump | None:
        """Read one line; return the dump it ends, if it ends one (a thread seen again)."""
        ended = None
        thread_header, numbered = self._thread_header(line_no, line)
        if thread_header:
            self._close_thread(line_no)
            if not numbered:
                self.last_number = -1
            if self.dump is None or thread_header.key in self.dump.seen:
                if self.dump is not None:
                    ended = _finished(self.dump, self.c_frames, self.headerless)
                self.dump = PythonDump(self.source, self.count, line_no, DumpFormat.GDB_PY_BT, "gdb")
                self.count += 1
                self.c_frames = 0
            self.header, self.header_line_no = thread_header, line_no
            if not numbered:
                return ended
        if self.header is not None and self.dump is not None:  # else gdb's own lines before a thread
            self._stack_line(self.dump, line_no, line)
        return ended

    def _stack_line(self, dump: PythonDump, line_no: int, line: str) -> None:
        if line.startswith(TRACEBACK) or KNOWN_EXTRA.match(line) or GDB_OWN_LINE.match(line):
            self.c_frames += C_FRAME.match(line) is not None
            return
        frame = FRAME.match(line)
        if frame:
            function, file, number = (
                frame.group("function", "file", "line")
                if frame["function"]
                else frame.group("full_function", "full_file", "full_line")
            )
            self.frames.append(python_frame(line, function, file, decimal(number)))
            self.frame_line_nos.append(line_no)
            return
        builtin = BUILTIN.match(line)
        if builtin:
            self.frames.append(native_frame(line, builtin["function"]))
            self.frame_line_nos.append(line_no)
            return
        frames = self.frames
        if frames and line.startswith("    ") and len(frames) - 1 not in self.sources:
            self.sources[len(frames) - 1] = line.strip()
            return
        dump.unparsed.add(line_no, line)
