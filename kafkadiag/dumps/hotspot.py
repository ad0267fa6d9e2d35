"""HotSpot thread dumps: jstack [-l], jcmd Thread.print [-l], kill -3 output, JDK 5 to 25.

One pass over the lines, streaming: each dump is yielded as soon as the next one starts (or the
input ends), so a 200 MB log holding hundreds of dumps never sits in memory at once.

The parser is total. Every line inside a dump is either understood or kept as an unparsed
line with its number; lines between dumps (application logging around kill -3 output) are
skipped. Lines it recognises:

    2024-01-02 10:11:12                                   timestamp (before the banner)
    12345:                                                jcmd's pid line
    Full thread dump OpenJDK 64-Bit Server VM (...):      banner: a new dump starts
    Threads class SMR info: / _java_thread_list=... / }   JDK 11+ SMR block (and _to_delete_list=...
                                                          while a thread list is being freed)
    "name" #12 [345] daemon prio=5 os_prio=0 cpu=1.2ms elapsed=3.4s tid=0x.. nid=0x.. state [0x..]
       java.lang.Thread.State: WAITING (parking)
       Carrying virtual thread #N / Mounted virtual thread #N     JDK 21+ carriers
        at pkg.Class.method(File.java:12)                       frame
        - locked <0x..> (a pkg.Lock)                            lock event (six kinds)
        - java.lang.Object.wait(long) @bci=0, line=1 (...)      serviceability-agent frame
       Locked ownable synchronizers:  / - <0x..> (a ...) / - None
    JNI global references: N  /  JNI global refs: N, weak refs: M   footer
    Found one Java-level deadlock: ... Found N deadlock(s).     the JVM's deadlock report
"""

from __future__ import annotations

import gc
import re
from collections.abc import Iterable, Iterator

from kafkadiag.digits import decimal
from kafkadiag.dumps import jrockit, marks
from kafkadiag.dumps.excerpts import headerless_name, is_annotation, join_excerpts
from kafkadiag.dumps.javaframes import parse_agent_frame, parse_java_frame
from kafkadiag.dumps.jvmthreads import attach_synchronizers, owned_by_name
from kafkadiag.dumps.logprefix import PrefixStripper
from kafkadiag.dumps.rewrap import (
    address_rejoined,
    agent_frame_unfinished,
    fits,
    frame_unfinished,
    header_continues,
    header_unfinished,
    join_token,
    join_words,
    lock_class_missing,
    rejoined_note,
    unbalanced,
)
from kafkadiag.dumps.states import (
    consistent_status,
    parse_state_line,
    reconcile,
    state_from_header,
    state_from_top_frames,
    stated_wait,
    stated_wait_kind,
)
from kafkadiag.dumps.threadcpu import ThreadCpuReader, header_cpu
from kafkadiag.model import (
    DeadlockLink,
    DumpFormat,
    Frame,
    LockEvent,
    LockEventKind,
    LockRef,
    OsThreadCpu,
    QuotedLine,
    Thread,
    ThreadDump,
    ThreadState,
    ThreadStatus,
    UnparsedLine,
)
from kafkadiag.threadheader import (
    AGENT,
    GROUP_FIELD,
    JMX_HEADER,
    JROCKIT_BRACES,
    THREADINFO,
    looks_like_hotspot_header,
    lost_opening_quote,
    name_end,
    parse_number,
    state_words,
)

# Unparsed lines kept per dump for display; all of them are counted.
MAX_UNPARSED_KEPT = 200
# Frame texts are interned so that identical frames across threads and dumps share one Frame;
# the cache is dropped when it grows past this, which keeps memory bounded on huge logs.
MAX_FRAME_CACHE = 200_000
MAX_STATE_TEXTS = 1024

BANNER = "Full thread dump"
STATE_LINE = "java.lang.Thread.State: "
# JDK 11+'s "Threads class SMR info:" block, before the threads. HotSpot adds _to_delete_list while a
# thread list is being freed (threads starting or ending as the dump is taken: real kafka-clients
# 4.1.1, fixtures/captured/real-new-consumer-shared-consumer-4.1.1).
SMR_LINES = ("Threads class SMR info", "0x", "_java_thread_list", "_to_delete_list", "}")
GREP_SEPARATOR = "--"
GREP_NOTE = (
    "grep -A/-B/-C output (its '--' lines separate the groups grep printed): each group is a fixed "
    "number of lines, so stacks may be cut and threads left out; a lock held, or the call a thread "
    "is blocked in, further down a stack is not in the input"
)
_STATE_LINE_INDENTED = "   " + STATE_LINE
_SYNCHRONIZERS_INDENTED = "   Locked ownable synchronizers:"
SYNCHRONIZERS = "Locked ownable synchronizers:"
THREADINFO_SYNCHRONIZERS = "Number of locked synchronizers = "
JMX_SYNCHRONIZERS = "Locked synchronizers: count = "
# TDA's own end marker after each dump it took over JMX.
END_OF_DUMP = "<EndOfDump>"
DEADLOCK_START = "Found one Java-level deadlock:"
REPORT_STACKS = "Java stack information for the threads listed above"
REPORT_WITHOUT_STACKS_NOTE = (
    "only the JVM's deadlock report, without the stacks of its threads: they are known by the names "
    "and locks the report gives, and the other threads of the dump are not in the input"
)
CARRYING = "Carrying virtual thread #"
MOUNTED = "Mounted virtual thread #"

# A line opening a thread in the JVM's deadlock report: `"name":` and nothing else.
_REPORT_THREAD = re.compile(r'^"(?P<name>.*)":$')
# Serviceability agent (`jstack -F`, `jhsdb jstack`, JDK 5's jstack): "Thread 5987: (state = BLOCKED)"
_TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}")
_TOOL_BANNER = re.compile(r"^Thread dump from (?P<tool>jcmd|jstack) (?P<pid>\d+)\b")
# The serviceability agent (`jhsdb jstack`, JDK 8's `jstack -F`) prints no "Full thread dump"
# banner but this preamble: attaching, the JVM's version, its own deadlock detection.
AGENT_PRODUCER = "jhsdb"
_AGENT_BANNER = re.compile(r"^Attaching to (?:process ID (?P<pid>\d+)|core .*), please wait\.\.\.")
_AGENT_PREAMBLE = re.compile(
    r"^(?:Debugger attached successfully\.|(?:Server|Client) compiler detected\.|JVM version is |"
    r"Deadlock Detection:|No deadlocks found\.)"
)
# `jhsdb jstack --mixed`: a line per OS thread between threads, and native frames by address.
_MIXED_SEPARATOR = re.compile(r"^-{5,} \d+ -{5,}\s*$")
_MIXED_NATIVE_FRAME = re.compile(r"^0x[0-9a-fA-F]+\t")
MIXED_NOTE = "jhsdb jstack --mixed: its native frames (by address) are left out; the Java frames are read"
_JCMD_PID = re.compile(r"^(\d+):$")
_DEADLOCK_COUNT = re.compile(r"^Found (?:\d+|one|no) (?:Java-level )?deadlocks?\.?")
# The lock's own address: "(object 0x...", "ownable synchronizer 0x...", and the serviceability
# agent's "(Object@0x..." (jhsdb jstack, JDK 17), not the address of the VM's monitor before it.
_REPORT_LOCK_ID = re.compile(r"(?:object |synchronizer |Object@)(0x[0-9a-fA-F]+)")
# The heading of a class histogram (jmap -histo, -XX:+PrintClassHistogram on kill -3).
_CLASS_HISTOGRAM = re.compile(r"^\s*num\s+#instances\s+#bytes\s+class name")
_NAME_ONLY = re.compile(r'^"[^"]*"\s*$')
_HEADER_FIELDS = re.compile(r"^\s*(?:#\d+ |daemon |prio=|os_prio=|tid=|nid=)")
_HELD_BY = re.compile(r'which is held by "(?P<name>.*)"')
# A thread name with line breaks: at most this many lines, each this long. A line that opens a
# thread's block or stack is never part of a name.
MAX_NAME_LINES = 5
MAX_NAME_CHARS = 512
WRAPPED_NAME_CHARS = 40
# The narrowest column hard wrapping cuts at (mail clients 72-78, trackers and fold 60-80).
WRAP_WIDTH_AT_LEAST = 60
_NOT_IN_A_NAME = ('"', "\t", "   java.lang.Thread.State", "Full thread dump", "JNI global")
# An entry of "Locked ownable synchronizers": jstack's "- <0x..>", and "- locked <..>" / "- Locked
# <..>" in the renderings of ThreadInfo that copy VisualVM's layout (Spring Boot Actuator's text).
_HELD_ENTRY = ("- <", "- locked <", "- Locked <")

# The words before "<" on a lock line, exactly as HotSpot prints them; other spellings fall back to
# a prefix match.
_EVENT_WORDS = {
    "locked": LockEventKind.LOCKED,
    "waiting to lock": LockEventKind.WAITING_TO_LOCK,
    "waiting on": LockEventKind.WAITING_ON,
    "parking to wait for": LockEventKind.PARKING,
    "waiting to re-lock in wait()": LockEventKind.WAITING_TO_RELOCK,
    "eliminated": LockEventKind.ELIMINATED,
}

