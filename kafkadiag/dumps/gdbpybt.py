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
    dump: PythonDump | None = None
    count = 0
    header: _Header | None = None
    header_line_no = 0
    frames: list[Frame] = []
    frame_line_nos: list[int] = []
    sources: dict[int, str] = {}
    line_no = 0
    c_frames = 0  # gdb's C frame lines in the dump being read

    def close_thread() -> None:
        nonlocal header, frames, sources, frame_line_nos
        if header is not None and dump is not None:
            top_python = next((i for i, frame in enumerate(frames) if not frame.native), None)
            top_source = sources.get(top_python) if top_python is not None else None
            dump.threads.append(
                python_thread(
                    header.name,
                    header.text,
                    header_line_no,
                    frames,
                    top_source=top_source,
                    frame_line_nos=tuple(frame_line_nos),
                )
            )
            dump.seen.add(header.key)
            dump.end_line_no = line_no
        header, frames, sources, frame_line_nos = None, [], {}, []

    headerless: list[int] = []  # where stacks pasted without their thread line start
    last_number = -1  # the number of the last numbered frame of the thread being read

    for batch in batches:
        for line in batch:
            line_no += 1
            if not line.strip():
                continue
            thread_header = read_header(line)
            numbered = NUMBERED_FRAME.match(line) if thread_header is None else None
            if numbered is not None:
                frame_number = int(numbered["number"])
                next_stack = frame_number < last_number or _ends_a_thread(frames)
                if header is None or (header.key.startswith(_HEADERLESS) and next_stack):
                    name = headerless_name(line_no)
                    thread_header = _Header(f"{_HEADERLESS}{line_no}", name, line.rstrip())
                    headerless.append(line_no)
                last_number = frame_number
            if thread_header is None and line.startswith(TRACEBACK) and header is None:
                # A lone `py-bt` of the thread gdb stopped in, no thread line before it.
                thread_header = _Header("current", "current thread", line.rstrip())
            if thread_header:
                close_thread()
                if numbered is None:
                    last_number = -1
                if dump is None or thread_header.key in dump.seen:
                    if dump is not None:
                        yield _finished(dump, c_frames, headerless)
                    dump = PythonDump(source, count, line_no, DumpFormat.GDB_PY_BT, "gdb")
                    count += 1
                    c_frames = 0
                header, header_line_no = thread_header, line_no
                if numbered is None:
                    continue
            if header is None or dump is None:
                continue  # gdb's own lines before the first thread
            if line.startswith(TRACEBACK) or KNOWN_EXTRA.match(line) or GDB_OWN_LINE.match(line):
                c_frames += C_FRAME.match(line) is not None
                continue
            frame = FRAME.match(line)
            if frame:
                function, file, number = (
                    frame.group("function", "file", "line")
                    if frame["function"]
                    else frame.group("full_function", "full_file", "full_line")
                )
                frames.append(python_frame(line, function, file, decimal(number)))
                frame_line_nos.append(line_no)
                continue
            builtin = BUILTIN.match(line)
            if builtin:
                frames.append(native_frame(line, builtin["function"]))
                frame_line_nos.append(line_no)
                continue
            if frames and line.startswith("    ") and len(frames) - 1 not in sources:
                sources[len(frames) - 1] = line.strip()
                continue
            dump.unparsed.add(line_no, line)
    close_thread()
    if dump is not None:
        yield _finished(dump, c_frames, headerless)
