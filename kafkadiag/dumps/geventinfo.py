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
    dump: PythonDump | None = None
    count = 0
    name: str | None = None
    header = ""
    header_line_no = 0
    stack = StackReader()
    collecting = False  # inside "Running:" (a greenlet) or under an OS thread's header
    line_no = 0
    report: list[UnparsedLine] = []  # the monitor's blocked-greenlet report, for the next dump
    in_report = False

    def close_thread() -> None:
        nonlocal name, stack
        if name is not None and dump is not None:
            thread = stack.thread(name, header, header_line_no)
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
        name, stack = None, StackReader()

    for batch in batches:
        for line in batch:
            line_no += 1
            if not line.strip() or RULE.match(line):
                continue
            if BLOCKED_REPORT.match(line):
                report, in_report = [UnparsedLine(line_no, line.strip())], True
                continue
            if in_report and (BLOCKED_STACK.match(line) or line.startswith("  ")):
                report.append(UnparsedLine(line_no, line.rstrip()))
                continue
            in_report = False
            section = SECTION.match(line)
            if section:
                close_thread()
                if section["section"] == "Threads" or dump is None:
                    if dump is not None:
                        yield dump.build()
                    dump = PythonDump(source, count, line_no, DumpFormat.GEVENT, "gevent")
                    dump.signals, report = report, []
                    count += 1
                continue
            os_thread = OS_THREAD.match(line)
            text = TREE.sub("", line, count=1)
            greenlet = None if os_thread else _greenlet_name(text)
            if dump is None:
                if not (greenlet or TREE_FRAME.match(line)):
                    continue
                # Pasted from the middle of the report: no "* Greenlets" heading before it.
                dump = PythonDump(source, count, line_no, DumpFormat.GEVENT, "gevent")
                dump.notes.append(EXCERPT_NOTE)
                dump.signals, report = report, []
                count += 1
                if not greenlet:
                    # Its first frames' greenlet line was left out: a thread named by where they start.
                    name, header, header_line_no, collecting = headerless_name(line_no), "", line_no, True
            dump.end_line_no = line_no
            if os_thread or greenlet:
                close_thread()
                name = os_thread["name"] if os_thread else greenlet
                header, header_line_no = (line if os_thread else text), line_no
                collecting = bool(os_thread)
                continue
            stripped = text.strip()
            if stripped == "Running:":
                collecting = True
                continue
            if stripped.endswith(":") and stripped[:-1].replace(" ", "").isalpha() or DETAIL.match(stripped):
                collecting = False  # "Spawned at:" and the other details are not the stack
                continue
            # The tree's drawing took the indentation: a frame line and its source line are
            # told apart by their text, and re-indented as traceback prints them.
            indent = "  " if stripped.startswith('File "') else "      "
            if name is not None and collecting and stack.feed(indent + stripped, line_no):
                continue
            if name is not None and not collecting:
                continue
            dump.unparsed.add(line_no, line)
    close_thread()
    if dump is not None:
        yield dump.build()