# IN_LOCK_CHAINS: JRockit's lock chains after the threads, up to the end of its dump.
OUTSIDE, IN_DUMP, IN_REPORT, IN_LOCK_CHAINS = 0, 1, 2, 3

# Log lines (outside the dumps) that tell what a dump cannot show; rules read them.
SIGNALS = (
    "KafkaConsumer is not safe for multi-threaded access",
    "CommitFailedException",
    "max.poll.interval.ms",
    "OutOfMemoryError",
)


def parse_lock_id(text: str) -> int | None:
    """`<0x0000000412c8bb80>` or `<7f39d3e70>` (lock ids are always hex) -> int."""
    inner = text.strip("<>\\")  # also "\<0x..\>": see _MARKDOWN_ESCAPED_ANGLE
    try:
        return int(inner, 16)
    except ValueError:
        return None


# Dumps pasted through Markdown renderers come back with "\<0x..\>" for "<0x..>" (the Apache
# Yetus release notes of JIRA issues, for one): the backslashes are markup, not part of the id.
_MARKDOWN_ESCAPED_ANGLE = ("\\<", "\\>")


def parse_lock_line(body: str) -> tuple[LockEventKind | None, int | None, str | None]:
    """`- waiting to lock <0x..> (a java.lang.Object)` -> (kind, id, class)."""
    if _MARKDOWN_ESCAPED_ANGLE[0] in body:
        body = body.replace(_MARKDOWN_ESCAPED_ANGLE[0], "<").replace(_MARKDOWN_ESCAPED_ANGLE[1], ">")
    arrow = body.find(" <-")
    if arrow > 0:
        # An arrow after the lock: a person's "<--- here", Arthas' `thread -b` "<---- but blocks
        # 4 other threads!". A lock's own "<" is followed by its address or a word, never "-".
        body = body[:arrow]
    words, angle, rest = body[2:].partition("<")
    words = words.strip()
    if not angle:
        threadinfo = _THREADINFO_LOCK.match(words)
        if threadinfo:
            return _THREADINFO_KINDS[threadinfo["kind"]], int(threadinfo["hash"], 16), threadinfo["class"]
    kind = _EVENT_WORDS.get(words)
    if kind is None:
        kind = _kind_by_prefix(words)
    lock_id: int | None = None
    lock_class: str | None = None
    if angle:
        inner, closing, after = rest.partition(">")
        if closing:
            try:
                lock_id = int(inner, 16)  # always hex; "0x" optional (OS X JDK 6 omits it)
            except ValueError:
                lock_id = None  # "<no object reference available>", "<owner is scalar replaced>"
            # jhsdb jstack --locks lists a synchronizer as "<0x..>, (a java/util/...)"
            after = after.lstrip(", ")
            if after.startswith("("):
                # "(a pkg.Lock)", and in VisualVM's rendering `(a pkg.Lock) owned by "x" t@3`
                end = after.find(")")
                lock_class = after[1:end] if end > 0 else None
                if lock_class and lock_class.startswith("a "):
                    lock_class = lock_class[2:]
                if lock_class and "/" in lock_class and "." not in lock_class:
                    # The serviceability agent prints the JVM's internal name, java/util/...; a
                    # hidden class (pkg.App$$Lambda/0x0000000800c0a000) keeps its slash.
                    lock_class = lock_class.replace("/", ".")
    elif kind is LockEventKind.WAITING_ON and " for " in words:
        # JDK 17+: "- waiting on the Class initialization monitor for pkg.Type"
        lock_class = words.rsplit(" for ", 1)[1]
    return kind, lock_id, lock_class


# ThreadInfo.toString(): "-  locked java.lang.Object@1b6d3586", "-  blocked on ...", "-  waiting on
# ..." (for Object.wait() and LockSupport.park alike; the status sorts them out). The id is the
# identity hash, which is all a lock graph needs. Tools that render ThreadInfo in jstack's words
# print "- waiting to lock pkg.Lock@39faacaf" and "- locked on pkg.Lock@19484faf".
_THREADINFO_LOCK = re.compile(
    r"^(?:(?P<kind>locked(?: on)?|blocked on|waiting on|waiting to lock|waiting to re-lock in wait\(\)"
    r"|parking to wait for) )?(?P<class>[\w.$\[\];]+)@(?P<hash>[0-9a-fA-F]+)$"
)
_THREADINFO_KINDS = {
    "locked": LockEventKind.LOCKED,
    "locked on": LockEventKind.LOCKED,
    "blocked on": LockEventKind.WAITING_TO_LOCK,
    "waiting to lock": LockEventKind.WAITING_TO_LOCK,
    "waiting to re-lock in wait()": LockEventKind.WAITING_TO_RELOCK,
    "waiting on": LockEventKind.WAITING_ON,
    "parking to wait for": LockEventKind.PARKING,
    None: LockEventKind.LOCKED,  # an entry of "Number of locked synchronizers = N"
}


def _kind_by_prefix(words: str) -> LockEventKind | None:
    for spelled, kind in _EVENT_WORDS.items():
        if words.startswith(spelled.split(" in ")[0]):
            return kind
    return None


class _ThreadBuilder:
    """The thread being read: its header and its growing stack."""

    __slots__ = (
        "name", "line_no", "header", "state_text", "carried", "frames", "events",
        "synchronizers", "in_synchronizers", "stack_line_no", "state_line_no", "stated_owner",
    )  # fmt: skip

    def __init__(self, name: str, line_no: int, header: str) -> None:
        self.name = name
        self.line_no = line_no
        self.header = header
        self.state_text: str | None = None
        self.carried: int | None = None
        self.frames: list[Frame] = []
        self.events: list[LockEvent] = []
        self.synchronizers: list[LockRef] | None = None
        self.in_synchronizers = False
        self.stack_line_no = line_no + 1
        self.state_line_no = 0
        # The owner a state line names for the lock it waits on, with that lock (see build).
        self.stated_owner: tuple[str, LockRef] | None = None

    def reopen(self, name: str, line_no: int, header: str) -> None:
        """The next thread, read into this builder once it is built (its lists were copied)."""
        self.name = name
        self.line_no = line_no
        self.header = header
        self.state_text = None
        self.carried = None
        self.frames.clear()
        self.events.clear()
        self.synchronizers = None
        self.in_synchronizers = False
        self.stack_line_no = line_no + 1
        self.state_line_no = 0
        self.stated_owner = None

    def build(self) -> Thread:
        frames = tuple(self.frames)
        state_text = self.state_text
        if state_text is not None:
            parsed = _STATE_LINES.get(state_text)
            if parsed is None:
                parsed = _parsed_state_line(state_text)
            state, detail, consistent, states_a_wait = parsed
        else:
            state, detail, consistent, states_a_wait = (
                state_from_header(state_words(self.header)),
                "",
                None,
                False,
            )
        events = self.events
        if state is _RUNNABLE_STATE:
            status = _RUNNABLE_STATUS
        else:
            if states_a_wait:
                self._stated_wait(state, detail, frames)
            if consistent is not None and (
                consistent[1] is None
                or (events and events[0].frame_index == 0 and events[0].kind is consistent[1])
            ):
                status = consistent[0]  # what almost every waiting thread prints: nothing to repair
            else:
                status, events = reconcile(state, detail, frames, events)
        synchronizers = self.synchronizers
        # tuple.__new__ directly: the same Thread, without the Python-level NamedTuple.__new__.
        return _new_tuple(
            Thread,
            (
                self.name,
                state,
                status,
                self.line_no,
                self.header,
                frames,
                tuple(events) if events else (),
                None if synchronizers is None else tuple(synchronizers),
                self.carried,
                self.stack_line_no,
                (),  # frame_line_nos: a HotSpot frame is one line, stack_line_no gives them all
            ),
        )

    def _stated_wait(self, state: ThreadState, detail: str, frames: tuple[Frame, ...]) -> None:
        """`WAITING on pkg.Lock@4836840 owned by: x`: the wait, as the lock line it stands for."""
        wait = stated_wait(detail)
        if wait is None:
            return
        text = STATE_LINE + (self.state_text or "")
        if not any(event.lock_id == wait.lock_id for event in self.events):
            kind = stated_wait_kind(state, frames)
            self.events.insert(0, LockEvent(kind, wait.lock_id, wait.lock_class, 0, self.state_line_no, text))
        # The owner is news even when a lock line repeats the wait: ThreadInfo.toString() names
        # it in the header only, and the owner's own stack may be cut above its "- locked" line.
        if wait.owner is not None:
            self.stated_owner = (wait.owner, LockRef(wait.lock_id, wait.lock_class, self.state_line_no, text))


# State lines repeat ("WAITING (parking)", ...): parse each once. Bounded by the few spellings.
_STATE_LINES: dict[str, tuple[ThreadState, str, tuple[ThreadStatus, LockEventKind | None] | None, bool]] = {}


