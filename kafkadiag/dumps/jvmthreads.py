"""Shared building blocks for the JVM renderings that are not HotSpot's own layout.

jcmd's Thread.dump_to_file, IntelliJ's debugger, OpenJ9 javacores and Android ANR traces all say
the same things (a thread, its state, frames, the monitors it holds or wants) in other words. Their
parsers translate each line into the model's terms and hand the pieces to `build_thread` and
`DumpCollector`, so that the lock graph and the rules see them exactly as they see a jstack dump.
"""

from __future__ import annotations

from kafkadiag.dumps.states import reconcile
from kafkadiag.model import (
    DeadlockLink,
    DumpFormat,
    Frame,
    LockEvent,
    LockEventKind,
    LockRef,
    Thread,
    ThreadDump,
    ThreadState,
    ThreadStatus,
    UnparsedLine,
)

MAX_UNPARSED_KEPT = 200
_WAITING_TO_LOCK = (LockEventKind.WAITING_TO_LOCK, LockEventKind.WAITING_TO_RELOCK)


class OpenThread:
    """A thread being read: what its header said, and the frames and lock events under it.

    `key` is the format's own handle on the thread (Android's tid, a javacore's J9VMThread), by
    which other threads' lock lines name it.
    """

    def __init__(
        self,
        name: str,
        state: ThreadState,
        line_no: int,
        header: str,
        detail: str = "",
        stack_line_no: int = 0,
        key: str | int | None = None,
    ) -> None:
        self.name, self.state, self.detail = name, state, detail
        self.line_no, self.header, self.stack_line_no = line_no, header, stack_line_no
        self.key = key
        self.frames: list[Frame] = []
        self.events: list[LockEvent] = []

    def build(self) -> Thread:
        return build_thread(
            self.name,
            self.state,
            self.line_no,
            self.header,
            self.frames,
            self.events,
            stack_line_no=self.stack_line_no,
            state_detail=self.detail,
        )


def build_thread(
    name: str,
    state: ThreadState,
    line_no: int,
    header: str,
    frames: list[Frame],
    events: list[LockEvent],
    synchronizers: list[LockRef] | None = None,
    stack_line_no: int = 0,
    state_detail: str = "",
) -> Thread:
    """A Thread whose status follows from its state, top frame and lock events.

    A BLOCKED thread stays BLOCKED even when the format names no monitor: the HotSpot repairs
    (a BLOCKED state written before the thread got its monitor) are about jstack's timing, and
    these formats print the state and the blocker together.
    """
    frame_tuple = tuple(frames)
    if state is ThreadState.BLOCKED:
        status = ThreadStatus.BLOCKED
    elif state is ThreadState.RUNNABLE:
        status = ThreadStatus.RUNNABLE
    else:
        if _virtual_thread_sleeping(frame_tuple):
            state_detail = "sleeping"
        status, events = reconcile(state, state_detail, frame_tuple, events)
    return Thread(
        name,
        state,
        status,
        line_no,
        header,
        frame_tuple,
        tuple(events),
        None if synchronizers is None else tuple(synchronizers),
        None,
        stack_line_no,
    )


def _virtual_thread_sleeping(frames: tuple[Frame, ...]) -> bool:
    """Thread.sleep on a virtual thread parks it (JDK 21+): the sleep is one frame below the park."""
    return (
        len(frames) > 1
        and frames[0].function == "java.lang.VirtualThread.parkNanos"
        and frames[1].function == "java.lang.VirtualThread.sleepNanos"
    )


def lock_event(
    kind: LockEventKind,
    lock_id: int | None,
    lock_class: str | None,
    frames: list[Frame],
    line_no: int,
    text: str,
) -> LockEvent:
    """An event anchored under the last frame read so far (the top frame when none was)."""
    return LockEvent(kind, lock_id, lock_class, max(len(frames) - 1, 0), line_no, text)


def is_waiting_to_lock(event: LockEvent) -> bool:
    return event.kind in _WAITING_TO_LOCK


class DumpCollector:
    """The dump being read: its metadata, threads, unparsed lines and notes."""

    def __init__(self, source: str, dump_format: DumpFormat, index: int, line_no: int) -> None:
        self.source = source
        self.format = dump_format
        self.index = index
        self.line_no = line_no
        self.end_line_no = line_no
        self.threads: list[Thread] = []
        self.unparsed: list[UnparsedLine] = []
        self.unparsed_count = 0
        self.notes: list[str] = []
        self.timestamp: str | None = None
        self.banner: str | None = None
        self.producer: str | None = None
        self.pid: int | None = None
        self.deadlocks: list[tuple[DeadlockLink, ...]] = []
        self.has_lock_data = False

    def unparsed_line(self, line_no: int, text: str) -> None:
        self.unparsed_count += 1
        if len(self.unparsed) < MAX_UNPARSED_KEPT:
            self.unparsed.append(UnparsedLine(line_no, text))

    def note(self, text: str) -> None:
        if text not in self.notes:
            self.notes.append(text)

    def build(self, truncated: bool = False) -> ThreadDump:
        return ThreadDump(
            source=self.source,
            index=self.index,
            format=self.format,
            line_no=self.line_no,
            end_line_no=max(self.end_line_no, self.line_no),
            threads=tuple(self.threads),
            timestamp=self.timestamp,
            banner=self.banner,
            producer=self.producer,
            pid=self.pid,
            jvm_deadlocks=tuple(self.deadlocks),
            unparsed=tuple(self.unparsed),
            unparsed_count=self.unparsed_count,
            truncated=truncated,
            has_lock_data=self.has_lock_data,
            notes=tuple(self.notes),
        )


def owned_by_name(
    threads: list[Thread], stated_owners: list[tuple[int, str, LockRef]]
) -> dict[int, list[LockRef]]:
    """The locks waiters' state lines say a thread owns ("owned by: name"), by that thread's index;
    `stated_owners` holds (waiter index, owner name, lock). Only a unique name is credited: a name
    several threads share names none of them. The owner need not list the lock itself: its
    "Locked ownable synchronizers" may be cut from an excerpt, or never printed (JConsole)."""
    indexes: dict[str, int | None] = {}
    for index, thread in enumerate(threads):
        indexes[thread.name] = None if thread.name in indexes else index
    owned: dict[int, list[LockRef]] = {}
    for waiter, owner, lock in stated_owners:
        holder = indexes.get(owner)
        if holder is not None and holder != waiter:
            owned.setdefault(holder, []).append(lock)
    return owned


def attach_synchronizers(threads: list[Thread], owned: dict[int, list[LockRef]]) -> list[Thread]:
    """Give thread `i` the locks `owned[i]` that the dump names it the owner of elsewhere.

    javacores and jcmd's JSON say "owned by X" on the waiter's side; the lock graph asks the
    holder what it holds, so the ownership is moved over to the holder.
    """
    result = list(threads)
    for index, refs in owned.items():
        thread = result[index]
        known = {ref.lock_id for ref in thread.held_locks()}
        extra = tuple(ref for ref in refs if ref.lock_id not in known)
        if extra:
            result[index] = thread._replace(held_synchronizers=(thread.held_synchronizers or ()) + extra)
    return result
