"""Android ANR traces (`/data/anr/traces.txt`, `anr_*` files, bugreports): ART and Dalvik dumps.

    ----- pid 6077 at 2026-08-19 11:08:16.139001552+0530 -----
    Cmd line: sh.example.app
    DALVIK THREADS (45):
    "main" prio=5 tid=1 Blocked
      | group="main" sCount=1 ucsCount=0 flags=1 obj=0x736e0f78 self=0xb400007c662117b0
      at sh.example.Receiver.onReceive(Receiver.kt:11)
      - waiting to lock <0x053dd6df> (a java.lang.Object) held by thread 46
      native: #00 pc 000c9da8  /apex/.../libc.so (__ioctl+8)
    DumpLatencyMs: 2.47463
    ----- end 6077 -----

Dalvik (Android 4 and older) says MONITOR / WAIT / TIMED_WAIT and `held by tid=12 (name)`;
ART says Blocked / Waiting / TimedWaiting and `held by thread 46`. ART also prints the
holder's own `- locked` line; Dalvik does not, so the holder named by `held by` is credited
with the lock. `tid` is ART's thread
number (what `held by thread N` refers to), not the Java thread id. Native frames are counted as
understood but not kept: they are the VM's own, below the Java frames the rules read.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from kafkadiag.digits import decimal
from kafkadiag.dumps.javaframes import parse_java_frame
from kafkadiag.dumps.jvmthreads import (
    DumpCollector,
    OpenThread,
    attach_synchronizers,
    lock_event,
)
from kafkadiag.dumps.linefeed import feed_lines, numbered_lines
from kafkadiag.model import DumpFormat, Frame, LockEventKind, LockRef, ThreadDump, ThreadState

HEADER = re.compile(r'^"(?P<name>.*)"(?: daemon)? prio=\d+(?: tid=(?P<tid>\d+))?(?: (?P<state>[A-Za-z_]+))?')
# The native traces debuggerd writes when the runtime could not dump Java stacks (an ANR's
# ApplicationExitInfo trace, a tombstone): `"name" sysTid=9955`, then `#00 pc ... lib (function+8)`.
NATIVE_HEADER = re.compile(r'^"(?P<name>.*)" sysTid=(?P<systid>\d+)\s*$')
NATIVE_FRAME = re.compile(
    r"^#\d+ pc [0-9a-fA-F]+\s+(?P<library>\S+)(?: \((?P<function>[^()]*(?:\([^()]*\))?[^()]*)\))?"
)
NOTE_NATIVE_ONLY = "native stacks only (debuggerd's trace): no Java frame to analyse"
_PROCESS = re.compile(r"^----- pid (?P<pid>\d+) at (?P<when>.+?) -----$")
_END = re.compile(r"^----- end \d+ -----$")
_LOCK = re.compile(
    r"^- (?P<words>locked|waiting to lock|waiting on|sleeping on) <(?P<id>0x[0-9a-fA-F]+)>"
    r"(?: \(a (?P<class>.+?)\))?(?:,? held by (?:thread |threadid=|tid=)(?P<holder>\d+).*)?$"
)
# ART (Android 5+) and Dalvik state words; "Native" is running native code, as HotSpot's
# "runnable" threads in native methods are.
_STATES = {
    "runnable": (ThreadState.RUNNABLE, ""),
    "native": (ThreadState.RUNNABLE, ""),
    "blocked": (ThreadState.BLOCKED, ""),
    "monitor": (ThreadState.BLOCKED, ""),
    "waiting": (ThreadState.WAITING, ""),
    "wait": (ThreadState.WAITING, ""),
    "timedwaiting": (ThreadState.TIMED_WAITING, ""),
    "timed_wait": (ThreadState.TIMED_WAITING, ""),
    "sleeping": (ThreadState.TIMED_WAITING, "sleeping"),
    "terminated": (ThreadState.TERMINATED, ""),
    "zombie": (ThreadState.TERMINATED, ""),
    "starting": (ThreadState.NEW, ""),
    "initializing": (ThreadState.NEW, ""),
}
_KINDS = {
    "locked": LockEventKind.LOCKED,
    "waiting to lock": LockEventKind.WAITING_TO_LOCK,
    "waiting on": LockEventKind.WAITING_ON,
}
# Lines that are understood and carry nothing the model keeps.
_SKIPPED_PREFIXES = (
    "| ",
    "NOTE: ",  # debuggerd's remarks on libraries it could not read
    "native: ",
    "(no managed stack frames)",
    "- waiting on an unknown object",
    "- sleeping on",
    "DumpLatencyMs:",
    "Cmd line:",
    "Build fingerprint:",
    "ABI:",
    "Build type:",
    "DALVIK THREADS",
    "(mutexes:",
    "JNI:",
    "suspend all histogram",
    "Debug Store:",
    "kernel: ",
    "Zygote loaded",
)


def android_state(word: str | None) -> tuple[ThreadState, str]:
    if not word:
        return ThreadState.UNKNOWN, ""
    lowered = word.lower()
    if lowered.startswith("waitingfor") or lowered.startswith("waitingin") or lowered == "vmwait":
        return ThreadState.WAITING, ""  # ART-internal waits (GC task processor, debugger loop)
    return _STATES.get(lowered, (ThreadState.UNKNOWN, ""))


def parse_android_anr(batches: Iterable[list[str]], source: str) -> Iterator[ThreadDump]:
    return feed_lines(_AnrReader(source), numbered_lines(batches))


class _AnrReader:
    """The dumps of an ANR trace file, read line by line: each `----- pid N at ... -----` block."""

    def __init__(self, source: str) -> None:
        self.source = source
        self.dump: DumpCollector | None = None
        self.thread: OpenThread | None = None
        self.count = 0
        self.index_of_tid: dict[str, int] = {}
        self.held_by: list[tuple[str, LockRef]] = []  # (holder's tid, the lock a waiter says it holds)

    def _finished(self, collector: DumpCollector) -> ThreadDump:
        owned: dict[int, list[LockRef]] = {}
        for holder, ref in self.held_by:
            if holder in self.index_of_tid:
                owned.setdefault(self.index_of_tid[holder], []).append(ref)
        collector.threads = attach_synchronizers(collector.threads, owned)
        self.index_of_tid.clear()
        self.held_by.clear()
        return collector.build()

    def _close_thread(self) -> None:
        thread, dump = self.thread, self.dump
        if thread is not None and dump is not None:
            if isinstance(thread.key, str):
                self.index_of_tid.setdefault(thread.key, len(dump.threads))
            dump.threads.append(thread.build())
        self.thread = None

    def _start(self, line_no: int) -> DumpCollector:
        collector = DumpCollector(self.source, DumpFormat.ANDROID_ANR, self.count, line_no)
        collector.producer = "Android runtime (ANR / SIGQUIT)"
        self.count += 1
        self.dump = collector
        return collector

    def finish(self) -> ThreadDump | None:
        self._close_thread()
        return self._finished(self.dump) if self.dump is not None else None

    def feed(self, line_no: int, line: str) -> ThreadDump | None:
        """Read one line; return the dump it ends, if it ends one."""
        stripped = line.strip()
        if not stripped:
            return None
        process = _PROCESS.match(stripped)
        if process:
            ended = self.finish()
            started = self._start(line_no)
            started.pid = decimal(process["pid"])
            started.timestamp = process["when"]
            return ended
        if _END.match(stripped):
            if self.dump is not None:
                self.dump.end_line_no = line_no
            ended = self.finish()
            self.dump = None
            return ended
        if self._thread_start(line, stripped, line_no):
            return None
        dump = self.dump
        if dump is None:
            if stripped.startswith("DALVIK THREADS"):
                self._start(line_no)
            return None
        dump.end_line_no = line_no
        if stripped.startswith("Cmd line:"):
            dump.banner = stripped
        elif self.thread is None and not dump.threads:
            pass  # the runtime's own report before the threads: build, GC and JIT statistics
        elif not self._stack_line(self.thread, stripped, line_no):
            dump.unparsed_line(line_no, line)
        return None

    def _thread_start(self, line: str, stripped: str, line_no: int) -> bool:
        """A thread's header (ART's, or a native-only one) or a native frame of the open thread."""
        native_header = NATIVE_HEADER.match(line) if line.startswith('"') else None
        if native_header:
            self._close_thread()
            dump = self.dump
            if dump is None:
                dump = self._start(line_no)
            if NOTE_NATIVE_ONLY not in dump.notes:
                dump.note(NOTE_NATIVE_ONLY)
            self.thread = OpenThread(native_header["name"], ThreadState.UNKNOWN, line_no, line, "")
            dump.end_line_no = line_no
            return True
        thread = self.thread
        native = NATIVE_FRAME.match(stripped) if thread is not None and stripped.startswith("#") else None
        if native:
            assert thread is not None and self.dump is not None
            if not thread.frames:
                thread.stack_line_no = line_no
            function = (native["function"] or native["library"]).rsplit("+", 1)[0]
            thread.frames.append(Frame(stripped, function, native["library"], None, True))
            self.dump.end_line_no = line_no
            return True
        header = HEADER.match(line) if line.startswith('"') else None
        if header:
            self._close_thread()
            if self.dump is not None:
                dump = self.dump
            else:
                dump = self._start(line_no)
                dump.note("fragment: no '----- pid N at ... -----' line before the first thread")
            state, detail = android_state(header["state"])
            self.thread = OpenThread(header["name"], state, line_no, line, detail, key=header["tid"])
            dump.end_line_no = line_no
            return True
        return False

    def _stack_line(self, thread: OpenThread | None, stripped: str, line_no: int) -> bool:
        """A frame or lock line of the open thread, or a line ART prints that says nothing more."""
        if thread is not None and stripped.startswith("at "):
            if not thread.frames:
                thread.stack_line_no = line_no
            # "(Deadlock.java:~33)": Dalvik's approximate line; "run (File.java:1)": Play Console's space
            frame = parse_java_frame(stripped[3:].replace(" (", "(", 1).replace(":~", ":"))
            if frame.text.endswith("(Native method)"):  # ART's spelling of "(Native Method)"
                frame = frame._replace(native=True, file=None)
            thread.frames.append(frame)
            return True
        lock = _LOCK.match(stripped) if thread is not None else None
        if lock and lock["words"] in _KINDS:
            assert thread is not None
            lock_id = int(lock["id"], 16)
            thread.events.append(
                lock_event(_KINDS[lock["words"]], lock_id, lock["class"], thread.frames, line_no, stripped)
            )
            if lock["holder"] is not None:
                self.held_by.append((lock["holder"], LockRef(lock_id, lock["class"], line_no, stripped)))
            return True
        return stripped.startswith(_SKIPPED_PREFIXES) or bool(lock and lock["words"] == "sleeping on")
