"""The typed model every layer shares: dump -> threads -> frames, lock events, held synchronizers.

Records that a large dump holds by the hundred thousand (frames, lock events, threads) are
NamedTuples: immutable and picklable like frozen dataclasses, but about four times cheaper to
build, which matters when a 10,000-thread dump must parse in a fraction of a second. Per-dump
records are frozen dataclasses.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import NamedTuple

from kafkadiag.threadheader import HeaderFields, header_fields


class ThreadState(str, enum.Enum):
    """java.lang.Thread.State, plus UNKNOWN when the dump does not say."""

    NEW = "NEW"
    RUNNABLE = "RUNNABLE"
    BLOCKED = "BLOCKED"
    WAITING = "WAITING"
    TIMED_WAITING = "TIMED_WAITING"
    TERMINATED = "TERMINATED"
    UNKNOWN = "UNKNOWN"

    # Hashed as the string it is, in C: Enum's own __hash__ is a Python call, and states and
    # statuses are dict keys and set members in every per-thread step of parsing and analysis.
    __hash__ = str.__hash__


class ThreadStatus(str, enum.Enum):
    """What the thread is doing, derived from its state, top frame and lock lines.

    Thread.State alone is too coarse ("WAITING" covers Object.wait and LockSupport.park) and
    HotSpot sets it non-atomically with the lock lines, so the status is reconciled with the stack
    (a BLOCKED thread without any monitor it waits for is running, as far as anyone can tell).
    """

    RUNNABLE = "RUNNABLE"
    SLEEPING = "SLEEPING"
    IN_OBJECT_WAIT = "IN_OBJECT_WAIT"
    IN_OBJECT_WAIT_TIMED = "IN_OBJECT_WAIT_TIMED"
    PARKED = "PARKED"
    PARKED_TIMED = "PARKED_TIMED"
    BLOCKED = "BLOCKED"
    NEW = "NEW"
    TERMINATED = "TERMINATED"
    IDLE = "IDLE"  # py-spy: not running Python code (waiting in a lock, a sleep or a syscall)
    UNKNOWN = "UNKNOWN"

    __hash__ = str.__hash__  # as ThreadState's


class LockEventKind(str, enum.Enum):
    """One `- ...` line under a HotSpot frame (or its equivalent in another format)."""

    LOCKED = "locked"  # "- locked <0x..>": the thread holds this monitor
    WAITING_ON = "waiting on"  # "- waiting on <0x..>": in Object.wait(), monitor released
    PARKING = "parking to wait for"  # LockSupport.park on a synchronizer or condition
    WAITING_TO_LOCK = "waiting to lock"  # BLOCKED entering a synchronized block
    WAITING_TO_RELOCK = "waiting to re-lock"  # woke from wait(), re-acquiring (JDK 17+)
    ELIMINATED = "eliminated"  # lock elided by escape analysis; not really held

    __hash__ = str.__hash__  # as ThreadState's


class Variable(NamedTuple):
    """A local or argument of a Python frame (py-spy --locals)."""

    name: str
    value: str
    is_argument: bool


class Frame(NamedTuple):
    """One stack frame. `text` is the frame as the dump printed it, for quoting."""

    text: str
    function: str  # Java: "pkg.Class.method"; Python: "Class.method" or "function"
    file: str | None
    line: int | None
    native: bool = False
    module: str | None = None  # Java module ("java.base@17"); Python: py-spy's module, if any
    locals: tuple[Variable, ...] = ()

    @property
    def class_name(self) -> str:
        """The part of `function` before its last dot (empty for a plain function)."""
        return self.function.rpartition(".")[0]

    @property
    def method(self) -> str:
        return self.function.rpartition(".")[2]


class LockRef(NamedTuple):
    """A monitor or synchronizer named by its identity hash / address and its class."""

    lock_id: int
    lock_class: str | None
    line_no: int = 0  # where the dump says it is held (`- locked` or a synchronizer line)
    text: str = ""  # that line as printed

    # A reference names a lock; where it was printed is provenance, not identity.
    def __eq__(self, other: object) -> bool:
        if isinstance(other, LockRef):
            return (self.lock_id, self.lock_class) == (other.lock_id, other.lock_class)
        return NotImplemented

    def __ne__(self, other: object) -> bool:
        equal = self.__eq__(other)
        return equal if equal is NotImplemented else not equal

    def __hash__(self) -> int:
        return hash((self.lock_id, self.lock_class))


class LockEvent(NamedTuple):
    """A thread's relation to a lock, anchored to the frame it was printed under."""

    kind: LockEventKind
    lock_id: int | None  # None: "<no object reference available>"
    lock_class: str | None
    frame_index: int  # index into Thread.frames of the frame above this line
    line_no: int  # 1-based line number in the source file
    text: str = ""  # the line as printed, for quoting as evidence


