"""IBM J9 / Eclipse OpenJ9 javacores (`kill -3`, `-Xdump:java`, `com.ibm.jvm.Dump.JavaDump()`).

Every line starts with a tag; the ones read here:

    1TIDATETIME    Date: 2022/06/06 at 11:44:58:405                       when
    1CIJAVAVERSION JRE 1.8.0 Windows 10 amd64-64 build 8.0.7.6 ...        banner
    1CIPROCESSID   Process ID: 32888 (0x8078)                             pid
    0SECTION       THREADS subcomponent dump routine                      threads follow
    3XMTHREADINFO      "worker-1" J9VMThread:0x00..., omrthread_t:0x..., state:B, prio=5
    3XMTHREADBLOCK     Blocked on: java/lang/Object@0x00F0001000 Owned by: "worker-2" (J9VMThread:0x...)
    4XESTACKTRACE                at com/example/Cache.get(Cache.java:10(Compiled Code))
    5XESTACKTRACE                   (entered lock: java/lang/Object@0x00000000F0002000, entry count: 1)
    1LKDEADLOCK    Deadlock detected !!!                                  the VM's own cycle report

States: R runnable, B blocked on a monitor, CW waiting on a condition (Object.wait, sleep),
P parked, S suspended, Z zombie. `Blocked on` / `Waiting on` / `Parked on` name what a thread
waits for and, when there is one, its owner: the owner is credited with the lock, which is how
a ReentrantLock holder is found (a javacore has no ownable-synchronizer list of its own).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from kafkadiag.digits import decimal
from kafkadiag.dumps.classicmonitors import ClassicMonitors
from kafkadiag.dumps.javaframes import parse_java_frame
from kafkadiag.dumps.jvmthreads import (
    DumpCollector,
    OpenThread,
    attach_synchronizers,
    lock_event,
)
from kafkadiag.dumps.linefeed import numbered_lines
from kafkadiag.dumps.rewrap import rejoined_note
from kafkadiag.model import (
    DeadlockLink,
    DumpFormat,
    Frame,
    LockEventKind,
    LockRef,
    ThreadDump,
    ThreadState,
)

_THREADINFO = re.compile(
    r'^3XMTHREADINFO\s+"(?P<name>.*)" J9VMThread:(?P<vmthread>0x[0-9A-Fa-f]+)(?P<rest>.*)$'
)
# IBM's Classic VM (Java 1.4 and before), its threads in section XM: `"name" (TID:0x2BDE718,
# sys_thread_t:0x10DD9048, state:CW, native ID:0xCD0) prio=5`.
_CLASSIC_THREADINFO = re.compile(
    r'^3XMTHREADINFO\s+"(?P<name>.*)" \(TID:(?P<tid>0x[0-9A-Fa-f]+),(?P<rest>.*)$'
)
_THREAD_SECTIONS = ("THREADS", "XM")
_STATE = re.compile(r"\bstate:(?P<state>[A-Z]+)")
_BLOCK = re.compile(
    r"^3XMTHREADBLOCK\s+(?P<how>Blocked on|Waiting on|Parked on): (?P<lock>\S+)"
    r"(?: Owned by: (?:\"(?P<owner>.*)\" \(J9VMThread:(?P<owner_vm>0x[0-9A-Fa-f]+)|(?P<nobody><[a-z]+>)))?"
)
_ENTERED = re.compile(r"^5XESTACKTRACE\s+\(entered lock: (?P<lock>[^,]+), entry count: \d+\)")
_DEADLOCK_THREAD = re.compile(r'^2LKDEADLOCKTHR\s+Thread "(?P<name>.*)" \((?P<vm>0x[0-9A-Fa-f]+)\)')
_DEADLOCK_OBJECT = re.compile(r"^4LKDEADLOCKOBJ\s+(?P<lock>\S+)")
_CLASSIC_LOCK = re.compile(r"@([0-9A-Fa-f]+)/[0-9A-Fa-f]+:?$")
_SECTION = re.compile(r"^0SECTION\s+(?P<name>\S+)")
# Every javacore line starts with its tag: a digit (the nesting level) and capitals.
_TAG = re.compile(r"^\d[A-Z0-9]{3,}$")
EXCERPT_NOTE = (
    "threads pasted from a javacore without its section headings: only the THREADS lines given are read"
)
_FRAME_NOTE = re.compile(r"\((?:Compiled Code|Bytecode PC:\s*\d+|JIT compiled code)\)")
_STATES = {
    "R": (ThreadState.RUNNABLE, ""),
    "B": (ThreadState.BLOCKED, ""),
    "MW": (ThreadState.BLOCKED, ""),  # Classic VM: waiting to enter a monitor
    "CW": (ThreadState.WAITING, ""),
    "P": (ThreadState.WAITING, "parking"),
    "S": (ThreadState.UNKNOWN, ""),
    "Z": (ThreadState.TERMINATED, ""),
}
_KINDS = {
    "Blocked on": LockEventKind.WAITING_TO_LOCK,
    "Waiting on": LockEventKind.WAITING_ON,
    "Parked on": LockEventKind.PARKING,
}
ANONYMOUS_NATIVE_THREAD = "Anonymous native thread"
# Thread-section tags that carry nothing the model keeps (ids, CPU, native stacks, heap).
_SKIPPED_TAGS = (
    "NULL",
    "1XMTHDINFO",
    "1XMCURTHDINFO",
    "1XMTHDSUMMARY",
    "2XMTHDSUMMARY",
    "3XMTHDSUMMARY",
    "3XMTHREADINFO1",
    "3XMTHREADINFO2",
    "3XMTHREADINFO3",
    "3XMTHREADINFO4",  # OpenJ9 0.4x (JDK 21+): "Type: Platform" or "Type: Virtual"
    "3XMJAVALTHREAD",
    "3XMJAVALTHRCCL",
    "3XMCPUTIME",
    "3XMHEAPALLOC",
    "4XENATIVESTACK",
    "1XMTHDCATEGORY",
    "2XMTHDCATEGORY",
    "3XMTHDCATEGORY",
    "1XMTHDCATINFO",
    "1XMPOOLINFO",
    "2XMPOOL",
    "1XECTHTYPE",
    "3XEHSTTYPE",
    "1XMEXCPINFO",  # the Classic VM's exception info, and its "Not available"
    "2XMDUMPINFONA",
)


def split_lock(text: str) -> tuple[int | None, str]:
    """`java/lang/Object@0x00000000F0001000` -> (address, "java.lang.Object")."""
    lock_class, _, address = text.rpartition("@")
    try:
        return int(address, 16), lock_class.replace("/", ".")
    except ValueError:
        return None, text.replace("/", ".")


def javacore_frame(text: str) -> Frame:
    """`com/example/Cache.get(Cache.java:10(Compiled Code))` in HotSpot's spelling, then parsed."""
    return parse_java_frame(_FRAME_NOTE.sub("", text).replace("/", "."))


