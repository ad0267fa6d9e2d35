"""Guess which dump format a text holds from its first lines."""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence

from kafkadiag.dumps.actuatorjson import looks_like_actuator_json
from kafkadiag.dumps.blockedwarnings import blocked_warning, blockhound_call
from kafkadiag.dumps.gocdsupport import MONITORS as GOCD_MONITORS
from kafkadiag.dumps.gocdsupport import SECTION as GOCD_SECTION
from kafkadiag.dumps.gocdsupport import THREAD_LINE as GOCD_THREAD_LINE
from kafkadiag.dumps.javaframes import bare_frame_text
from kafkadiag.dumps.jconsole import NAME_LINE as JCONSOLE_NAME_LINE
from kafkadiag.dumps.jconsole import state_line as jconsole_state_line
from kafkadiag.dumps.stacktraces import THREAD_HEADER, VIRTUAL_HEADER
from kafkadiag.model import DumpFormat
from kafkadiag.threadheader import PYSPY_THREAD_ID

# How far to look before settling on the default. A kill -3 log may hold megabytes of
# application output before its first dump; HotSpot is the default for exactly that reason.
SNIFF_LINES = 20_000

# The lines that open a Python dump's thread (or process), unanchored: the markers below anchor
# them at the line's start, and a log pipeline's prefix is looked for in front of them.
# CPython 3.3 and 3.4, and the faulthandler package for Python 2, end the thread's line at its
# ident: "Thread 0x00007f5a2c3f9700:".
# A bracketed or parenthesised part ends before the next opening one (`[^\][]*`, `[^()]*`) and a
# recipe's name before the next "# Thread: ": searched anywhere in a line (a log prefix's end), each
# was otherwise tried from every repetition of its start, with a scan of the rest of the line
# (256 KB of "# Thread: " took seconds).
_FAULTHANDLER_THREAD = (
    r"(?:(?:(?:Current thread|Thread) 0x[0-9a-fA-F]+(?: \[[^\][]*\])?|Stack) \(most recent call first\):"
    r"|(?:Current thread|Thread) 0x[0-9a-fA-F]+:\s*$)"
)
_PYSPY_THREAD = rf"Thread (?:{PYSPY_THREAD_ID}) \((?:idle|active)[^()]*\):"
_PYSPY_PROCESS_LINE = r"Process \d+:"
_GDB_THREAD = r"Thread \d+ \(Thread 0x[0-9a-fA-F]+ \(LWP \d+\)"
_RECIPE_THREAD = r"# Thread: (?:[^#]|#(?! Thread: ))*\(\d+\)\s*$|# ThreadID: \d+"
_PYSTACK_THREAD = r"Traceback for thread \d+ \([^()]*\) \["
# A frame under the drawing of gevent's greenlet tree (" :      File ..."): no other format prints one.
GEVENT_TREE_FRAME = r'^ *[:|][ :|]*File ".*", line \d+, in '
_ASYNCIO_TASK = r"(?:No stack|Stack) for <\w*Task "

