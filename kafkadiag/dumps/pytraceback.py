"""Thread stacks printed with the traceback module from `sys._current_frames()`.

Two published shapes, each a thread header followed by its frames, outermost first:

The recipe copied across blogs and Stack Overflow (a SIGUSR1 handler):

    # Thread: worker-0(139650849457856)          also `# ThreadID: 139650849457856`
    File: "/usr/lib/python3.11/threading.py", line 1002, in _bootstrap
      self._bootstrap_inner()                    the source line (same line in some copies)

`traceback.print_stack(frame)` / `format_stack` under a line naming the thread, which people
write in many ways: the thread's repr (`<Thread(worker-0, started daemon 1396...)>`, perhaps
after `thread `), `Thread ID: 1396... (main thread)`, pytest-timeout's `~~~ Stack of worker-0
(1396...) ~~~`, or just the name:

    <Thread(worker-0, started daemon 139650849457856)>
      File "/usr/lib/python3.11/threading.py", line 1002, in _bootstrap
        self._bootstrap_inner()
        ^^^^^^^^^^^^^^^^^^^^^^^                  Python 3.11+ may underline the expression
      [Previous line repeated 117 more times]    3.6+ folds a recursion: unfolded here

pystack (`pystack remote PID`, `pystack core FILE`) prints the same frames with `(Python) ` or,
with `--native`, `(C) ` before each, under `Traceback for thread 20506 (python) [Has the GIL]
(most recent call last):`. Threads are named `LWP <OS thread id>`, as gdb's are; a thread pystack
shows without the GIL is blocked in C, as py-spy's idle ones are.

Frames are stored innermost first like every other format. The header is any line that is not
a frame nor indented under one; a header without frames (a banner, a log line) is kept as an
unparsed line. Stacks printed with no line naming them (print_stack of each frame or greenlet
in turn) are told apart by a blank line, or by a frame that only opens a stack (a thread's
`_bootstrap`, an eventlet greenthread's `main`). A thread ident seen twice starts another dump
(one file, one dump per signal).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from kafkadiag.digits import decimal
from kafkadiag.dumps.pythreads import PythonDump, native_frame, python_frame, python_thread
from kafkadiag.model import DumpFormat, Frame, Thread, ThreadDump, ThreadState, ThreadStatus

RECIPE_FRAME = re.compile(
    r'^File: "(?P<file>.*)", line (?P<line>\d+), in (?P<function>\S+)(?:  (?P<source>.*))?$'
)
TRACEBACK_FRAME = re.compile(
    r'^(?P<indent>\s*)File "(?P<file>.*)", line (?P<line>\d+), in (?P<function>.+?)\s*$'
)
# pystack (`pystack remote PID`, `pystack core FILE`): each frame says whether it is Python's or C's.
PYSTACK_FRAME = re.compile(
    r'^(?P<indent>\s*)\((?P<kind>Python|C)\) File "(?P<file>.*)", line (?P<line>\d+), '
    r"in (?P<function>.+?)\s*$"
)
CARETS = re.compile(r"^\s*[~^]+\s*$")
# Python 3.6+ folds a frame repeated more than three times in a row (recursion) into this line.
REPEATED = re.compile(r"^\s*\[Previous line repeated (?P<times>\d+) more times?\]\s*$")
# A folded recursion is unfolded up to this many frames: enough for any rule, bounded in memory.
MAX_UNFOLDED = 1000

# Thread headers: (pattern, what it names). Tried in order; the first match wins.
RECIPE_THREAD = re.compile(r"^# Thread: (?P<name>.*)\((?P<ident>\d+)\)\s*$")
RECIPE_THREAD_ID = re.compile(r"^# ThreadID: (?P<ident>\d+)\s*$")
THREAD_REPR = re.compile(r"<\w+\((?P<name>.*), (?:started|initial|stopped)(?: daemon)? ?(?P<ident>\d+)?\)>")
THREAD_ID_LINE = re.compile(r"^Thread ID: (?P<ident>\d+)(?: \((?P<name>[^)]*)\))?")
# pytest-timeout's dump of every thread when a test hangs: "~~~~ Stack of helper (1399...) ~~~~".
PYTEST_TIMEOUT = re.compile(r"^~+ Stack of (?P<name>.*) \((?P<ident>\d+)\) ~+$")
# pystack: "Traceback for thread 20506 (python) [Has the GIL] (most recent call last):", the OS
# thread id, its OS name (the program's, for every thread before Python 3.14) and the GIL.
PYSTACK_THREAD = re.compile(r"^Traceback for thread (?P<ident>\d+) \((?P<name>[^)]*)\) \[(?P<gil>[^\]]*)\]")
# The shapes that name a thread by its name or ident, in the order they are tried (pystack's aside).
_NAMING_SHAPES = (RECIPE_THREAD, RECIPE_THREAD_ID, THREAD_REPR, THREAD_ID_LINE, PYTEST_TIMEOUT)


def thread_identity(header: str) -> tuple[str, str | None]:
    """(name, ident) from a header line; the line itself is the name when no shape matches."""
    text = header.strip()
    pystack = PYSTACK_THREAD.match(text)
    if pystack:
        return f"LWP {pystack['ident']}", pystack["ident"]
    for pattern in _NAMING_SHAPES:
        match = pattern.search(text)
        if match:
            groups = match.groupdict()
            ident = groups.get("ident")
            name = groups.get("name") or ident or text
            return name, ident
    return text.rstrip(":").strip() or "(unnamed)", None


def names_a_thread(header: str) -> bool:
    """The header has one of the known shapes (a thread's repr, `# Thread:`, pystack's...)."""
    text = header.strip()
    return PYSTACK_THREAD.match(text) is not None or any(pattern.search(text) for pattern in _NAMING_SHAPES)


def _not_a_header(line: str) -> bool:
    """An indented line, or a run of dots: never a line that names a thread."""
    return line[:1] in (" ", "\t") or not line.strip(". \u2026")


def read_frame(line: str) -> tuple[Frame, int] | None:
    """A frame line of either shape, and its indentation (0 for the recipe's `File:`)."""
    match = RECIPE_FRAME.match(line)
    if match:
        return _frame(line, match), 0
    match = TRACEBACK_FRAME.match(line)
    if match:
        return _frame(line, match), len(match["indent"])
    match = PYSTACK_FRAME.match(line)
    if match:
        if match["kind"] == "C":
            # "PyThread_acquire_lock_timed (/usr/bin/python3.11)", "... (inlined) (libc.so.6)"
            return native_frame(line, match["function"].split(" (", 1)[0]), len(match["indent"])
        return _frame(line, match), len(match["indent"])
    return None


def _frame(line: str, match: re.Match[str]) -> Frame:
    return python_frame(line, match["function"], match["file"], decimal(match["line"]))


# pystack's GIL words for a thread running Python code or about to; a thread with none is blocked
# in C (a lock, a sleep, I/O), as py-spy's "idle".
_RUNNING_GIL = ("Has the GIL", "Waiting for the GIL", "Taking the GIL", "Dropping the GIL", "Garbage")


def _pystack_status(header: str, thread: Thread) -> Thread:
    match = PYSTACK_THREAD.match(header.strip())
    if match is None:
        return thread
    if match["gil"].startswith(_RUNNING_GIL):
        return thread._replace(state=ThreadState.RUNNABLE, status=ThreadStatus.RUNNABLE)
    return thread._replace(state=ThreadState.WAITING, status=ThreadStatus.IDLE)


class StackReader:
    """Frames of one traceback-style block, outermost first, with the source line under each."""

    def __init__(self) -> None:
        self.frames: list[Frame] = []
        self.line_nos: list[int] = []
        self.sources: list[str] = []
        self.indent = -1

    def feed(self, line: str, line_no: int) -> bool:
        """Take `line` if it is a frame or indented under the last frame; False otherwise."""
        if self._rejoined(line, line_no):
            return True
        read = read_frame(line)
        if read is not None:
            frame, indent = read
            self.frames.append(frame)
            self.line_nos.append(line_no)
            inline = RECIPE_FRAME.match(line)
            self.sources.append((inline["source"] or "") if inline else "")
            self.indent = indent
            return True
        repeated = REPEATED.match(line) if self.frames else None
        if repeated is not None:
            times = min(int(repeated["times"]), MAX_UNFOLDED)
            self.frames += [self.frames[-1]] * times
            self.line_nos += [self.line_nos[-1]] * times
            self.sources += [self.sources[-1]] * times
            return True
        if self.frames and len(line) - len(line.lstrip()) > self.indent:
            if not self.sources[-1] and not CARETS.match(line):
                self.sources[-1] = line.strip()
            return True
        return False

    def _rejoined(self, line: str, line_no: int) -> bool:
        """The end of a frame line that hard wrapping cut inside its function's name
        (`..., in _wait_for_slot_avai` / `lable`): one word, on the line right after the frame and
        no deeper than it (its source line is indented under it)."""
        if not self.frames or self.line_nos[-1] != line_no - 1 or self.sources[-1]:
            return False
        rest = line.strip()
        if len(line) - len(line.lstrip()) > self.indent:
            return False  # indented under the frame: its source line
        if not rest or " " in rest or rest.startswith(("File", "[")):
            return False
        read = read_frame(self.frames[-1].text + rest)
        if read is None:
            return False
        self.frames[-1] = read[0]
        self.line_nos[-1] = line_no  # the source line, if any, follows this one
        return True

    def has_python_frames(self) -> bool:
        """Read past the C frames a native stack starts with (pystack --native)."""
        return any(not frame.native for frame in self.frames)

    def thread(self, name: str, header: str, line_no: int) -> Thread:
        """The thread these frames are the stack of, its status read from the top frame."""
        return python_thread(
            name,
            header,
            line_no,
            self.innermost_first(),
            top_source=self.top_source,
            frame_line_nos=self.line_nos_innermost_first(),
        )

    def innermost_first(self) -> list[Frame]:
        return list(reversed(self.frames))

    def line_nos_innermost_first(self) -> tuple[int, ...]:
        return tuple(reversed(self.line_nos))

    @property
    def top_source(self) -> str | None:
        return self.sources[-1] if self.sources else None


# Frames only ever at the bottom of a stack: where a thread or a greenthread starts.
OUTERMOST = (("threading.py", "_bootstrap"), ("eventlet/greenthread.py", "main"))


def _outermost(line: str) -> bool:
    """A frame line that can only open a stack (stacks are printed outermost first)."""
    read = read_frame(line)
    if read is None:
        return False
    frame = read[0]
    path = (frame.file or "").replace("\\", "/")
    return any(path.endswith(file) and frame.function == function for file, function in OUTERMOST)


# One loop over the lines, its state in a few locals: headers, frames and the lines that end a
# stack, in the order they are tested; longer than 60 lines, shorter than the class it would become.
def parse_py_traceback(batches: Iterable[list[str]], source: str) -> Iterator[ThreadDump]:
    dump: PythonDump | None = None
    count = 0
    header: str | None = None
    header_line_no = 0
    stack = StackReader()
    line_no = 0
    between: list[tuple[int, str]] = []  # lines not understood before the dump they belong to

    def close_thread() -> Iterator[ThreadDump]:
        """Add the thread being read; yields the previous dump when its ident repeats."""
        nonlocal header, stack, dump, count
        if header is not None and stack.frames:
            name, ident = thread_identity(header)
            # A stack no line names is no thread seen again: only a named one starts another dump.
            key = ident or (name if header.strip() else None)
            if dump is None or key in dump.seen:
                if dump is not None:
                    yield dump.build()
                dump = PythonDump(source, count, header_line_no, DumpFormat.PY_TRACEBACK, "traceback")
                count += 1
            for number, text in between:
                dump.unparsed.add(number, text)
            between.clear()
            dump.threads.append(_pystack_status(header, stack.thread(name, header, header_line_no)))
            if key is not None:
                dump.seen.add(key)
            dump.end_line_no = line_no - 1
        elif header and dump is not None:
            dump.unparsed.add(header_line_no, header)
        elif header:
            between.append((header_line_no, header))  # before the first thread: kept for its dump
        header, stack = None, StackReader()

    for batch in batches:
        for line in batch:
            line_no += 1
            if not line.strip():
                if header == "" and stack.frames:
                    yield from close_thread()  # a blank line ends a bare stack
                elif header and not stack.frames and not names_a_thread(header):
                    # Prose a blank line parts from the frames ("This bug still exists."): a
                    # line that names a thread in none of the known ways is its name only
                    # when the frames follow it directly.
                    yield from close_thread()
                continue
            if header is not None and stack.has_python_frames() and _outermost(line):
                yield from close_thread()  # the next stack, with no line naming it
            if header is not None and stack.feed(line, line_no):
                continue
            if header and not stack.frames and names_a_thread(header) and _not_a_header(line):
                # Between a thread's header and its first frame, what a person put there: "...."
                # where frames were left out, the source line of a frame cut away above it.
                between.append((line_no, line))
                continue
            yield from close_thread()
            if read_frame(line) is not None:
                # Frames with no line naming their thread (a bare print_stack): one unnamed thread.
                header, header_line_no = "", line_no
                stack.feed(line, line_no)
                continue
            header, header_line_no = line, line_no
    line_no += 1
    yield from close_thread()
    if dump is not None:
        yield dump.build()