def _parsed_state_line(
    state_text: str,
) -> tuple[ThreadState, str, tuple[ThreadStatus, LockEventKind | None] | None, bool]:
    """A state line's state, detail, the status it gives when the lock lines agree, and whether
    it names the lock it waits on (`WAITING on pkg.Lock@4836840 owned by: x`); kept per text."""
    if len(_STATE_LINES) > 1024:  # garbage input: keep the cache small
        _STATE_LINES.clear()
    state, detail = parse_state_line(state_text)
    states_a_wait = detail[:3] == "on " and "@" in detail
    parsed = _STATE_LINES[state_text] = (state, detail, consistent_status(state, detail), states_a_wait)
    return parsed


# A lock line's kind, lock id and class, and its text as quoted (stripped): lock events of the
# threads that print the same lock line share one string.
_ParsedLockLine = tuple[LockEventKind | None, int | None, str | None, str]

# The two lines of the synchronizer section that every thread of a `jstack -l` dump prints, told
# apart by identity in the lock-line cache: one look-up serves them and lock lines alike.
# (Built at run time: equal constant tuples would be one object.)
_SYNCHRONIZERS_HEADING: _ParsedLockLine = tuple([None, None, None, ""])  # type: ignore[assignment]
_NO_SYNCHRONIZER: _ParsedLockLine = tuple([None, None, None, ""])  # type: ignore[assignment]
_STRUCTURE_LINES = {_SYNCHRONIZERS_INDENTED: _SYNCHRONIZERS_HEADING, "\t- None": _NO_SYNCHRONIZER}
_RUNNABLE_STATE = ThreadState.RUNNABLE
_RUNNABLE_STATUS = ThreadStatus.RUNNABLE
_new_tuple = tuple.__new__
_MARKUP_ENDS = frozenset("`}")


def headerless_note(line_nos: list[int]) -> str:
    return (
        f"stack(s) without their thread header (state line {_some_lines(line_nos)}): read as threads "
        "named '(no header, line N)'; their names and thread ids are not in the text"
    )


def _some_lines(line_nos: list[int]) -> str:
    """ "12, 40, 77" - the first five line numbers, then how many more."""
    shown = ", ".join(str(line_no) for line_no in line_nos[:5])
    return shown + (f" and {len(line_nos) - 5} more" if len(line_nos) > 5 else "")


def _cut_by_wrapping(part: str, after: str) -> bool:
    """Whether a name's line ends where hard wrapping cut it, not where the name breaks its line:
    the line is as long as a mail client's or tracker's, or the next word would not have fitted
    on it (fold -s breaks "consumer-thread | " before a long group id, and some clients then drop
    the space they broke at)."""
    kept = part.rstrip()
    if len(kept) >= WRAPPED_NAME_CHARS:
        return True
    next_word = after.strip().split(" ", 1)[0]
    return len(kept) + 1 + len(next_word) >= WRAP_WIDTH_AT_LEAST


def _unwrapped(parts: list[str]) -> str:
    """The parts of a name cut by hard wrapping, joined back: a cut at a space keeps one space,
    a cut inside a word (a tracker's fixed column) glues the word together. A short part was cut
    at a space even when the space was dropped: a fixed column cuts only full-width lines."""
    joined = parts[0]
    for before, part in zip(parts, parts[1:]):
        at_space = before[-1:].isspace() or len(before.rstrip()) < WRAPPED_NAME_CHARS
        joined = joined.rstrip() + " " + part.lstrip() if at_space else joined + part.lstrip()
    return joined


def _opens_name(line: str) -> bool:
    """Outside a dump, a line that opens a quoted name and does not close it: a long name cut by
    hard wrapping, or the first line of a name with a line break in it (a dump's first thread)."""
    return line.count('"') == 1


def _thread_from_header(line: str, line_no: int) -> _ThreadBuilder | None:
    if " Id=" in line:
        info = THREADINFO.match(line)
        if info:
            builder = _ThreadBuilder(info["name"], line_no, line)
            rest = info["rest"] or ""
            # "BLOCKED on pkg.Lock@3a09eed4 owned by "x" Id=47": the wait and its owner, as a state
            # line would state them.
            builder.state_text = info["state"] + rest.rstrip() if rest.startswith(" on ") else info["state"]
            return builder
    if " id: " in line:
        colon = jrockit.COLON_HEADER.match(line)
        if colon:
            return _ThreadBuilder(colon["name"], line_no, line)
    if not looks_like_hotspot_header(line):
        return None
    builder = _ThreadBuilder(line[1 : name_end(line)], line_no, line)
    jmx = JMX_HEADER.match(line) if " id=" in line else None
    if jmx is not None:
        builder.name = jmx["name"]
        builder.state_text = jmx["state"]  # the state a state line would give; no such line follows
    return builder


def _agent_state(thread: Thread) -> Thread:
    """`Thread 5987: (state = BLOCKED)`: the serviceability agent names the VM's own thread state,
    and BLOCKED is any thread blocked in the VM. The top frame tells a wait, a park or a sleep; a
    thread blocked at any other Java frame is entering a monitor (no lock line says which)."""
    if thread.state is not ThreadState.BLOCKED or not AGENT.match(thread.header):
        return thread
    state, detail = state_from_top_frames(thread.frames)
    if state is ThreadState.UNKNOWN and thread.frames:
        return thread._replace(status=ThreadStatus.BLOCKED)
    if state is ThreadState.UNKNOWN:
        state = ThreadState.WAITING  # no Java frame: a thread of the VM's, idle
    if state is ThreadState.RUNNABLE:
        return thread._replace(state=state, status=ThreadStatus.RUNNABLE)
    status, events = reconcile(state, detail, thread.frames, list(thread.lock_events))
    return thread._replace(state=state, status=status, lock_events=tuple(events))


class _DumpBuilder:
    """The dump being read."""

    def __init__(self, source: str, index: int, line_no: int) -> None:
        self.source = source
        self.index = index
        self.line_no = line_no
        self.end_line_no = line_no
        self.timestamp: str | None = None
        self.banner: str | None = None
        self.producer: str | None = None
        self.pid: int | None = None
        self.threads: list[Thread] = []
        self.deadlocks: list[tuple[DeadlockLink, ...]] = []
        self.jni: str | None = None
        self.unparsed: list[UnparsedLine] = []
        self.unparsed_count = 0
        self.has_lock_data = False
        self.footer_seen = False
        self.notes: list[str] = []
        self.signals: list[UnparsedLine] = []
        self.os_threads: list[OsThreadCpu] = []
        # Only the JVM's deadlock report was given, not the dump around it.
        self.report_only = False
        self.rejoined = 0  # lines cut by hard wrapping, joined back to the line before
        self.jrockit = False  # opened by JRockit's "===== FULL THREAD DUMP" banner
        # Threads in the serviceability agent's layout (`Thread 5987: (state = BLOCKED)`), whose
        # states are the VM's (see _agent_state).
        self.agent_threads = False
        self.lost_quotes: list[int] = []  # lines of headers read without their opening quote
        self.headerless: list[int] = []  # lines of state lines that no header came before
        # (waiter index, owner name, lock) for locks a state line names the owner of (VisualVM).
        self.stated_owners: list[tuple[int, str, LockRef]] = []

    def unparsed_line(self, line_no: int, text: str) -> None:
        self.unparsed_count += 1
        if len(self.unparsed) < MAX_UNPARSED_KEPT:
            self.unparsed.append(UnparsedLine(line_no, text))

    def build(self, truncated: bool, dump_format: DumpFormat) -> ThreadDump:
        if self.threads and self.threads[-1].line_no > self.end_line_no:
            self.end_line_no = self.threads[-1].line_no
        notes = list(self.notes)
        if self.report_only and not self.threads:
            notes.append(REPORT_WITHOUT_STACKS_NOTE)
        elif self.report_only:
            notes.append("only the JVM's deadlock report: the other threads of the dump are not in the input")
        elif self.banner is None:
            notes.append("fragment: no 'Full thread dump' banner before the first thread")
        if self.rejoined:
            notes.append(rejoined_note(self.rejoined))
        if self.lost_quotes:
            notes.append(
                f"thread header(s) without their opening quote (line {_some_lines(self.lost_quotes)}) were "
                "read as headers, "
                "the name being everything before the closing quote"
            )
        if self.headerless:
            notes.append(headerless_note(self.headerless))
        if truncated:
            notes.append("the input ends inside this dump: the last thread may be incomplete")
        threads = self.threads
        if self.jrockit:
            threads = [jrockit.entering_monitor(thread) for thread in threads]
        if self.agent_threads:
            threads = [_agent_state(thread) for thread in threads]
        if self.stated_owners:
            threads = attach_synchronizers(threads, owned_by_name(threads, self.stated_owners))
        return ThreadDump(
            source=self.source,
            index=self.index,
            format=dump_format,
            line_no=self.line_no,
            end_line_no=self.end_line_no,
            threads=tuple(threads),
            timestamp=self.timestamp,
            banner=self.banner,
            producer=self.producer or ("jstack" if self.banner else None),
            pid=self.pid,
            jvm_deadlocks=tuple(self.deadlocks),
            jni_global_refs=self.jni,
            unparsed=tuple(self.unparsed),
            unparsed_count=self.unparsed_count,
            truncated=truncated,
            has_lock_data=self.has_lock_data,
            notes=tuple(notes),
            log_signals=tuple(self.signals),
            os_threads=tuple(self.os_threads),
        )