# Also when hard wrapping moved the thread's name or the command line to the next line.
_PYSPY_HEADER = re.compile(rf'^{_PYSPY_THREAD}(?: "|\s*$)')
_PYSPY_PROCESS = re.compile(rf"^{_PYSPY_PROCESS_LINE}(?: |\s*$)")
# The name ends at the first quote a space follows (a later one leaves less for `t@N` to be found
# in): `^".*"\s+.*` tried every quote of the line, each with a scan of the rest, and a line of
# 64 KB of `" ` took 25 s to detect.
_NETBEANS_HEADER = re.compile(r'^"(?:[^"]|"(?!\s))*"\s.*\bt@\d+\b|^Thread t@\d+:')
_HOTSPOT_HEADER = re.compile(r'^".*" (?:#\d+ |daemon |prio=|tid=|Id=)')
# Renderings whose thread headers HotSpot's pattern would also match, or that have none of its
# own: each is recognised by a line no other format prints.
_OTHER_JVMS = (
    (re.compile(r"^(?:0SECTION |1TISIGINFO |3XMTHREADINFO )"), DumpFormat.JAVACORE),
    (re.compile(r'^#\d+ "'), DumpFormat.JCMD_TEXT),
    (re.compile(r"^----- pid \d+ at |^DALVIK THREADS"), DumpFormat.ANDROID_ANR),
    # An Android bugreport: its VM traces come 100,000 lines in, past what is sniffed.
    (re.compile(r"^== dumpstate: \d{4}-"), DumpFormat.ANDROID_ANR),
    (re.compile(r'^"[^"]*"(?: daemon)? prio=\d+ tid=\d+ [A-Z]'), DumpFormat.ANDROID_ANR),
    (
        re.compile(r'^"[^"]*@[\d,]+"(?: virtual)? (?:daemon )?(?:prio=\d+ )?tid=0x[0-9a-fA-F]+ nid=NA\b'),
        DumpFormat.INTELLIJ,
    ),
    (re.compile(r'^"[^"]*"@[\d,]+(?: in group "[^"]*")?: [A-Z_]+\s*$'), DumpFormat.INTELLIJ),
    (re.compile(rf"^{GOCD_SECTION}\s*$"), DumpFormat.GOCD_SUPPORT),
)
_STACK_TRACES_HEADER = re.compile(f"{THREAD_HEADER.pattern}|{VIRTUAL_HEADER.pattern}")
# Python dumps without py-spy, each by a line no other format prints.
_PYTHON_MARKERS = (
    (re.compile(rf"^{_FAULTHANDLER_THREAD}"), DumpFormat.FAULTHANDLER),
    (
        # `thread apply all py-bt`; `thread N` then `py-bt`; a lone `py-bt` (Python's own
        # tracebacks say "most recent call last")
        # (py-bt of Python 2.7, and py-bt-full, number each frame: "#7 Frame 0x..., for file ...")
        re.compile(
            rf"^{_GDB_THREAD}|^\[Switching to thread \d+ \(Thread 0x[0-9a-fA-F]+ \(LWP \d+\)\)\]"
            r"|^Traceback \(most recent call first\):|^#\d+ Frame 0x[0-9a-fA-F]+, for file "
        ),
        DumpFormat.GDB_PY_BT,
    ),
    # its section heading; from an excerpt of it, the tree's drawing before a greenlet or a frame
    (
        # (` *(?:[:|] *)?`, not ` *[:|]? *`: two runs of spaces in a row split a long indent every way)
        re.compile(
            rf"^\* (?:Threads|Greenlets)\s*$|^ *(?:[:|] *)?\+--- <(?:Greenlet|Hub) |{GEVENT_TREE_FRAME}"
        ),
        DumpFormat.GEVENT,
    ),
    (re.compile(rf"^{_ASYNCIO_TASK}"), DumpFormat.ASYNCIO),
    # oslo.reports' Guru Meditation Report: its banner, or a thread's rule if only the stacks were kept
    (
        re.compile(r"^====\s+Guru Meditation\s+====\s*$|^------\s+(?:Thread #\d+|Green Thread)\s+------\s*$"),
        DumpFormat.GURU_MEDITATION,
    ),
    (
        re.compile(rf'^(?:{_RECIPE_THREAD})|^File: ".*", line \d+, in |^{_PYSTACK_THREAD}'),
        DumpFormat.PY_TRACEBACK,
    ),
)
# The line that opens a Python dump's thread, wherever it starts: a log pipeline (journald, docker
# compose, a container runtime) may have put a prefix in front of every line.
PYTHON_HEADER_ANYWHERE = re.compile(
    "|".join(
        (
            _FAULTHANDLER_THREAD,
            _PYSPY_THREAD,
            _PYSPY_PROCESS_LINE + " ",
            _GDB_THREAD,
            _RECIPE_THREAD,
            _PYSTACK_THREAD,
            _ASYNCIO_TASK,
        )
    )
)
# A traceback-module frame: a stack printed by print_stack, or an exception's traceback in a log.
_TRACEBACK_FRAME = re.compile(r'^\s+File ".*", line \d+, in ')
# Lines that head a stack which is not a thread's: an exception's traceback, and where asyncio's
# debug mode or tracemalloc say an object was created (logged beside "Executing <Task ...> took").
_EXCEPTION_HEADERS = (
    "Traceback (most recent call last):",
    "source_traceback: Object created at (most recent call last):",
    "Object allocated at (most recent call last):",
)