class Thread(NamedTuple):
    """One thread of a dump, with everything its header and stack said.

    The numbers in the header (ids, priorities, CPU time) are read from `header` on first
    access (see kafkadiag.threadheader): most analyses never need them, and a large dump parses
    a third faster without them.
    """

    name: str
    state: ThreadState
    status: ThreadStatus
    line_no: int  # header line, 1-based, in the source file
    header: str  # the header line as printed, for quoting and for the fields below
    frames: tuple[Frame, ...] = ()
    lock_events: tuple[LockEvent, ...] = ()
    # None: the dump has no "Locked ownable synchronizers" section for this thread (no -l).
    held_synchronizers: tuple[LockRef, ...] | None = None
    carried_virtual_thread: int | None = None  # "Carrying virtual thread #N"
    # Line of the first frame; with the lock events' positions it gives every frame's line.
    # 0 when the format has no such line numbers (py-spy JSON, frames interleaved with locals).
    stack_line_no: int = 0
    # Each frame's line, for formats that print a frame on several lines (a traceback's source
    # line under each frame, gdb's C functions between them); empty when stack_line_no serves.
    frame_line_nos: tuple[int, ...] = ()

    @property
    def fields(self) -> HeaderFields:
        return header_fields(self.header)

    @property
    def java_id(self) -> int | None:
        return header_fields(self.header).java_id

    @property
    def daemon(self) -> bool:
        return header_fields(self.header).daemon

    @property
    def priority(self) -> int | None:
        return header_fields(self.header).priority

    @property
    def os_priority(self) -> int | None:
        return header_fields(self.header).os_priority

    @property
    def cpu_ms(self) -> float | None:
        return header_fields(self.header).cpu_ms

    @property
    def elapsed_s(self) -> float | None:
        return header_fields(self.header).elapsed_s

    @property
    def tid(self) -> int | None:
        """JVM thread pointer (HotSpot), or Python's thread ident when py-spy shows no OS id."""
        return header_fields(self.header).tid

    @property
    def nid(self) -> int | None:
        """OS thread id (the Linux TID): HotSpot's nid, py-spy's thread number."""
        return header_fields(self.header).nid

    @property
    def identity(self) -> tuple[str, int | None]:
        """The same thread in another dump of the process: its name and OS thread id (several
        threads may share a name; a thread keeps its OS id for its life)."""
        return self.name, header_fields(self.header).nid

    @property
    def virtual(self) -> bool:
        return header_fields(self.header).virtual

    @property
    def active(self) -> bool | None:
        return header_fields(self.header).active

    @property
    def owns_gil(self) -> bool | None:
        return header_fields(self.header).owns_gil

    def frame_line_no(self, index: int) -> int | None:
        """The source line of frame `index`, when the dump's layout makes it known."""
        if self.frame_line_nos:
            return self.frame_line_nos[index] if index < len(self.frame_line_nos) else None
        if not self.stack_line_no or index >= len(self.frames):
            return None
        if any(frame.locals for frame in self.frames):
            return None  # py-spy --locals: variable lines sit between the frames
        earlier_lock_lines = sum(1 for event in self.lock_events if event.frame_index < index)
        return self.stack_line_no + index + earlier_lock_lines

    @property
    def top_frame(self) -> Frame | None:
        return self.frames[0] if self.frames else None

    def held_locks(self) -> tuple[LockRef, ...]:
        """Monitors and synchronizers this thread owns right now.

        A monitor printed as `- locked` is not held when the same thread is in Object.wait()
        on it (`- waiting on`, wait() released it) or blocked re-entering it (HotSpot prints
        the outer `- locked` lines of a monitor the thread is re-acquiring after wait()).
        `- eliminated` locks were never taken.
        """
        events = self.lock_events
        released = {event.lock_id for event in events if event.kind in _RELEASING_KINDS}
        held: dict[int, LockRef] = {}
        for event in events:
            if event.kind is _LOCKED and event.lock_id is not None and event.lock_id not in released:
                held.setdefault(
                    event.lock_id, LockRef(event.lock_id, event.lock_class, event.line_no, event.text)
                )
        for synchronizer in self.held_synchronizers or ():
            held.setdefault(synchronizer.lock_id, synchronizer)
        return tuple(held.values())

    def waits_for(self) -> LockEvent | None:
        """The lock event this thread is blocked, parked or waiting on, if any.

        A RUNNABLE thread waits for nothing, whatever stale `parking to wait for` line HotSpot
        printed under it (the state and the lock lines are not written atomically).
        """
        status = self.status
        if status is _RUNNABLE or not self.lock_events:
            return None
        by_kind: dict[LockEventKind, LockEvent] = {}
        for event in self.lock_events:
            by_kind.setdefault(event.kind, event)
        for kind in _BLOCKED_PRECEDENCE if status is _BLOCKED else _WAITING_PRECEDENCE:
            if kind in by_kind:
                return by_kind[kind]
        return None