class HotspotParser:
    """Feed lines in order; collect finished dumps from `feed` and `finish`."""

    def __init__(self, source: str, dump_format: DumpFormat = DumpFormat.HOTSPOT) -> None:
        self.source = source
        self.dump_format = dump_format
        self.mode = OUTSIDE
        self.dump: _DumpBuilder | None = None
        self.thread: _ThreadBuilder | None = None
        self.pending: list[ThreadDump] = []
        self.dump_count = 0
        self.frame_cache: dict[str, Frame] = {}
        # Pool threads wait on the same lock, and dumps of one process repeat their lock lines.
        self.lock_line_cache: dict[str, _ParsedLockLine] = dict(_STRUCTURE_LINES)
        # State lines as read -> their text after "java.lang.Thread.State: ": a dump has a few
        # dozen spellings.
        self.state_text_cache: dict[str, str] = {}
        self.prefix = PrefixStripper()
        self.previous_line = ""
        self.previous_previous_line = ""
        self.report_links: list[DeadlockLink] = []
        # Signal lines seen before the first dump; they go to the dump that follows.
        self.pending_signals: list[UnparsedLine] = []
        # A top -H / ps -L table beside the dumps; rows before the first dump wait for it.
        self.thread_cpu = ThreadCpuReader()
        self.pending_os_threads: list[OsThreadCpu] = []
        self.report_thread: str | None = None
        self.report_waiting: str = ""
        self.report_lines: list[QuotedLine] = []  # the lines of the report's thread being read
        self.report_repeated: tuple[str, int] | None = None  # a cycle's thread named a second time
        self.last_line_no = 0
        self.last_rejoined = 0  # line number of the last continuation joined back
        self.name_only: tuple[str, int] | None = None  # a `"name"` line, maybe a cut header
        # A `"name":` line outside any dump: a deadlock report's stack pasted without the lines
        # above it, if a frame follows.
        self.report_name: tuple[str, int] | None = None
        # The first lines of a thread name that holds line breaks, with their line numbers.
        self.open_name: list[tuple[str, int]] = []
        # The line number of a lone "-": hard wrapping cut a lock line or an agent's frame right
        # after its dash, and the next line is the rest of it.
        self.lone_dash: int | None = None

    # -- the hot loop ------------------------------------------------------------------------

    def feed_batch(self, lines: Iterable[str], first_line_no: int) -> int:
        """Consume a batch of lines numbered from `first_line_no`; return the next number.

        Frame lines are most of any dump, so while a thread is open (and no log prefix needs
        stripping) they, blank lines and state lines are handled right here; every other line
        goes through `_dispatch`.

        A frame or lock line seen before is recognised by one look-up of the whole line, before
        any test of its start: threads repeat their frames, and a `str.startswith` call costs
        several look-ups (its arguments are parsed at run time on Python 3.11 and earlier).
        """
        line_no = first_line_no - 1
        lookup = self.frame_cache.get
        lock_lines = self.lock_line_cache
        state_texts = self.state_text_cache
        thread = self._fast_path_thread()
        add_frame = thread.frames.append if thread is not None else None
        for line_no, line in enumerate(lines, first_line_no):
            if add_frame is not None:
                # Keyed by the whole line: no slice, no new string, no rehash per frame.
                frame = lookup(line)
                if frame is not None:
                    add_frame(frame)
                    continue
                assert thread is not None
                if not line:
                    thread.in_synchronizers = False
                    continue
                parsed = lock_lines.get(line)  # the line's hash is kept from the look-up above
                if parsed is not None:
                    kind = parsed[0]
                    if kind is not None and not thread.in_synchronizers:
                        frame_index = len(thread.frames) - 1
                        thread.events.append(
                            _new_tuple(
                                LockEvent,
                                # unpacked by hand: `(*parsed, ...)` builds a list first
                                (
                                    kind,
                                    parsed[1],
                                    parsed[2],
                                    frame_index if frame_index > 0 else 0,
                                    line_no,
                                    parsed[3],
                                ),
                            )
                        )
                        continue
                    if parsed is _SYNCHRONIZERS_HEADING:
                        # _synchronizers_start, inlined: one call per thread of a jstack -l dump
                        thread.in_synchronizers = True
                        thread.synchronizers = []
                        self.dump.has_lock_data = True  # type: ignore[union-attr]
                        continue
                    if parsed is _NO_SYNCHRONIZER and thread.in_synchronizers:
                        continue
                # The first character sorts the rest: a test of a line's start costs more.
                first = line[0]
                if first == "\t":
                    if line.startswith("\tat "):
                        add_frame(self._new_frame(line))
                        continue
                    if line.startswith("\t- "):
                        if not thread.in_synchronizers:
                            self._lock_event(thread, line[1:], line, line_no)
                        elif line != "\t- None":
                            self._synchronizer(thread, line[1:], line, line_no)
                        continue
                elif first == " ":
                    # A state line: one of a few texts, repeated by every thread in that state.
                    state_text = state_texts.get(line)
                    if state_text is None and line.startswith(_STATE_LINE_INDENTED):
                        if len(state_texts) >= MAX_STATE_TEXTS:
                            state_texts.clear()  # state lines that name a lock (JMX) can all differ
                        state_text = state_texts[line] = line[len(_STATE_LINE_INDENTED) :]
                    if state_text is not None and not thread.frames:
                        thread.state_text = state_text
                        thread.state_line_no = line_no
                        thread.stack_line_no = line_no + 1
                        continue
                elif first == '"':
                    # The next thread of the same dump: a header with a thread pointer after the
                    # name, as every HotSpot prints, without detours. Any other quoted line (a
                    # ThreadInfo or JMX header, a deadlock report's `"name":`) takes _dispatch.
                    # The fields after the name, searched with `in`: a call with range arguments
                    # (find, rfind) costs more than the search. A ThreadInfo "Id=" or a
                    # JRockit/JMX "id=" among them takes _dispatch, as does a name that the last
                    # quote does not close (TeamCity's `"name" daemon group="main" prio=5`).
                    quoted_name, _, fields = line.rpartition('"')
                    if (
                        " tid=" in fields
                        and GROUP_FIELD not in quoted_name
                        and " Id=" not in fields
                        and (" id=" not in fields or not JMX_HEADER.match(line))
                    ):
                        self._finish_thread()
                        # Built and copied: the builder reads the next thread (no builder and no
                        # lists allocated per thread; add_frame still appends to its frames).
                        thread.reopen(quoted_name[1:], line_no, line)
                        self.thread = thread
                        continue
                self._dispatch(line, line_no)
            else:
                self._dispatch(line, line_no)
            thread = self._fast_path_thread()
            add_frame = thread.frames.append if thread is not None else None
        self.last_line_no = line_no
        return line_no + 1

    def _new_frame(self, frame_line: str) -> Frame:
        """Parse `\tat pkg.Class.method(...)` and remember it under the whole line."""
        text = frame_line[4:]
        if text[-1:] in _MARKUP_ENDS:
            text = marks.without_trailing_markup(text)  # "...(Thread.java:748)```"
        frame = parse_java_frame(text)
        if len(self.frame_cache) >= MAX_FRAME_CACHE:
            self.frame_cache.clear()
        self.frame_cache[frame_line] = frame
        return frame

    def _fast_path_thread(self) -> _ThreadBuilder | None:
        if self.mode == IN_DUMP and not self.prefix.active and not self.open_name:
            return self.thread
        return None

    def _dispatch(self, line: str, line_no: int) -> None:
        if self.prefix.active:
            line = self.prefix.strip(line)
        if self.mode == IN_LOCK_CHAINS:
            if not line.startswith((jrockit.END, jrockit.BANNER)) and BANNER not in line:
                return  # they restate what the threads' lock lines tie together
            self.mode = IN_DUMP
        if line[:1] in marks.FIRST_CHARACTERS:
            line = marks.unmarked(line, self.prefix.strip)
        if self.name_only is not None and self._header_after_name(line, line_no):
            return
        if self.report_name is not None:
            self._report_stack_after_name(line, line_no)
        if self.open_name and self._name_continues(line, line_no):
            return
        if self.lone_dash is not None:
            line = self._after_lone_dash(line, line_no)
        first = line[:1]
        if self.mode == IN_DUMP and (first == "\t" or first == " "):
            body = line.lstrip()
            if body == "at" and self.thread is not None:
                body = "at "  # "\tat " whose trailing space a mail client dropped at a wrap
            if self.thread is not None and body.startswith("at "):
                key = "\t" + body  # the cache is keyed by the tab-indented frame line
                self.thread.frames.append(self.frame_cache.get(key) or self._new_frame(key))
                return
            self._indented(line, body, line_no)
        else:
            self._other(line, first, line_no)
        self.previous_previous_line = self.previous_line
        self.previous_line = line

    # -- indented lines inside a dump -----------------------------------------------------------

    def _after_lone_dash(self, line: str, line_no: int) -> str:
        """The rest of a lock line or agent frame whose "-" hard wrapping left on the line before."""
        dash_line_no, self.lone_dash = self.lone_dash, None
        if dash_line_no != line_no - 1 or self.thread is None or not line.strip():
            return line
        self._rejoined(self.thread, line_no)
        return "\t- " + line.strip()

    def _indented(self, line: str, body: str, line_no: int) -> None:
        thread = self.thread
        dump = self.dump
        assert dump is not None
        if not body:
            return
        if thread is not None and body.rstrip() == "-":
            self.lone_dash = line_no
            return
        if body.startswith(STATE_LINE) and (thread is None or thread.frames):
            # A state line with no header before it, or after another thread's stack: a thread
            # whose header the excerpt left out.
            thread = self._headerless_thread(body, line_no)
        if thread is None:
            if body.startswith(SMR_LINES[1:]):
                return  # SMR block of JDK 11+
            self._unparsed(line_no, line)
            return
        if body.startswith("- "):
            if thread.in_synchronizers:
                self._synchronizer(thread, body, line, line_no)
            elif " @bci=" in body or self._agent_frame_cut(thread, body):
                thread.frames.append(parse_agent_frame(body[2:]))
            else:
                self._lock_event(thread, body, line, line_no)
            return
        if body.startswith(STATE_LINE):
            thread.state_text = body[len(STATE_LINE) :]
            thread.state_line_no = line_no
            if not thread.frames:
                thread.stack_line_no = line_no + 1
            return
        if body.startswith(SYNCHRONIZERS):
            self._synchronizers_start(thread)
            return
        if body.startswith((THREADINFO_SYNCHRONIZERS, JMX_SYNCHRONIZERS)):
            self._synchronizers_start(thread)
            return
        if body == "...":
            return  # ThreadInfo.toString() prints at most 8 frames, then this
        if body.startswith(CARRYING):
            thread.carried = parse_number(body[len(CARRYING) :].strip())
            thread.stack_line_no = line_no + 1
            return
        if body.startswith(MOUNTED):
            self._mounted_virtual_thread(thread, body, line_no)
            return
        if body.startswith(("JavaThread state:", "No compile task", "Compiling:")):
            # jhsdb's VM-internal state; JIT compiler threads' current task (JDK 9+).
            if not thread.frames:
                thread.stack_line_no = line_no + 1
            return
        if body.startswith(jrockit.PASSED_OVER):
            return
        if body.startswith(("-- ", "^-- ")) and self._jrockit_lock_line(thread, body, line_no):
            return
        if dump.jrockit and jrockit.in_braces(thread.header) and body.rstrip().endswith(")"):
            thread.frames.append(parse_java_frame(body.rstrip()))  # WebLogic's layout: no "at "
            return
        if self._rejoin(thread, line, line_no):
            return
        self._unparsed(line_no, line)

    def _jrockit_lock_line(self, thread: _ThreadBuilder, body: str, line_no: int) -> bool:
        parsed = jrockit.lock_line(body)
        if parsed is None:
            return False
        kind, lock_id, lock_class = parsed
        if not thread.frames:
            # JRockit names what a thread waits for above its first frame, where HotSpot's layout
            # has none: the frames' line numbers no longer follow from the stack's first line.
            thread.stack_line_no = 0
            thread.state_text = thread.state_text or jrockit.WAIT_STATES.get(kind)
        frame_index = max(len(thread.frames) - 1, 0)
        thread.events.append(LockEvent(kind, lock_id, lock_class, frame_index, line_no, body.strip()))
        return True

    def _thread_cpu_line(self, line: str, line_no: int) -> bool:
        if not self.thread_cpu.feed(line, line_no):
            return False
        rows = self.thread_cpu.take()
        if self.dump is not None:
            self.dump.os_threads += rows
        else:
            self.pending_os_threads += rows
        return True

    def _header_after_name(self, line: str, line_no: int) -> bool:
        """The fields of a header whose quoted name ended the line before: one header."""
        assert self.name_only is not None
        name_line, name_line_no = self.name_only
        self.name_only = None
        if name_line_no == line_no - 1 and _HEADER_FIELDS.match(line):
            self._quoted(join_words(name_line, line), name_line_no)
            if self.dump is not None:
                self.dump.rejoined += 1
            return True
        if name_line_no == line_no - 1 and self.mode == IN_DUMP and line.lstrip().startswith(STATE_LINE):
            # A header that is the name alone, its state line under it: Spring Boot's text thread
            # dump prints the Finalizer so. The state line is this thread's.
            self._finish_thread()
            name = name_line.strip()
            self.thread = _ThreadBuilder(name[1:-1], name_line_no, name)
            return False
        if self.dump is not None:
            self._unparsed(name_line_no, name_line)
        return False

    def _report_stack_after_name(self, line: str, line_no: int) -> None:
        """A frame under a `"name":` line read outside any dump: the stacks of the JVM's deadlock
        report, pasted from their first thread on (without "Java stack information for the
        threads listed above:"). They are the dump, as when that heading is given."""
        assert self.report_name is not None
        name_line, name_line_no = self.report_name
        self.report_name = None
        if self.mode == OUTSIDE and name_line_no == line_no - 1 and line.lstrip().startswith("at "):
            self._start_report_only_dump(name_line_no)
            self.thread = _ThreadBuilder(name_line[1:-2], name_line_no, name_line)

    def _name_continues(self, line: str, line_no: int) -> bool:
        """The next line of a thread name that holds line breaks (Thread.setName("a\nb") prints
        them as they are): the header is complete on the line that closes the name and carries
        the header's fields; any other line that could be a name's takes its place in it."""
        parts = [text for text, _ in self.open_name]
        wrapped = all(_cut_by_wrapping(part, after) for part, after in zip(parts, [*parts[1:], line]))
        candidate = _unwrapped([*parts, line]) if wrapped else "\n".join([*parts, line])
        # The name may close on an earlier line than the header's fields end (wrapped there too).
        if candidate.count('"') >= 2 and looks_like_hotspot_header(candidate):
            start = self.open_name[0][1]
            self.open_name = []
            self._quoted(candidate, start)
            if wrapped and self.dump is not None:
                self.dump.rejoined += len(parts)
            return True
        room = MAX_NAME_LINES if self.mode == IN_DUMP else 1
        if len(self.open_name) < room and not line.startswith(_NOT_IN_A_NAME):
            self.open_name.append((line, line_no))
            return True
        pending, self.open_name = self.open_name, []
        if self.dump is not None:
            for text, number in pending:
                self._unparsed(number, text)
        return False

    def _rejoin(self, thread: _ThreadBuilder, line: str, line_no: int) -> bool:
        """Join a line that hard wrapping cut off the one before it back to that line (only while
        the joined line stays within MAX_REJOINED_CHARS: each join copies it)."""
        adjacent = self.last_rejoined == line_no - 1
        events = thread.events
        if events and (events[-1].line_no == line_no - 1 or adjacent):
            last = events[-1]
            if fits(last.text, line) and (unbalanced(last.text) or lock_class_missing(last.text)):
                text = join_token(last.text, line)
                kind, lock_id, lock_class = parse_lock_line(text)
                if kind is None:
                    return False
                events[-1] = LockEvent(kind, lock_id, lock_class, last.frame_index, last.line_no, text)
                return self._rejoined(thread, line_no)
        synchronizers = thread.synchronizers
        if thread.in_synchronizers and synchronizers:
            last_held = synchronizers[-1]
            if fits(last_held.text, line) and (
                unbalanced(last_held.text) or lock_class_missing(last_held.text)
            ):
                text = join_token(last_held.text, line)
                _, lock_id, lock_class = parse_lock_line(text)
                if lock_id is None:
                    return False
                synchronizers[-1] = LockRef(lock_id, lock_class, last_held.line_no, text)
                return self._rejoined(thread, line_no)
            return False
        frames = thread.frames
        event_after_frame = bool(events) and events[-1].frame_index >= len(frames) - 1 and bool(frames)
        if frames and not fits(frames[-1].text, line):
            return False
        if frames and not event_after_frame and self._agents_dump(thread):
            if agent_frame_unfinished(frames[-1].text):
                frames[-1] = parse_agent_frame(join_token(frames[-1].text, line))
                return self._rejoined(thread, line_no)
        elif frames and not event_after_frame and frame_unfinished(frames[-1].text):
            frames[-1] = parse_java_frame(join_token(frames[-1].text, line))
            return self._rejoined(thread, line_no)
        if frames:
            return False
        if not fits(thread.header, line) or not fits(thread.state_text or "", line):
            return False
        threadinfo = " Id=" in thread.header
        address = address_rejoined(thread.header, line) if thread.state_text is None else None
        if address is not None:
            thread.header = address
            self._rejoined(thread, line_no)
            thread.stack_line_no = line_no + 1
            return True
        if thread.state_text is not None and not threadinfo:
            if unbalanced(thread.state_text):
                thread.state_text = join_words(thread.state_text, line)
                return self._rejoined(thread, line_no)
            return False
        if header_unfinished(thread.header) if threadinfo else header_continues(thread.header, line):
            thread.header = join_words(thread.header, line)
            info = THREADINFO.match(thread.header) if threadinfo else None
            if info is not None:
                thread.state_text = info["state"]
            self._rejoined(thread, line_no)
            thread.stack_line_no = line_no + 1
            return True
        return False

    def _rejoined(self, thread: _ThreadBuilder, line_no: int) -> bool:
        assert self.dump is not None
        self.dump.rejoined += 1
        self.last_rejoined = line_no
        thread.stack_line_no = 0  # frame line numbers no longer follow from the layout
        return True

    def _unparsed(self, line_no: int, line: str) -> None:
        assert self.dump is not None
        if self._thread_cpu_line(line, line_no):
            return
        self.dump.unparsed_line(line_no, line)
        if self.thread is not None:
            # A foreign line inside a stack: frame line numbers can no longer be derived.
            self.thread.stack_line_no = 0

    def _synchronizers_start(self, thread: _ThreadBuilder) -> None:
        thread.in_synchronizers = True
        thread.synchronizers = []
        assert self.dump is not None
        self.dump.has_lock_data = True

    def _parsed_lock_line(self, key: str, body: str) -> _ParsedLockLine:
        """`body` (`- waiting to lock <0x..> (a pkg.Lock)`) parsed once per distinct `key` (the
        line as read): pool threads wait on and hold the same locks, dump after dump."""
        parsed = self.lock_line_cache.get(key)
        if parsed is None:
            if len(self.lock_line_cache) >= MAX_FRAME_CACHE:
                self.lock_line_cache.clear()
                self.lock_line_cache.update(_STRUCTURE_LINES)
            kind, lock_id, lock_class = parse_lock_line(body)
            parsed = self.lock_line_cache[key] = (kind, lock_id, lock_class, key.strip())
        return parsed

    def _lock_event(self, thread: _ThreadBuilder, body: str, line: str, line_no: int) -> None:
        # Keyed by the line as read (the hot loop looks it up the same way before calling here).
        kind, lock_id, lock_class, text = self._parsed_lock_line(line, body)
        if kind is None:
            assert self.dump is not None
            self._unparsed(line_no, line)
            return
        frame_index = max(len(thread.frames) - 1, 0)
        thread.events.append(LockEvent(kind, lock_id, lock_class, frame_index, line_no, text))

    def _synchronizer(self, thread: _ThreadBuilder, body: str, line: str, line_no: int) -> None:
        rest = body[2:].strip()
        if rest == "None":
            return
        key = "- " + rest
        _, lock_id, lock_class, _ = self._parsed_lock_line(key, key)
        if lock_id is None:
            assert self.dump is not None
            self._unparsed(line_no, line)
            return
        assert thread.synchronizers is not None
        thread.synchronizers.append(LockRef(lock_id, lock_class, line_no, line.strip()))

    def _mounted_virtual_thread(self, carrier: _ThreadBuilder, body: str, line_no: int) -> None:
        """JDK 21+: the carrier's stack is followed by the stack of the virtual thread it runs."""
        virtual_id = parse_number(body[len(MOUNTED) :].strip())
        self._finish_thread()
        virtual = _ThreadBuilder(f"virtual thread #{virtual_id}", line_no, body.strip())
        virtual.state_text = carrier.state_text or "RUNNABLE"
        self.thread = virtual

    # -- everything else: headers, banners, footers, reports, log text ---------------------------

    def _other(self, line: str, first: str, line_no: int) -> None:
        if self.mode == IN_REPORT:
            self._report_line(line, line_no)
            return
        if first == '"':
            self._quoted(line, line_no)
            return
        if not line:
            if self.thread is not None:
                self.thread.in_synchronizers = False
            return
        if self.mode == OUTSIDE:
            if self._thread_cpu_line(line, line_no):
                return
            self._maybe_signal(line, line_no)
            if first in ("\t", " "):
                self._indented_dump_start(line, line_no)
                return
        self._unindented(line, line_no)

    def _indented_dump_start(self, line: str, line_no: int) -> None:
        """A banner or thread header indented as a Markdown code block (a blog post, a README):
        the indent is learned as a prefix and the dump read as if it were flush left."""
        body = line.lstrip()
        if body.startswith(STATE_LINE):
            # An excerpt that starts at the state line: its thread's header was not copied.
            self._headerless_thread(body, line_no)
            self._indented(line, body, line_no)
            return
        if not (body.startswith(BANNER) or (body.startswith('"') and looks_like_hotspot_header(body))):
            return
        self.prefix.learn(line, len(line) - len(body))
        if self.prefix.active:
            self._other(body, body[:1], line_no)

    def _maybe_signal(self, line: str, line_no: int) -> None:
        """Keep log lines around the dumps that say what the threads cannot (see SIGNALS)."""
        if not any(marker in line for marker in SIGNALS):
            # A log line that hard wrapping cut in two: the marker spans the break.
            joined = self.previous_line.rstrip() + " " + line.lstrip("> \t").rstrip()
            if not any(marker in joined and marker not in self.previous_line for marker in SIGNALS):
                return
            line, line_no = joined, line_no - 1
        signal = UnparsedLine(line_no, line.strip())
        if self.dump is not None:
            if len(self.dump.signals) < MAX_UNPARSED_KEPT:
                self.dump.signals.append(signal)
        elif len(self.pending_signals) < MAX_UNPARSED_KEPT:
            self.pending_signals.append(signal)

    def _headerless_thread(self, state_line: str, line_no: int) -> _ThreadBuilder:
        """Open a thread at a state line whose header is not in the text, named by its line; the
        state line stands in for the header where a finding quotes it."""
        if self.mode != IN_DUMP or self.dump is None or self.dump.footer_seen:
            self._start_dump(line_no, banner=None)
        assert self.dump is not None
        self._finish_thread()
        self.dump.headerless.append(line_no)
        self.thread = _ThreadBuilder(headerless_name(line_no), line_no, state_line.strip())
        return self.thread

    def _quoted(self, line: str, line_no: int) -> None:
        thread = self.thread
        if thread is not None and not thread.frames and header_unfinished(thread.header):
            # A header cut inside ("... owned by" | ""other" Id=12"): not the next thread.
            if self._rejoin(thread, line, line_no):
                return
        if line.endswith('":'):  # `"name":` opens a thread of a deadlock report, not a thread
            if self.dump is not None and self.dump.report_only:
                # ...unless the report is all there is: then its stacks are the threads.
                self._finish_thread()
                self.thread = _ThreadBuilder(line[1:-2], line_no, line)
            elif self.dump is not None:
                self._unparsed(line_no, line)
            else:
                self.report_name = (line, line_no)
            return
        builder = _thread_from_header(line, line_no)
        if builder is None:
            if _NAME_ONLY.match(line):
                # A long name pushed the header's fields to the next line (hard wrapping)?
                self.name_only = (line, line_no)
                return
            if (
                len(line) < MAX_NAME_CHARS
                and '" ' not in line
                and (self.mode == IN_DUMP or _opens_name(line))
            ):
                # A name that goes on on the next line: the header is complete further down.
                # Outside a dump only the next line is waited for.
                self.open_name = [(line, line_no)]
                return
            if self.dump is not None:
                self._unparsed(line_no, line)
            return
        if self.mode != IN_DUMP or self.dump is None or self.dump.footer_seen:
            self._start_dump(line_no, banner=None)
        self._finish_thread()
        self.thread = builder
        if "cpuUsage=" in line:
            sampled = header_cpu(line, line_no)  # Arthas' `thread -n`: the busiest threads
            if sampled is not None:
                assert self.dump is not None
                self.dump.os_threads.append(sampled)

    def _unindented(self, line: str, line_no: int) -> None:
        if BANNER in line:
            if not line.startswith(BANNER):
                self.prefix.learn(line, line.index(BANNER))
                self.previous_line = self.prefix.strip(self.previous_line)
                self.previous_previous_line = self.prefix.strip(self.previous_previous_line)
                line = line[line.index(BANNER) :]
            self._start_dump(line_no, banner=line.rstrip(":").strip())
            return
        if line.startswith(jrockit.BANNER):
            self._start_dump(line_no, banner=line.strip("= \t"))
            assert self.dump is not None
            self.dump.jrockit = True
            return
        if self.dump is not None and self.dump.jrockit and jrockit.ends_dump(line):
            self._footer(line, line_no, jni=False)
            return
        tool_banner = _TOOL_BANNER.match(line)
        if tool_banner:
            # Wrappers that announce the tool instead of printing the JVM's banner.
            self._start_dump(line_no, banner=line.rstrip(":").strip())
            assert self.dump is not None
            self.dump.producer = tool_banner["tool"]
            self.dump.pid = decimal(tool_banner["pid"])
            return
        agent_banner = _AGENT_BANNER.match(line)
        if agent_banner:
            self._start_dump(line_no, banner=line.strip())
            assert self.dump is not None
            self.dump.producer = AGENT_PRODUCER
            self.dump.pid = decimal(agent_banner["pid"])
            return
        if lost_opening_quote(line):
            self._quoted('"' + line, line_no)
            if self.dump is not None:
                self.dump.lost_quotes.append(line_no)
            return
        if self._learn_prefix_from_header(line, line_no):
            return
        if line.startswith("JNI global ref"):
            self._footer(line, line_no)
            return
        if line.rstrip() == END_OF_DUMP:
            self._footer(line, line_no, jni=False)
            return
        if DEADLOCK_START in line and not line.startswith(DEADLOCK_START) and self.dump is None:
            # A report quoted or logged ("> Found one ...", "2024-... Found one ..."): as for a banner
            self.prefix.learn(line, line.index(DEADLOCK_START))
            line = line[line.index(DEADLOCK_START) :]
        if line.startswith(DEADLOCK_START):
            if self.dump is None:
                # The deadlock report pasted on its own, as most bug reports carry it: it is the
                # dump (its cycle, and the stacks it lists after "Java stack information").
                self._start_report_only_dump(line_no)
            self._begin_report()
            return
        if line.startswith(REPORT_STACKS) and self.dump is None:
            # Only the stacks half of a deadlock report (SPARK-11104): the cycle is left to the
            # lock lines, as in any dump without the JVM's report.
            self._start_report_only_dump(line_no)
            return
        if line.startswith("Thread ") and self._agent_header(line, line_no):
            return
        if self.mode == IN_DUMP:
            self._unindented_in_dump(line, line_no)

    def _agents_dump(self, thread: _ThreadBuilder) -> bool:
        """Frames in the serviceability agent's layout (`- pkg.C.m(args) @bci=N, line=L (...)`)."""
        if self.dump is not None and self.dump.producer == AGENT_PRODUCER:
            return True
        return any(" @bci=" in frame.text for frame in thread.frames)

    def _agent_frame_cut(self, thread: _ThreadBuilder, body: str) -> bool:
        """An agent's frame that hard wrapping cut before its `@bci=`, not a lock line."""
        rest = body[2:].rstrip()
        cut = "(" in rest or ("." in rest and " " not in rest)  # cut inside, or before its "("
        return cut and parse_lock_line(body)[0] is None and self._agents_dump(thread)

    def _agent_line(self, line: str) -> bool:
        """The serviceability agent's own lines: its preamble, and --mixed's thread separators
        and native frames."""
        if _AGENT_PREAMBLE.match(line) or _MIXED_SEPARATOR.match(line):
            return True
        if _MIXED_NATIVE_FRAME.match(line):
            assert self.dump is not None
            if MIXED_NOTE not in self.dump.notes:
                self.dump.notes.append(MIXED_NOTE)
            return True
        return False

    def _unindented_in_dump(self, line: str, line_no: int) -> None:
        dump = self.dump
        assert dump is not None
        if self._thread_cpu_line(line, line_no):
            return
        if line.startswith(jrockit.LOCK_CHAINS):
            self._finish_thread()
            self.mode = IN_LOCK_CHAINS
            return
        if dump.jrockit and self._jrockit_braces(line, line_no):
            return
        thread = self.thread
        if (
            thread is None
            and not dump.threads
            and dump.banner
            and fits(dump.banner, line)
            and unbalanced(dump.banner)
        ):
            # "Full thread dump OpenJDK ... (17.0.15+6-Debian-1deb12u1" | "mixed mode, sharing):"
            dump.banner = join_words(dump.banner, line).rstrip(":").rstrip()
            dump.rejoined += 1
            return
        if thread is not None and line.startswith("at "):
            thread.frames.append(parse_java_frame(line[3:]))  # a logger stripped the indent
            return
        if line.startswith(STATE_LINE):
            # The state line lost its indent the same way (a README's code block indented less
            # than the header's): the thread's state, or a thread whose header is not in the text.
            self._indented(line, line, line_no)
            return
        if thread is not None and line.startswith(SYNCHRONIZERS):
            self._synchronizers_start(thread)  # flush left in jhsdb jstack --locks
            return
        held_entry = line == "- None" or line.startswith(_HELD_ENTRY)
        if thread is not None and thread.in_synchronizers and held_entry:
            # The "Locked ownable synchronizers:" entries, flush left the same way (a static
            # site's page that dropped every tab of the dump); a bullet of prose is not one.
            self._synchronizer(thread, line, line, line_no)
            return
        if thread is not None and line.startswith("- "):
            # Its lock lines lost the indent the same way (a PR body pasted flush left: the
            # Netflix/suro #233 producer-close dump): read as lock lines, not as the end of the
            # fragment. Any other "- " text is left to the fragment rule below.
            if self._parsed_lock_line(line, line)[0] is not None:
                self._lock_event(thread, line, line, line_no)
                return
        if is_annotation(line):
            # "..." where a reporter left threads out, "[t2]" where they numbered the next
            # excerpt: the excerpt goes on (KAFKA-1305, KAFKA-916), and it continues no wrapped line.
            return
        if line == GREP_SEPARATOR:
            # Between the groups of lines `grep -A/-B/-C` printed ("jstack PID | grep -A 20 kafka"):
            # one excerpt goes on, but every group was cut at a fixed number of lines.
            if GREP_NOTE not in dump.notes:
                dump.notes.append(GREP_NOTE)
            return
        if thread is not None and self._rejoin(thread, line, line_no):
            return
        if thread is None and line.startswith(SMR_LINES):
            return
        if _DEADLOCK_COUNT.match(line):
            return
        if dump.producer == AGENT_PRODUCER and self._agent_line(line):
            return
        if dump.jrockit and thread is None and not dump.threads:
            # The date and the VM's line under JRockit's banner.
            if jrockit.VM_LINE.match(line):
                dump.banner = line.strip()
            elif dump.timestamp is None:
                dump.timestamp = line.strip()
            else:
                self._unparsed(line_no, line)
            return
        if _CLASS_HISTOGRAM.match(line):
            # -XX:+PrintClassHistogram prints the heap's classes after the threads: the dump is
            # complete (a JDK 5 dump has no footer to say so), the histogram is not a dump's.
            dump.footer_seen = True
            self._end_dump_before(line_no)
            return
        if dump.report_only:
            if line.startswith(DEADLOCK_START):
                self._begin_report()  # the next cycle of a deadlock report given on its own
                return
            if line.strip("=") == "":
                return  # the report's underlines
        if dump.banner is None and (dump.threads or thread is not None):
            # A fragment without banner or footer (ThreadInfo text an application logged, a
            # pasted part of a dump): the first unrelated log line ends it.
            self._end_dump_before(line_no)
            return
        self._unparsed(line_no, line)

    def _jrockit_braces(self, line: str, line_no: int) -> bool:
        """WebLogic's `Thread-0x80 "name" <Waiting, priority=5> {` opens a thread, `}` ends it."""
        if line.startswith("Thread-"):
            header = JROCKIT_BRACES.match(line)
            if header is None:
                return False
            self._finish_thread()
            self.thread = _ThreadBuilder(header["name"], line_no, line)
            return True
        if line.rstrip() == "}" and self.thread is not None and jrockit.in_braces(self.thread.header):
            self._finish_thread()
            return True
        return False

    def _end_dump_before(self, line_no: int) -> None:
        """The open dump ends on the line before `line_no`, which is not a line of it."""
        assert self.dump is not None
        self._finish_thread()
        self.dump.end_line_no = line_no - 1
        self._finish_dump()
        self.mode = OUTSIDE

    def _learn_prefix_from_header(self, line: str, line_no: int) -> bool:
        """A thread header after a log prefix ("2024-.. INFO [x] "): learn it, then parse."""
        quote = line.find('"')
        if quote <= 0 or not (" prio=" in line or " tid=" in line or " nid=" in line):
            return False
        self.prefix.learn(line, quote)
        self._quoted(line[quote:], line_no)
        return True

    def _agent_header(self, line: str, line_no: int) -> bool:
        match = AGENT.match(line)
        if match is None:
            return False
        if self.mode != IN_DUMP or self.dump is None or self.dump.footer_seen:
            self._start_dump(line_no, banner=None)
        self._finish_thread()
        assert self.dump is not None
        self.dump.agent_threads = True
        builder = _ThreadBuilder(f"Thread {match['nid']}", line_no, line)
        builder.state_text = match["state"]
        if builder.state_text == "IN_NATIVE":
            builder.state_text = "RUNNABLE"
        self.thread = builder
        return True

    def _footer(self, line: str, line_no: int, jni: bool = True) -> None:
        if self.dump is None:
            return
        self._finish_thread()
        if jni:
            self.dump.jni = line.strip()
        self.dump.footer_seen = True
        self.dump.end_line_no = line_no
        self.mode = OUTSIDE

    # -- the JVM's deadlock report -----------------------------------------------------------------

    def _begin_report(self) -> None:
        self._finish_thread()
        self.mode = IN_REPORT
        self.report_links = []
        self.report_thread = None
        self.report_waiting = ""
        self.report_lines = []

    def _report_line(self, line: str, line_no: int) -> None:
        """Lines of "Found one Java-level deadlock:" up to "Found N deadlock(s)."."""
        stripped = line.strip()
        if self.dump is not None:
            self.dump.end_line_no = line_no
        if line.startswith('"') and not line.endswith('":'):
            # A real thread header: the report ended without its "Found N deadlocks." line.
            self._close_report_cycle()
            self.mode = IN_DUMP if self.dump is not None and not self.dump.footer_seen else OUTSIDE
            self._quoted(line, line_no)
            return
        repeated, self.report_repeated = self.report_repeated, None
        if repeated is not None and stripped.startswith("at "):
            # A thread the cycle already listed, named again, then a frame: its stack, pasted
            # without the "Java stack information for the threads listed above" heading
            # (KAFKA-2253). (Named again and then "waiting to lock" is another thread of the same
            # name in the cycle.)
            self._close_report_cycle()
            self.report_thread = None
            if self.dump is not None and self.dump.report_only:
                self.mode = IN_DUMP
                self._quoted(repeated[0], repeated[1])
                self._dispatch(line, line_no)
            return
        named = _REPORT_THREAD.match(stripped)
        if named:
            if any(link.thread_name == named["name"] for link in self.report_links):
                self.report_repeated = (stripped, line_no)
            self.report_thread = named["name"]
            self.report_lines = [QuotedLine(line_no, stripped)]
            return
        if stripped.startswith(("waiting to lock", "waiting for ownable", "waiting to re-lock")):
            self.report_waiting = stripped.rstrip(",")
            self.report_lines.append(QuotedLine(line_no, stripped))
            return
        if (
            self.report_waiting
            and fits(self.report_waiting, stripped)
            and unbalanced(self.report_waiting)
            and not stripped.startswith("which")
        ):
            # "waiting to lock monitor 0x.. (object" | "0x.., a pkg.Class)," cut by hard wrapping
            self.report_waiting = join_words(self.report_waiting, stripped).rstrip(",")
            self.report_lines.append(QuotedLine(line_no, stripped))
            return
        held = _HELD_BY.search(stripped)
        if held and self.report_thread is not None:
            lock = _REPORT_LOCK_ID.search(self.report_waiting)
            if lock is None:
                lock = re.search(r"(0x[0-9a-fA-F]+)", self.report_waiting)
            self.report_links.append(
                DeadlockLink(
                    thread_name=self.report_thread,
                    waiting_for=self.report_waiting,
                    lock_id=int(lock.group(1), 16) if lock else None,
                    held_by=held["name"],
                    lines=(*self.report_lines, QuotedLine(line_no, stripped)),
                )
            )
            self.report_lines = []
            return
        if stripped.startswith(DEADLOCK_START) or stripped.startswith(REPORT_STACKS):
            self._close_report_cycle()
            self.report_thread = None
            stacks_follow = stripped.startswith(REPORT_STACKS)
            if stacks_follow and self.dump is not None and self.dump.report_only:
                self.mode = IN_DUMP  # the stacks that follow are the only ones there are: read them
            return
        if _DEADLOCK_COUNT.match(stripped) or BANNER in line:
            self._close_report_cycle()
            self.mode = OUTSIDE
            if BANNER in line:
                self._unindented(line, line_no)
            return
        # Stack lines of "Java stack information for the threads listed above" and the ===
        # underlines: understood, and already present in the threads themselves.

    def _close_report_cycle(self) -> None:
        # The report follows the footer of the dump it belongs to, which stays open until the
        # next dump starts.
        if self.report_links and self.dump is not None:
            self.dump.deadlocks.append(tuple(self.report_links))
        self.report_links = []

    # -- dump and thread lifecycle ----------------------------------------------------------------

    def _start_report_only_dump(self, line_no: int) -> None:
        self._start_dump(line_no, banner=None)
        assert self.dump is not None
        self.dump.report_only = True

    def _start_dump(self, line_no: int, banner: str | None) -> None:
        self._finish_dump()
        start_line = line_no
        timestamp = None
        pid = None
        previous = self.previous_line.strip()
        if banner is not None and _TIMESTAMP.match(previous):
            timestamp = previous
            start_line = line_no - 1
            pid_match = _JCMD_PID.match(self.previous_previous_line.strip())
            if pid_match:
                pid = decimal(pid_match.group(1))
                start_line -= 1
        else:
            pid_match = _JCMD_PID.match(previous)
            if banner is not None and pid_match:
                pid = decimal(pid_match.group(1))
                start_line -= 1
        dump = _DumpBuilder(self.source, self.dump_count, start_line)
        dump.signals, self.pending_signals = self.pending_signals, []
        dump.os_threads, self.pending_os_threads = self.pending_os_threads, []
        dump.banner = banner
        dump.timestamp = timestamp
        dump.pid = pid
        if pid is not None:
            dump.producer = "jcmd"
        self.dump_count += 1
        self.dump = dump
        self.mode = IN_DUMP

    def _finish_thread(self) -> None:
        thread = self.thread
        dump = self.dump
        if (
            thread is not None
            and dump is not None
            and not thread.frames
            and thread.header.startswith(STATE_LINE)
        ):
            # A state line with no stack after it opened no thread (a file stored line-reversed
            # puts every state line after its stack): it stays a line that was not understood.
            dump.headerless.remove(thread.line_no)
            dump.unparsed_line(thread.line_no, thread.header)
            self.thread = None
            return
        if thread is not None and dump is not None:
            # The dump's end moves past its threads once, when it is built (they come in order).
            dump.threads.append(thread.build())
            if thread.stated_owner is not None:
                dump.stated_owners.append((len(dump.threads) - 1, *thread.stated_owner))
        self.thread = None

    def _finish_dump(self, input_ended: bool = False) -> None:
        if self.dump is None:
            return
        in_thread = self.thread is not None
        self._finish_thread()
        dump = self.dump
        if dump.threads or dump.banner is not None or dump.deadlocks:
            if dump.end_line_no < self.last_line_no and not dump.footer_seen:
                dump.end_line_no = self.last_line_no
            # VisualVM writes no JNI footer; only a HotSpot dump without one, inside a thread when
            # the input ended, was cut short (JDK 5 and HP-UX JVMs print no footer at all: a dump of
            # theirs that the next one follows is whole).
            truncated = (
                self.dump_format is DumpFormat.HOTSPOT
                and input_ended
                and not dump.footer_seen
                and dump.producer != AGENT_PRODUCER  # the serviceability agent prints no footer
                and dump.banner is not None
                and in_thread
            )
            self.pending.append(dump.build(truncated, self.dump_format))
        self.dump = None

    def finish(self) -> None:
        if self.mode == IN_REPORT:
            self._close_report_cycle()
        self._finish_dump(input_ended=True)

    def take_finished(self) -> list[ThreadDump]:
        """Dumps that can no longer change (the open dump may still get a deadlock report)."""
        ready, self.pending = self.pending, []
        return ready