# faulthandler's frame line: `line N in f`, where gdb's py-bt and the traceback module say `line N, in f`.
_FAULTHANDLER_FRAME = re.compile(r'^\s+File ".*", line (?:\d+|\?\?\?) in \S')


def _faulthandler_frame_follows(sample: Sequence[str], position: int) -> bool:
    """`Traceback (most recent call first):` heads gdb's py-bt, and also the one-thread dump of the
    faulthandler package for Python 2 (and of CPython 3.3): its frames tell which."""
    if not sample[position].startswith("Traceback"):
        return False
    after = itertools.islice(sample, position + 1, None)
    following = next((line for line in after if line.strip()), "")
    return _FAULTHANDLER_FRAME.match(following) is not None


def _jconsole_thread(stripped: str, sample: Sequence[str], position: int) -> bool:
    """JConsole's "Name: x" line with its "State: WAITING ..." line right under it."""
    if JCONSOLE_NAME_LINE.match(stripped) is None or position + 1 >= len(sample):
        return False
    return jconsole_state_line(sample[position + 1].strip()) is not None


def _gocd_thread(stripped: str, sample: Sequence[str], position: int) -> bool:
    """GoCD's "4497487, ActiveMQ Task-4162, TIMED_WAITING" with "Locked Monitors:" under it (the
    thread section of its support report, without its heading)."""
    if GOCD_THREAD_LINE.match(stripped) is None or position + 1 >= len(sample):
        return False
    return sample[position + 1].startswith(GOCD_MONITORS)


def _jcmd_json_root(line: str) -> bool:
    """jcmd Thread.dump_to_file -format=json: {"threadDump": {...}}. The key, not the word: a compact
    Actuator dump holds "methodName":"threadDump" (the endpoint's own frame) in its first line."""
    return '"threadDump":' in line or '"threadDump" :' in line


def detect_format(lines: Sequence[str]) -> DumpFormat:
    """Decide from a sample of lines. Falls back to HotSpot, which also reads plain logs."""
    return _detect(lines) or DumpFormat.HOTSPOT


def recognised_format(lines: Sequence[str]) -> DumpFormat | None:
    """The format a line of the sample marks, or None where detect_format only falls back."""
    return _detect(lines)


def _json_format(sample: Sequence[str]) -> DumpFormat | None:
    """The JSON dump a sample starting with `[` or `{` holds, if any."""
    first = next((line.strip() for line in sample if line.strip()), "")
    if first[:1] in ("[", "{") and any('"thread_name"' in line for line in sample[:2000]):
        return DumpFormat.PYSPY_JSON
    if first[:1] == "{" and any(map(_jcmd_json_root, sample[:20])):
        return DumpFormat.JCMD_JSON
    if first[:1] == "{" and looks_like_actuator_json(sample):
        return DumpFormat.ACTUATOR_JSON
    return None


