"""faulthandler output: `dump_traceback(all_threads=True)`, `register(signum)`, a fatal error.

Layout (CPython 3.8 to 3.13 print the same lines):

    Fatal Python error: Aborted                          only after a crash (faulthandler.enable)
    <blank>
    Thread 0x00007f1bd5e6b6c0 (most recent call first):  the thread's ident (pthread_self), no name
      File "/usr/lib/python3.11/threading.py", line 327 in wait
      File "app.py", line 12 in poll_loop
    <blank>
    Current thread 0x00007f1bd6a1cb80 (most recent call first):    the thread that got the signal
      File "app.py", line 40 in <module>

`dump_traceback_later(timeout)` prints `Timeout (0:00:05)!` first and calls every thread
`Thread`; `all_threads=False` prints one `Stack (most recent call first):`. A stack deeper than
100 frames ends with `  ...`; a thread without Python frames shows `  <no Python frame>`. After a
fatal error, CPython 3.9+ may add `Python runtime state: ...` and 3.10+ `Extension modules: ...`.

CPython 3.3 and 3.4, and the faulthandler package that backports it to Python 2, print the same
lines, except that a thread's line ends at its ident: `Thread 0x00007f1bd5e6b6c0:`.

CPython 3.14 adds the thread's name in brackets after the ident (`Thread 0x7f.. [w-putter] (most
recent call first):`) and, after a fatal error, the current thread's C stack (`Current thread's C
stack trace`, `Binary file "..."` lines), which carries nothing a diagnosis reads.

Before 3.14 faulthandler prints no thread names, and never a state, and the bare function name (`wait`, not
`Condition.wait`): pythreads qualifies the standard library's and reads the status from the top
frame. Several dumps in one file (a log with one per signal) are split where a banner appears
or a thread ident repeats.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from kafkadiag.digits import decimal
from kafkadiag.dumps.pythreads import PythonDump, python_frame, python_thread
from kafkadiag.model import DumpFormat, Frame, ThreadDump

# CPython 3.14 adds the thread's name as the OS knows it: "Thread 0x00007f.. [w-putter] (most ...".
# CPython 3.3 and 3.4 (and the faulthandler package for Python 2) end the line at the ident.
THREAD_HEADER = re.compile(
    r"^(?P<current>Current thread|Thread) (?P<ident>0x[0-9a-fA-F]+)(?: \[(?P<name>[^\]]*)\])?"
    r"(?: \(most recent call first\))?:\s*$"
)
# `all_threads=False`; the faulthandler package for Python 2 (and CPython 3.3) says "Traceback".
STACK_HEADER = re.compile(r"^(?:Stack|Traceback) \(most recent call first\):\s*$")
# A function name has no space: what follows one is a reporter's note ("<- stuck here").
FRAME = re.compile(r'^\s+File "(?P<file>.*)", line (?P<line>\d+|\?\?\?) in (?P<function>\S+)(?:\s.*)?$')
BANNER = re.compile(r"^(?:Fatal Python error: .*|Timeout \(\d+:\d\d:\d\d(?:\.\d+)?\)!)\s*$")
# Lines faulthandler or Py_FatalError print that carry nothing a diagnosis needs.
# CPython 3.14 follows a fatal error's Python stacks with the current thread's C stack.
KNOWN_EXTRA = re.compile(
    r"^(?:Python runtime state: |Extension modules: |\s+<no Python frame>|\s+\.\.\.\s*$"
    r"|Current thread's C stack trace \(most recent call first\):"
    r"|\s+Binary file \"|\s+<truncated rest of calls>"
    r"|\s+<tracebacks not available on this platform>)"
)


# faulthandler's MAX_FRAME_DEPTH (Python/traceback.c): deeper stacks end with "  ...".
FAULTHANDLER_MAX_FRAMES = 100
NAMES_NOTE = "faulthandler prints no thread names: threads are named by their ident"


class _Dump(PythonDump):
    """A faulthandler dump, which also counts the stacks faulthandler cut at 100 frames."""

    def __init__(self, source: str, index: int, line_no: int, banner: str | None) -> None:
        super().__init__(source, index, line_no, DumpFormat.FAULTHANDLER, "faulthandler", banner, ())
        self.named_threads = False  # CPython 3.14+ prints names
        self.truncated_stacks = 0
        self.elided_stacks = 0
        self._cut_in_thread = False  # the thread being read had a `  ...` line

    def stack_cut(self, frames_above: int) -> None:
        """A `  ...` line: faulthandler's own cut comes after exactly 100 frames; anywhere else a
        person left frames out when pasting."""
        self._cut_in_thread = True
        if frames_above >= FAULTHANDLER_MAX_FRAMES:
            self.truncated_stacks += 1
        else:
            self.elided_stacks += 1

    def thread_ended(self, frame_count: int) -> None:
        """CPython 3.13 cuts at 100 frames without printing `  ...`: a stack of exactly that many
        frames was most likely cut."""
        if frame_count == FAULTHANDLER_MAX_FRAMES and not self._cut_in_thread:
            self.truncated_stacks += 1
        self._cut_in_thread = False

    def build(self) -> ThreadDump:
        if not self.named_threads:
            self.notes.insert(0, NAMES_NOTE)
        if self.truncated_stacks:
            self.notes.append(f"{self.truncated_stacks} stack(s) cut at faulthandler's 100 frames")
        if self.elided_stacks:
            self.notes.append(
                f"{self.elided_stacks} stack(s) shortened by hand ('...' after fewer than 100 frames):"
                " their outer frames are not in the input"
            )
        return super().build()


# One loop over the lines, its state in a few locals: headers, banners, frames and the lines that
# end a thread, in the order they are tested; longer than 60 lines, shorter than a reader class.
def parse_faulthandler(batches: Iterable[list[str]], source: str) -> Iterator[ThreadDump]:
    dump: _Dump | None = None
    count = 0
    header: str | None = None
    ident = ""
    name: str | None = None  # CPython 3.14+ prints it
    header_line_no = 0
    frames: list[Frame] = []
    line_no = 0

    def close_thread() -> None:
        nonlocal header, frames
        if header is not None and dump is not None:
            thread = python_thread(name or ident, header, header_line_no, frames, header_line_no + 1)
            dump.threads.append(thread)
            dump.thread_ended(len(frames))
            dump.seen.add(ident)
        header, frames = None, []

    def new_dump(banner: str | None) -> _Dump:
        nonlocal count
        count += 1
        return _Dump(source, count - 1, line_no, banner)

    for batch in batches:
        for line in batch:
            line_no += 1
            if not line.strip():
                continue
            thread = THREAD_HEADER.match(line)
            if thread or STACK_HEADER.match(line):
                close_thread()
                ident = thread["ident"] if thread else "stack"
                name = thread["name"] if thread else None
                if dump is None or ident in dump.seen:
                    if dump is not None:
                        yield dump.build()
                    dump = new_dump(None)
                dump.named_threads = dump.named_threads or name is not None
                header, header_line_no = line, line_no
                dump.end_line_no = line_no
                continue
            if BANNER.match(line):
                close_thread()
                if dump is not None:
                    yield dump.build()
                dump = new_dump(line.strip())
                continue
            if dump is None:
                continue
            frame = FRAME.match(line) if header is not None else None
            if frame:
                number = frame["line"]
                frames.append(python_frame(line, frame["function"], frame["file"], decimal(number)))
                dump.end_line_no = line_no
                continue
            if KNOWN_EXTRA.match(line):
                if line.strip() == "...":
                    dump.stack_cut(len(frames))
                dump.end_line_no = line_no
                continue
            # Anything else (the application's own output around the dump) ends the thread.
            close_thread()
            dump.unparsed.add(line_no, line)
    close_thread()
    if dump is not None:
        yield dump.build()
