"""gevent's run report: `gevent.util.format_run_info()` / `print_run_info()` (gevent 1.3+).

    ****************************************************************
    * Threads
    ****************************************************************
    Thread 0x7fb553037b80 (MainThread) (CURRENT)
      File "app.py", line 13, in <module>                     traceback.format_stack, outermost first
        print_run_info()
    ****************************************************************
    * Greenlets
    ****************************************************************
    ---- Thread boundary
    <greenlet.greenlet object at 0x7fb5.. (otid=0x55..) current active started main>
     :    Parent: None
     :    Running:
     :      File "app.py", line 13, in <module>
     +--- <Greenlet "kafka-poll-loop" at 0x7fb551cc7ec0: poll_loop>
     :          Parent: <Hub '' at 0x7fb5526e1120 epoll default ...>
     :          Running:
     :            File "app.py", line 7, in poll_loop
     :              records.put(record)
     :          Spawned at:                                    where it was spawned: not its stack
     :            File "app.py", line 11, in <module>

With gevent's monitor thread on, a greenlet that kept the hub from running too long is reported
above the run info (`... : Greenlet <Greenlet at 0x..: blocker> appears to be blocked`, then
`Blocked Stack (for thread id 0x..):` and its frames): that report is kept with the dump.

Every OS thread and every greenlet becomes a thread of the dump, named by the thread's name or
the greenlet's (`Greenlet.name`), the hub `Hub`, a raw greenlet by its address. The tree's
drawing (` : `, ` +--- `) is removed before reading a line. A greenlet gives up the CPU only
where it waits, so every greenlet but the one printing the report is IDLE, even when its top
frame is application code: gevent's queues and locks are compiled, so `records.put(record)`
shows no Queue.put frame below it. OS threads' status is read from the top frame.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from kafkadiag.dumps.detect import GEVENT_TREE_FRAME
from kafkadiag.dumps.excerpts import headerless_name
from kafkadiag.dumps.linefeed import feed_lines, numbered_lines
from kafkadiag.dumps.pythreads import PythonDump
from kafkadiag.dumps.pytraceback import StackReader
from kafkadiag.model import DumpFormat, ThreadDump, ThreadState, ThreadStatus, UnparsedLine

SECTION = re.compile(r"^\* (?P<section>Threads|Greenlets)\s*$")
RULE = re.compile(r"^\*{10,}\s*$")
TREE = re.compile(r"^(?:[ :|]*\+--- |[ :|]*)")
OS_THREAD = re.compile(r"^Thread (?P<ident>0x[0-9a-fA-F]+|\d+) \((?P<name>.*?)\)(?: \(CURRENT\))?\s*$")
GREENLET = re.compile(r'^<Greenlet "(?P<name>[^"]*)" at (?P<address>0x[0-9a-fA-F]+)')
HUB = re.compile(r"^<Hub '(?P<name>[^']*)' at (?P<address>0x[0-9a-fA-F]+)")
RAW_GREENLET = re.compile(r"^<(?:[\w.]+\.)?greenlet(?:\.greenlet)? object at (?P<address>0x[0-9a-fA-F]+)")
# The greenlet printing the report runs; a raw greenlet's repr says `current` when it runs.
REPORTING_FUNCTIONS = frozenset({"format_run_info", "print_run_info"})
# gevent's monitor thread (config.monitor_thread) reporting a greenlet that kept the hub from
# running, above the run info it prints: the report and the blocked greenlet's stack are kept.
BLOCKED_REPORT = re.compile(r"^.* : Greenlet <.*> appears to be blocked\s*$")
BLOCKED_STACK = re.compile(r"^Blocked Stack \(for thread id (?:0x[0-9a-fA-F]+|\d+)\):\s*$")
TREE_FRAME = re.compile(GEVENT_TREE_FRAME)
EXCERPT_NOTE = (
    "an excerpt of gevent's run report, without its '* Greenlets' heading: only the greenlets pasted are read"
)
DETAIL = re.compile(
    r"^(?:Parent|Spawned Greenlets|Spawning parent|Spawn Tree Locals|Greenlet Locals):|^---- Thread boundary"
)


def _greenlet_name(text: str) -> str | None:
    for pattern, label in ((GREENLET, None), (HUB, "Hub"), (RAW_GREENLET, "greenlet")):
        match = pattern.match(text)
        if match:
            if label is None:
                return match["name"]
            if label == "Hub":
                return f"Hub {match['name']}".strip()
            return f"greenlet {match['address']}"
    return None


def parse_gevent_run_info(batches: Iterable[list[str]], source: str) -> Iterator[ThreadDump]:
    # Blank lines and the report's rules say nothing; they keep their numbers all the same.
    lines = ((n, line) for n, line in numbered_lines(batches) if line.strip() and not RULE.match(line))
    return feed_lines(_RunInfoReader(source), lines)


class _RunInfoReader:
    """gevent's run-info report, read line by line: greenlets and OS threads with their stacks."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.dump: PythonDump | None = None
        self.count = 0
        self.name: str | None = None
        self.header = ""
        self.header_line_no = 0
        self.stack = StackReader()
        self.collecting = False  # inside "Running:" (a greenlet) or under an OS thread's header
        self.report: list[UnparsedLine] = []  # the monitor's blocked-greenlet report, for the next dump
        self.in_report = False

    def _close_thread(self) -> None:
        name, header, dump = self.name, self.header, self.dump
        if name is not None and dump is not None:
            thread = self.stack.thread(name, header, self.header_line_no)
            running = " current " in header or any(f.function in REPORTING_FUNCTIONS for f in thread.frames)
            if OS_THREAD.match(header) and "(CURRENT)" in header:
                thread = thread._replace(state=ThreadState.RUNNABLE, status=ThreadStatus.RUNNABLE)
            elif not OS_THREAD.match(header):
                state, status = (
                    (ThreadState.RUNNABLE, ThreadStatus.RUNNABLE)
                    if running
                    else (ThreadState.WAITING, ThreadStatus.IDLE)
                )
                thread = thread._replace(state=state, status=status)
            dump.threads.append(thread)
        self.name, self.stack = None, StackReader()

    def _new_dump(self, line_no: int) -> PythonDump:
        dump = self.dump = PythonDump(self.source, self.count, line_no, DumpFormat.GEVENT, "gevent")
        dump.signals, self.report = self.report, []
        self.count += 1
        return dump

    def finish(self) -> ThreadDump | None:
        self._close_thread()
        return self.dump.build() if self.dump is not None else None

    def feed(self, line_no: int, line: str) -> ThreadDump | None:
        """Read one line; return the dump it ends, if it ends one."""
        if BLOCKED_REPORT.match(line):
            self.report, self.in_report = [UnparsedLine(line_no, line.strip())], True
            return None
        if self.in_report and (BLOCKED_STACK.match(line) or line.startswith("  ")):
            self.report.append(UnparsedLine(line_no, line.rstrip()))
            return None
        self.in_report = False
        section = SECTION.match(line)
        if section:
            self._close_thread()
            if section["section"] == "Threads" or self.dump is None:
                ended = self.dump.build() if self.dump is not None else None
                self._new_dump(line_no)
                return ended
            return None
        os_thread = OS_THREAD.match(line)
        text = TREE.sub("", line, count=1)
        greenlet = None if os_thread else _greenlet_name(text)
        dump = self.dump
        if dump is None:
            if not (greenlet or TREE_FRAME.match(line)):
                return None
            # Pasted from the middle of the report: no "* Greenlets" heading before it.
            dump = self._new_dump(line_no)
            dump.notes.append(EXCERPT_NOTE)
            if not greenlet:
                # Its first frames' greenlet line was left out: a thread named by where they start.
                self.name, self.header, self.header_line_no = headerless_name(line_no), "", line_no
                self.collecting = True
        dump.end_line_no = line_no
        if os_thread or greenlet:
            self._close_thread()
            self.name = os_thread["name"] if os_thread else greenlet
            self.header, self.header_line_no = (line if os_thread else text), line_no
            self.collecting = bool(os_thread)
        elif not self._stack_line(text.strip(), line_no):
            dump.unparsed.add(line_no, line)
        return None

    def _stack_line(self, stripped: str, line_no: int) -> bool:
        """A line of a greenlet's or thread's block: "Running:", a detail, or a stack line."""
        if stripped == "Running:":
            self.collecting = True
            return True
        if stripped.endswith(":") and stripped[:-1].replace(" ", "").isalpha() or DETAIL.match(stripped):
            self.collecting = False  # "Spawned at:" and the other details are not the stack
            return True
        # The tree's drawing took the indentation: a frame line and its source line are
        # told apart by their text, and re-indented as traceback prints them.
        indent = "  " if stripped.startswith('File "') else "      "
        if self.name is not None and self.collecting and self.stack.feed(indent + stripped, line_no):
            return True
        return self.name is not None and not self.collecting