def _detect(lines: Sequence[str]) -> DumpFormat | None:
    sample = lines[:SNIFF_LINES]
    json_format = _json_format(sample)
    if json_format is not None:
        return json_format
    hotspot = False
    stacks_printed = False
    stack_traces = False
    blocked_warnings = False  # an event loop's watchdog warned of a blocked thread
    previous = ""
    last_written = ""
    for position, line in enumerate(sample):
        stripped = line.lstrip()
        if not stripped:
            continue
        if not stack_traces and "Thread[" in last_written:
            # A `Thread[name,5,main]` line with a frame under it: all stacks, printed by the
            # application (a `Thread[...]` at the end of any other log line has no frame below).
            stack_traces = _STACK_TRACES_HEADER.search(last_written) is not None and (
                bare_frame_text(stripped.rstrip()) is not None
            )
        last_written = stripped
        if not blocked_warnings and ("Thread Thread[" in stripped or "Blocking call! " in stripped):
            blocked_warnings = blocked_warning(stripped) is not None or blockhound_call(stripped) is not None
        for marker, python_format in _PYTHON_MARKERS:
            if marker.match(line):
                if python_format is DumpFormat.GDB_PY_BT and _faulthandler_frame_follows(sample, position):
                    return DumpFormat.FAULTHANDLER  # the faulthandler package's one-thread dump
                return python_format
        if _TRACEBACK_FRAME.match(line):
            # Frames under "Traceback (most recent call last):" are an exception in a log, not a
            # dump; frames under any other line are a thread's stack. Java headers still win.
            stacks_printed = stacks_printed or not previous.startswith(_EXCEPTION_HEADERS)
        elif not line.startswith(" "):
            previous = stripped
        if _PYSPY_PROCESS.match(stripped) or _PYSPY_HEADER.match(stripped):
            return DumpFormat.PYSPY
        for pattern, other_jvm in _OTHER_JVMS:
            if pattern.match(stripped):
                return other_jvm
        if _jconsole_thread(stripped, sample, position):
            return DumpFormat.JCONSOLE
        if _gocd_thread(stripped, sample, position):
            return DumpFormat.GOCD_SUPPORT
        if _NETBEANS_HEADER.match(stripped):
            # VisualVM prints HotSpot's banner too; its thread headers decide.
            return DumpFormat.NETBEANS
        if _HOTSPOT_HEADER.match(stripped):
            return DumpFormat.HOTSPOT
        hotspot = hotspot or "Full thread dump" in line
    if hotspot:
        return DumpFormat.HOTSPOT
    if stack_traces or blocked_warnings:
        return DumpFormat.STACK_TRACES
    if stacks_printed:
        return DumpFormat.PY_TRACEBACK
    return None


# Texts people hand over that are not a dump kafkadiag reads, recognised so that the error says
# what the file is instead of only that no dump was found in it.
_UNSUPPORTED = (
    # JRockit R27/R28: "===== FULL THREAD DUMP ===============", threads as `"name" id=1 idx=0x4 ...`
    (
        re.compile(r"^===== FULL THREAD DUMP =+|^\"[^\"]*\" id=\d+ idx=0x[0-9a-f]+ tid=\d+"),
        "a JRockit thread dump",
    ),
    # Go's runtime (a panic, SIGQUIT, pprof's debug=2), as Go Kafka clients (sarama,
    # confluent-kafka-go) print them: "goroutine 6982 [select, 1868 minutes]:", and since Go 1.23
    # with the scheduler's ids: "goroutine 1 gp=0xc000002380 m=0 mp=0x5a5b40 [running]:". A dump
    # copied out of a log keeps the logger's prefix ("2024/05/02 10:00:01 goroutine 1 [...]:").
    (re.compile(r"^(?:.*\s)?goroutine \d+(?: [a-z]+=\S+)* \[[^\]]+\]:\s*$"), "a Go goroutine dump"),
    # YourKit's thread export: "Stacks at 2017-05-03 01:07:25 PM (uptime 4h 21m 28s) Threads shown:
    # 38 of 46", threads as "name [WAITING]"; the 2018 layout as "name  Waiting CPU usage on
    # sample: 0ms".
    (
        re.compile(r"^Stacks at \d{4}-\d{2}-\d{2} .*\(uptime [^)]*\)|^\S.* CPU usage on sample: \d+ms\s*$"),
        "a YourKit thread export",
    ),
    # Jenkins' support bundle (support-core's ThreadDumps): "name" id=N (0xN) state=S cpu=N%
    (
        re.compile(r'^".*" id=\d+ \(0x[0-9a-f]+\) state=[A-Z_]+ cpu=\d+%'),
        "a Jenkins support-bundle thread dump",
    ),
)
# A page around the text: said only when nothing more telling is in it (a fenced Go dump is a Go
# dump first).
_MARKDOWN = re.compile(r"^(?:#{1,6} \S|```|~~~)")


def unsupported_format(lines: Sequence[str]) -> str | None:
    """What the text is when it is a known kind that holds no dump kafkadiag reads, else None."""
    sample = lines[:2000]
    for pattern, name in _UNSUPPORTED:
        if any(pattern.match(line) for line in sample):
            return name
    if any(_MARKDOWN.match(line) for line in sample):
        return "a Markdown page"
    return None