def parse_javacore(batches: Iterable[list[str]], source: str) -> Iterator[ThreadDump]:
    reader = _JavacoreReader(source)
    for line_no, line in numbered_lines(batches):
        reader.feed(line_no, line)
    yield reader.finish()


class _JavacoreReader:
    """One javacore, read line by line: its sections, threads, lock owners and deadlock report."""

    def __init__(self, source: str) -> None:
        self.dump = DumpCollector(source, DumpFormat.JAVACORE, 0, 1)
        self.dump.producer = "javacore"
        self.thread: OpenThread | None = None
        self.section = ""
        self.vm_index: dict[int, int] = {}  # J9VMThread address -> thread index
        self.owners: list[tuple[int, LockRef]] = []  # (owner's J9VMThread, lock it owns)
        self.deadlock: list[tuple[str, str]] = []  # (thread, the lock it waits for), in report order
        self.rejoined = 0  # header lines joined back after hard wrapping
        self.current_thread_block = False  # between 1XMCURTHDINFO and 1XMTHDINFO
        self.classic_monitors = ClassicMonitors()  # the Classic VM names holders and waiters only there
        self.cut_header: tuple[int, str] | None = None  # a header line wrapped before its J9VMThread

    def close(self) -> None:
        thread = self.thread
        if thread is not None:
            if isinstance(thread.key, int):  # the J9VMThread, which every javacore thread has
                self.vm_index.setdefault(thread.key, len(self.dump.threads))
            self.dump.threads.append(thread.build())
        self.thread = None

    def feed(self, line_no: int, line: str) -> None:
        dump = self.dump
        tag, _, body = line.partition(" ")
        if self.cut_header is not None:
            header_no, header = self.cut_header
            self.cut_header = None
            if header_no == line_no - 1 and _continues(line):
                # A thread's header line wrapped before its J9VMThread: one line again.
                line_no, line = header_no, _joined(header, line)
                tag, _, body = line.partition(" ")
                self.rejoined += 1
            else:
                dump.unparsed_line(header_no, header)
        elif (
            self.section in _THREAD_SECTIONS
            and self.thread is not None
            and self.thread.line_no == line_no - 1
            and _continues(line)
        ):
            # Wrapped after the J9VMThread: the rest of the header (its state).
            _rewrapped_header(self.thread, line)
            self.rejoined += 1
            return
        if not tag:
            return
        if self.section == "" and tag == "3XMTHREADINFO":
            # Threads pasted from a javacore without its section headings: an excerpt of THREADS.
            self.section = "THREADS"
            dump.note(EXCERPT_NOTE)
        section_match = _SECTION.match(line)
        if section_match:
            self.close()
            self.section = section_match["name"]
            return
        if tag == "1TIDATETIME":
            dump.timestamp = body.strip().removeprefix("Date:").strip()
        elif tag == "1CIJAVAVERSION":
            dump.banner = body.strip()
        elif tag == "2XMFULLTHDDUMP":
            # "Full thread dump Classic VM (J2RE 1.4.2 IBM Windows 32 build ...)"
            dump.banner = dump.banner or body.strip()
        elif tag == "1CIPROCESSID":
            digits = body.strip().removeprefix("Process ID:").split()
            dump.pid = decimal(digits[0]) if digits else None
        elif self.section in ("LOCKS", "LK"):  # LK: the Classic VM's name for it
            _deadlock_line(line, self.deadlock)
            if self.section == "LK":
                self.classic_monitors.feed(tag, line, line_no)
        elif self.section in _THREAD_SECTIONS:
            dump.end_line_no = line_no
            self._thread_line(tag, body, line, line_no)

    def _thread_line(self, tag: str, body: str, line: str, line_no: int) -> None:
        """A line of the THREADS section: a thread's header, a frame, a lock it holds or waits on."""
        if tag in ("1XMCURTHDINFO", "1XMTHDINFO"):
            self.current_thread_block = tag == "1XMCURTHDINFO"
        info = _THREADINFO.match(line)
        classic = None if info else _CLASSIC_THREADINFO.match(line)
        if info:
            self.close()
            state, detail = _state_of(info["rest"])
            self.thread = OpenThread(
                info["name"], state, line_no, line, detail, key=int(info["vmthread"], 16)
            )
        elif classic:
            self.close()
            if self.current_thread_block:
                return  # the Classic VM lists the current thread again, with its stack, below
            state, detail = _state_of(classic["rest"])
            self.thread = OpenThread(classic["name"], state, line_no, line, detail, key=classic["tid"])
        elif tag == "3XMTHREADINFO" and ANONYMOUS_NATIVE_THREAD in body:
            # A thread of the process not attached to the VM (a native library's, the OS's
            # thread pool): listed like HotSpot's GC and compiler threads, without Java frames
            # (its native call stack is not read) and without a state of the VM's.
            self.close()
            self.thread = OpenThread(ANONYMOUS_NATIVE_THREAD, ThreadState.UNKNOWN, line_no, line)
        elif tag == "3XMTHREADINFO" and "J9VMThread:" not in body:
            self.close()
            self.cut_header = (line_no, line)
        elif self.thread is None or not self._stack_line(self.thread, tag, body, line, line_no):
            if not tag.startswith(_SKIPPED_TAGS) and not tag.startswith("5XESTACKTRACE"):
                self.dump.unparsed_line(line_no, line)

    def _stack_line(self, thread: OpenThread, tag: str, body: str, line: str, line_no: int) -> bool:
        """A frame of the open thread, or a monitor it entered, or the lock it blocks or waits on."""
        if tag == "4XESTACKTRACE":
            if not thread.frames:
                thread.stack_line_no = line_no
            thread.frames.append(javacore_frame(body.strip().removeprefix("at ")))
        elif entered := _ENTERED.match(line):
            lock_id, lock_class = split_lock(entered["lock"])
            thread.events.append(
                lock_event(LockEventKind.LOCKED, lock_id, lock_class, thread.frames, line_no, line.strip())
            )
        elif block := _BLOCK.match(line):
            lock_id, lock_class = split_lock(block["lock"])
            thread.events.append(
                lock_event(_KINDS[block["how"]], lock_id, lock_class, [], line_no, line.strip())
            )
            if block["owner_vm"] and lock_id is not None:
                self.owners.append(
                    (int(block["owner_vm"], 16), LockRef(lock_id, lock_class, line_no, line.strip()))
                )
        else:
            return False
        return True

    def finish(self) -> ThreadDump:
        self.close()
        dump = self.dump
        dump.threads = self.classic_monitors.apply(dump.threads)
        owned: dict[int, list[LockRef]] = {}
        for vmthread, ref in self.owners:
            if vmthread in self.vm_index:
                owned.setdefault(self.vm_index[vmthread], []).append(ref)
        dump.threads = attach_synchronizers(dump.threads, owned)
        dump.has_lock_data = True  # owners of monitors and parked-on synchronizers are named
        if self.deadlock:
            dump.deadlocks.append(_deadlock_links(self.deadlock))
        if self.rejoined:
            dump.note(rejoined_note(self.rejoined))
        if not dump.threads and self.section != "":
            dump.note("the javacore has no THREADS section")
        return dump.build()