# A BLOCKED thread is stuck entering (or, after wait(), re-entering) a monitor. A WAITING one is in
# Object.wait() or parked: JDK 9+ print the outer frames of a monitor it waits on as "waiting to
# re-lock in wait()", but until notified it waits *on* that monitor, it does not contend for it.
_BLOCKED_PRECEDENCE = (
    LockEventKind.WAITING_TO_LOCK,
    LockEventKind.WAITING_TO_RELOCK,
    LockEventKind.PARKING,
    LockEventKind.WAITING_ON,
)
_WAITING_PRECEDENCE = (
    LockEventKind.PARKING,
    LockEventKind.WAITING_ON,
    LockEventKind.WAITING_TO_RELOCK,
    LockEventKind.WAITING_TO_LOCK,
)
# Enum members bound once: attribute access on an Enum class costs a descriptor call, and these
# run for every thread of every dump.
_RUNNABLE = ThreadStatus.RUNNABLE
_BLOCKED = ThreadStatus.BLOCKED
_LOCKED = LockEventKind.LOCKED
_RELEASING_KINDS = frozenset(
    {LockEventKind.WAITING_ON, LockEventKind.WAITING_TO_RELOCK, LockEventKind.WAITING_TO_LOCK}
)


class QuotedLine(NamedTuple):
    """A line of the input as read, kept to be quoted."""

    line_no: int
    text: str


class DeadlockLink(NamedTuple):
    """One thread of the JVM's "Found one Java-level deadlock" report: the lock it waits for and
    the thread the report says holds it (`"A":`, `waiting to lock monitor ...,`, `which is held by "B"`).
    A link says nothing about the links after it: HotSpot lists every thread its walk from the
    first one passed, so threads that only wait into the cycle come first (see
    kafkadiag.jvmreport.read_jvm_report)."""

    thread_name: str
    waiting_for: str  # "monitor 0x... (object 0x..., a java.lang.Object)" or an ownable synchronizer
    lock_id: int | None
    held_by: str
    # The report's lines for this thread, as read; none when a parser builds the link from another
    # layout (a javacore's cycle).
    lines: tuple[QuotedLine, ...] = ()


