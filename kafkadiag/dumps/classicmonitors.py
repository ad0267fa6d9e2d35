"""The monitor pool dump of IBM's Classic VM javacores (Java 1.4 and before, section LK): which
thread holds each object monitor and which threads wait for it.

The Classic VM's thread section prints no lock lines: a thread's state says CW (condition wait)
whether it is in Object.wait() or queued to enter a monitor another thread holds. The monitor pool
says which:

    2LKMONINUSE      sys_mon_t:0x1094AFC0 infl_mon_t: 0x00000000:
    3LKMONOBJECT       java.lang.Object@53A90C0/53A90C8: Flat locked by thread ident 0x16, entry count 1
    3LKNOTIFYQ            Waiting to be notified:
    3LKWAITNOTIFY            "ExecuteThread: '11' for queue: 'weblogic.kernel.Default'" (0x2707358)
    ...
    2LKFLATMON         ident 0x16 "ExecuteThread: '14' for queue: ..." (0x25177C8) ee 0x025175F0

A monitor is held by a thread named by its flat-lock ident (2LKFLATMON gives the ident's thread) or,
once inflated, by `owner "name" (0x..)`. A thread queued on it is in Object.wait() when its top frame
says so; any other is waiting to enter the monitor: blocked on it. Threads are matched by their
sys_thread_t, which their header gives. The VM's own registered monitors (2LKREGMON) are not
objects of the program and are left out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from kafkadiag.dumps.states import OBJECT_WAIT_FUNCTIONS
from kafkadiag.model import LockEvent, LockEventKind, Thread, ThreadState, ThreadStatus

_OBJECT = re.compile(
    r"^3LKMONOBJECT\s+(?P<class>\S+)@(?P<address>[0-9A-Fa-f]+)/[0-9A-Fa-f]+:\s*"
    r"(?:Flat locked by thread ident (?P<ident>0x[0-9A-Fa-f]+)|owner \".*\" \((?P<owner>0x[0-9A-Fa-f]+)\))?"
)
_QUEUED = re.compile(r'^3LK(?:WAITNOTIFY|WAITER)\s+".*" \((?P<thread>0x[0-9A-Fa-f]+)\)\s*$')
_FLAT_IDENT = re.compile(r'^2LKFLATMON\s+ident (?P<ident>0x[0-9A-Fa-f]+) ".*" \((?P<thread>0x[0-9A-Fa-f]+)\)')
_QUEUE_HEADINGS = ("3LKNOTIFYQ", "3LKWAITERQ")
SYS_THREAD = re.compile(r"\bsys_thread_t:(?P<thread>0x[0-9A-Fa-f]+)")


@dataclass
class _Monitor:
    lock_id: int
    lock_class: str
    line_no: int
    text: str
    ident: int | None  # the flat-lock ident of its holder
    owner: int | None  # the sys_thread_t of its holder, once inflated
    queued: list[tuple[int, int, str]] = field(default_factory=list)  # sys_thread_t, line, text


class ClassicMonitors:
    """The LK section's object monitors, read line by line, then applied to the dump's threads."""

    def __init__(self) -> None:
        self._monitors: list[_Monitor] = []
        self._idents: dict[int, int] = {}  # flat-lock ident -> sys_thread_t
        self._current: _Monitor | None = None

    def feed(self, tag: str, line: str, line_no: int) -> None:
        if tag == "3LKMONOBJECT":
            match = _OBJECT.match(line)
            self._current = None
            if match is not None:
                self._current = _Monitor(
                    int(match["address"], 16),
                    match["class"].replace("/", "."),
                    line_no,
                    line.strip(),
                    int(match["ident"], 16) if match["ident"] else None,
                    int(match["owner"], 16) if match["owner"] else None,
                )
                self._monitors.append(self._current)
        elif tag in ("3LKWAITNOTIFY", "3LKWAITER"):
            queued = _QUEUED.match(line)
            if queued is not None and self._current is not None:
                self._current.queued.append((int(queued["thread"], 16), line_no, line.strip()))
        elif tag == "2LKFLATMON":
            flat = _FLAT_IDENT.match(line)
            if flat is not None:
                self._idents[int(flat["ident"], 16)] = int(flat["thread"], 16)
        elif tag not in _QUEUE_HEADINGS:
            self._current = None  # a registered monitor's queue is not an object's

    def apply(self, threads: list[Thread]) -> list[Thread]:
        """The threads with the monitors they hold and the ones they are queued on."""
        if not self._monitors:
            return threads
        by_sys_thread = {}
        for index, thread in enumerate(threads):
            header = SYS_THREAD.search(thread.header)
            if header is not None:
                by_sys_thread[int(header["thread"], 16)] = index
        added: dict[int, list[LockEvent]] = {}
        blocked: set[int] = set()
        for monitor in self._monitors:
            holder_thread = monitor.owner if monitor.ident is None else self._idents.get(monitor.ident)
            holder = by_sys_thread.get(holder_thread) if holder_thread is not None else None
            if holder is not None:
                bottom = max(len(threads[holder].frames) - 1, 0)  # taken somewhere in the stack
                added.setdefault(holder, []).append(
                    LockEvent(
                        LockEventKind.LOCKED,
                        monitor.lock_id,
                        monitor.lock_class,
                        bottom,
                        monitor.line_no,
                        monitor.text,
                    )
                )
            for sys_thread, line_no, text in monitor.queued:
                waiter = by_sys_thread.get(sys_thread)
                if waiter is None or waiter == holder:
                    continue
                frames = threads[waiter].frames
                if frames and frames[0].function in OBJECT_WAIT_FUNCTIONS:
                    kind = LockEventKind.WAITING_ON
                elif holder is not None:
                    kind = LockEventKind.WAITING_TO_LOCK  # queued to enter a monitor another holds
                    blocked.add(waiter)
                else:
                    continue
                added.setdefault(waiter, []).insert(
                    0, LockEvent(kind, monitor.lock_id, monitor.lock_class, 0, line_no, text)
                )
        result = list(threads)
        for index, events in added.items():
            thread = result[index]
            waits = [event for event in events if event.kind is not LockEventKind.LOCKED]
            holds = [event for event in events if event.kind is LockEventKind.LOCKED]
            result[index] = thread._replace(lock_events=(*waits, *thread.lock_events, *holds))
            if index in blocked:
                result[index] = result[index]._replace(state=ThreadState.BLOCKED, status=ThreadStatus.BLOCKED)
        return result
