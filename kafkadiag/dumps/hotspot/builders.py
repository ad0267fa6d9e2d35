"""The thread and the dump being read, and how each becomes its model once complete."""

from __future__ import annotations

from kafkadiag.dumps import jrockit
from kafkadiag.dumps.hotspot.syntax import MAX_UNPARSED_KEPT, REPORT_WITHOUT_STACKS_NOTE, STATE_LINE
from kafkadiag.dumps.jvmthreads import attach_synchronizers, owned_by_name
from kafkadiag.dumps.rewrap import (
    rejoined_note,
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
from kafkadiag.model import (
    DeadlockLink,
    DumpFormat,
    Frame,
    LockEvent,
    LockEventKind,
    LockRef,
    OsThreadCpu,
    Thread,
    ThreadDump,
    ThreadState,
    ThreadStatus,
    UnparsedLine,
)
from kafkadiag.threadheader import (
    AGENT,
    JMX_HEADER,
    THREADINFO,
    looks_like_hotspot_header,
    name_end,
    state_words,
)


class ThreadBuilder:
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
        if state is RUNNABLE_STATE:
            status = RUNNABLE_STATUS
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
        return new_tuple(
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


RUNNABLE_STATE = ThreadState.RUNNABLE
RUNNABLE_STATUS = ThreadStatus.RUNNABLE
new_tuple = tuple.__new__


def headerless_note(line_nos: list[int]) -> str:
    return (
        f"stack(s) without their thread header (state line {_some_lines(line_nos)}): read as threads "
        "named '(no header, line N)'; their names and thread ids are not in the text"
    )


def _some_lines(line_nos: list[int]) -> str:
    """ "12, 40, 77" - the first five line numbers, then how many more."""
    shown = ", ".join(str(line_no) for line_no in line_nos[:5])
    return shown + (f" and {len(line_nos) - 5} more" if len(line_nos) > 5 else "")


def thread_from_header(line: str, line_no: int) -> ThreadBuilder | None:
    if " Id=" in line:
        info = THREADINFO.match(line)
        if info:
            builder = ThreadBuilder(info["name"], line_no, line)
            rest = info["rest"] or ""
            # "BLOCKED on pkg.Lock@3a09eed4 owned by "x" Id=47": the wait and its owner, as a state
            # line would state them.
            builder.state_text = info["state"] + rest.rstrip() if rest.startswith(" on ") else info["state"]
            return builder
    if " id: " in line:
        colon = jrockit.COLON_HEADER.match(line)
        if colon:
            return ThreadBuilder(colon["name"], line_no, line)
    if not looks_like_hotspot_header(line):
        return None
    builder = ThreadBuilder(line[1 : name_end(line)], line_no, line)
    jmx = JMX_HEADER.match(line) if " id=" in line else None
    if jmx is not None:
        builder.name = jmx["name"]
        builder.state_text = jmx["state"]  # the state a state line would give; no such line follows
    return builder


def agent_state(thread: Thread) -> Thread:
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


class DumpBuilder:
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
        # states are the VM's (see agent_state).
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
            threads = [agent_state(thread) for thread in threads]
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