class OsThreadCpu(NamedTuple):
    """One thread's CPU use as given with a dump: a row of a `top -H` / `ps -L` table, a busy-thread
    script's line above the thread's stack, or Arthas' sampling in its header."""

    tid: int  # Linux thread id: HotSpot's nid, py-spy's thread number; 0 when not given
    cpu_percent: float
    cpu_time: str | None  # cumulative, as printed ("10:01.23", "00:03:12")
    command: str | None
    line_no: int
    text: str
    # The process's first thread (PID = thread id, when the table has both columns): ps and top
    # print the whole process's CPU on its row, so it says nothing about that one thread.
    process_leader: bool = False
    # A figure printed with a thread's stack rather than in a table (Arthas' `cpuUsage=` in the
    # header): that thread's header line. A figure with neither this nor a tid (a script's
    # "高CPU线程(99.9%):" above a stack) counts for the thread whose header follows it.
    thread_line_no: int = 0


class UnparsedLine(NamedTuple):
    line_no: int
    text: str


class DumpFormat(str, enum.Enum):
    HOTSPOT = "hotspot"  # jstack, jstack -l, jcmd Thread.print, kill -3
    NETBEANS = "netbeans"  # VisualVM / NetBeans "Thread t@N" rendering
    PYSPY = "py-spy"  # py-spy dump text
    PYSPY_JSON = "py-spy-json"  # py-spy dump --json
    JCMD_TEXT = "jcmd-text"  # jcmd Thread.dump_to_file -format=text (JDK 21+)
    JCMD_JSON = "jcmd-json"  # jcmd Thread.dump_to_file -format=json (JDK 21+)
    INTELLIJ = "intellij"  # IntelliJ IDEA debugger: Export Threads, copied stacks
    JAVACORE = "javacore"  # IBM J9 / OpenJ9 javacore
    ANDROID_ANR = "android-anr"  # Android ANR traces (ART, Dalvik)
    ACTUATOR_JSON = "actuator-json"  # Spring Boot Actuator /actuator/threaddump, JSON
    STACK_TRACES = "stack-traces"  # Thread.getAllStackTraces() logged: "Thread[name,5,main]" + frames
    JCONSOLE = "jconsole"  # JConsole's Threads tab: "Name:", "State:", "Stack trace:", frames
    FAULTHANDLER = "faulthandler"  # faulthandler.dump_traceback / register / a fatal error
    PY_TRACEBACK = "py-traceback"  # sys._current_frames() printed with the traceback module
    GDB_PY_BT = "gdb-py-bt"  # gdb `thread apply all py-bt`
    GEVENT = "gevent"  # gevent.util.format_run_info()
    ASYNCIO = "asyncio"  # Task.print_stack() for every asyncio.all_tasks()
    GURU_MEDITATION = "guru-meditation"  # oslo.reports' Guru Meditation Report (OpenStack, eventlet)
    GOCD_SUPPORT = "gocd-support"  # GoCD's /go/api/support report: its ThreadMXBean thread section


@dataclass(frozen=True)
class ThreadDump:
    """One dump: a single snapshot of one process's threads."""

    source: str  # file path, or "<stdin>"
    index: int  # 0-based position of this dump within its source
    format: DumpFormat
    line_no: int  # first line of the dump in the source
    end_line_no: int
    threads: tuple[Thread, ...]
    timestamp: str | None = None  # as printed ("2024-01-02 10:11:12")
    banner: str | None = None  # "Full thread dump OpenJDK 64-Bit Server VM (...)", "Python v3.11.7"
    producer: str | None = None  # best guess of the tool: jstack, jcmd, kill -3, py-spy
    pid: int | None = None
    jvm_deadlocks: tuple[tuple[DeadlockLink, ...], ...] = ()
    jni_global_refs: str | None = None
    unparsed: tuple[UnparsedLine, ...] = ()  # the first few, for display
    unparsed_count: int = 0
    truncated: bool = False  # the input ended in the middle of a thread
    has_lock_data: bool = False  # `-l`: ownable synchronizer sections present
    notes: tuple[str, ...] = field(default=())
    # Log lines around the dump that bear on a diagnosis (kafkadiag.dumps.hotspot.SIGNALS).
    log_signals: tuple[UnparsedLine, ...] = ()
    # A per-thread CPU table (top -H, ps -L) found beside the dump in the same input.
    os_threads: tuple[OsThreadCpu, ...] = ()

    def thread_named(self, name: str) -> Thread | None:
        for thread in self.threads:
            if thread.name == name:
                return thread
        return None