class CyclicGcPause:
    """The cyclic garbage collector paused while a dump is read, as the caller had it otherwise.

    Parsing allocates millions of tuples that never form cycles; with the collector running, each
    of its generational passes re-scans everything built so far (on a 150,000-thread dump, a
    pause per batch of lines left that at a seventh of the parse). Reference counting still frees
    everything. Each pause remembers the state it found, so a parse inside another parse, or a
    caller that turned the collector off itself, gets back exactly what it had.
    """

    def __init__(self) -> None:
        self._found: bool | None = None  # the state found by the pause in force, if any

    def pause(self) -> None:
        if self._found is None:
            self._found = gc.isenabled()
            gc.disable()

    def resume(self) -> None:
        if self._found is not None:
            if self._found:
                if gc.get_freeze_count() == 0:
                    # What the paused parse built is the dump: long-lived by nature. Moved to
                    # the oldest generation in one step (freeze, then unfreeze, splice lists),
                    # the first young collection after the pause does not walk every thread,
                    # frame tuple and lock event of it. A process that froze objects itself (a
                    # pre-fork server) keeps its freeze.
                    gc.freeze()
                    gc.unfreeze()
                gc.enable()
            self._found = None


def parse_hotspot(
    batches: Iterable[list[str]], source: str, dump_format: DumpFormat = DumpFormat.HOTSPOT
) -> Iterator[ThreadDump]:
    """Parse HotSpot thread dumps from batches of lines; yield each dump once complete.

    Excerpts of one dump pasted apart (fragments without a banner) come out joined as one.
    """
    return join_excerpts(_parse_hotspot(batches, source, dump_format))


def _parse_hotspot(
    batches: Iterable[list[str]], source: str, dump_format: DumpFormat
) -> Iterator[ThreadDump]:
    parser = HotspotParser(source, dump_format)
    next_line_no = 1
    collector = CyclicGcPause()
    collector.pause()
    try:
        for batch in batches:
            next_line_no = parser.feed_batch(batch, next_line_no)
            finished = parser.take_finished()
            if finished:
                collector.resume()
                yield from finished
                collector.pause()
        parser.finish()
    finally:
        collector.resume()
    yield from parser.take_finished()