def _state_of(header_rest: str) -> tuple[ThreadState, str]:
    """The state and its detail from a header's `state:CW`."""
    match = _STATE.search(header_rest)
    return _STATES.get(match["state"] if match else "", (ThreadState.UNKNOWN, ""))


def _continues(line: str) -> bool:
    """A line that starts with no javacore tag continues the line before: hard wrapping cut it."""
    return bool(line.strip()) and not _TAG.match(line.lstrip().partition(" ")[0])


def _joined(first: str, rest: str) -> str:
    """A header line and its wrapped rest: a space kept on either side of the break stays one
    space; with none, the break was inside a word (an address: `Thread:0x00000` + `00001FB8C60`)."""
    if first.endswith((" ", "\t")) or rest[:1] in (" ", "\t"):
        return first.rstrip() + " " + rest.strip()
    return first + rest.strip()


def _rewrapped_header(thread: OpenThread, rest: str) -> None:
    thread.header = _joined(thread.header, rest)
    state_match = _STATE.search(thread.header)
    if state_match:
        thread.state, thread.detail = _STATES.get(state_match["state"], (ThreadState.UNKNOWN, ""))


def _deadlock_line(line: str, deadlock: list[tuple[str, str]]) -> None:
    """`1LKDEADLOCK Deadlock detected !!!`: each 2LKDEADLOCKTHR thread waits for the next one."""
    named = _DEADLOCK_THREAD.match(line)
    if named:
        deadlock.append((named["name"], ""))
        return
    waited = _DEADLOCK_OBJECT.match(line)
    if waited and deadlock and not deadlock[-1][1]:
        # The Classic VM writes `java.lang.Object@53A90D0/53A90D8:`, J9 `java/lang/Object@0x...`.
        lock = _CLASSIC_LOCK.sub(r"@0x\1", waited["lock"])
        deadlock[-1] = (deadlock[-1][0], lock)


def _deadlock_links(cycle: list[tuple[str, str]]) -> tuple[DeadlockLink, ...]:
    # The report lists the cycle in order and repeats its first thread at the end; the Classic VM
    # then lists it again from each other thread's side.
    names = [name for name, _ in cycle]
    if names[0] in names[1:]:
        cycle = cycle[: names.index(names[0], 1)]
    links = []
    for position, (name, lock_text) in enumerate(cycle):
        holder = cycle[(position + 1) % len(cycle)][0]
        lock_id, lock_class = split_lock(lock_text) if lock_text else (None, "a lock")
        waiting = f"{lock_class}@0x{lock_id:x}" if lock_id is not None else lock_class
        links.append(DeadlockLink(thread_name=name, waiting_for=waiting, lock_id=lock_id, held_by=holder))
    return tuple(links)
