"""Decide a Java thread's state and status from its header, state line, top frame and lock lines.

HotSpot writes the state line and the lock lines at slightly different moments, so a dump can
say BLOCKED with a `- locked` line where `- waiting to lock` was meant (JDK 6/7), or
RUNNABLE with a stale `- parking to wait for`. The reconciliation below follows what the
JVM's own code does and what long-lived analyzers settled on, so that lock graphs built on it
do not invent owners.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Sequence
from typing import NamedTuple

from kafkadiag.model import Frame, LockEvent, LockEventKind, ThreadState, ThreadStatus

_STATE_BY_NAME = {state.value: state for state in ThreadState}

# Pre-JDK 6 dumps (and carrier/VM threads) have no "java.lang.Thread.State:" line; the header's
# own words are all there is.
_HEADER_WORDS_TO_STATE = (
    ("waiting for monitor entry", ThreadState.BLOCKED),
    ("in Object.wait", ThreadState.WAITING),
    ("waiting on condition", ThreadState.WAITING),
    ("waiting on monitor", ThreadState.WAITING),  # HP-UX's JDK 1.4: in Object.wait()
    ("sleeping", ThreadState.TIMED_WAITING),
    ("runnable", ThreadState.RUNNABLE),
    # JRockit: "alive, in native, native_waiting, daemon" is a VM-internal wait, not a Java one
    ("native_waiting", ThreadState.RUNNABLE),
    ("native_lock_waiting", ThreadState.RUNNABLE),  # JRockit 8.1
    ("native_blocked", ThreadState.RUNNABLE),
    ("blocked", ThreadState.BLOCKED),
    ("parked", ThreadState.WAITING),  # JRockit
    ("waiting", ThreadState.WAITING),  # JRockit's word for Object.wait()
    ("alive", ThreadState.RUNNABLE),  # JRockit: alive and none of the above
    ("active", ThreadState.RUNNABLE),  # JRockit 1.4
)

_SLEEP_FUNCTIONS = frozenset(
    {
        "java.lang.Thread.sleep",
        "java.lang.Thread.sleep0",
        "java.lang.Thread.sleepNanos",
        "java.lang.Thread.sleepNanos0",
    }
)
OBJECT_WAIT_FUNCTIONS = frozenset(
    {
        "java.lang.Object.wait",
        "java.lang.Object.wait0",
        "jrockit.vm.Threads.waitForNotifySignal",  # JRockit R26+, under Object.wait
    }
)


# A park, as the top frame shows it: sun.misc.Unsafe (JDK 8), jdk.internal.misc.Unsafe (JDK 9+).
_PARK_FUNCTIONS = frozenset({"sun.misc.Unsafe.park", "jdk.internal.misc.Unsafe.park"})
_TIMED_PARK_CALLERS = frozenset(
    {"java.util.concurrent.locks.LockSupport.parkNanos", "java.util.concurrent.locks.LockSupport.parkUntil"}
)


def state_from_top_frames(frames: Sequence[Frame]) -> tuple[ThreadState, str]:
    """The state and state-line detail a stack without a state line shows in its top frames.

    Object.wait, a park and a sleep say what they wait for; a thread in native code is RUNNABLE
    to the JVM (in a socket read or a selector as much as computing). A thread entering a
    monitor shows only the method it enters, exactly as a running one: UNKNOWN.
    """
    if not frames:
        return ThreadState.UNKNOWN, ""
    top = frames[0].function
    if top in OBJECT_WAIT_FUNCTIONS:
        return ThreadState.WAITING, "on object monitor"
    if top in _PARK_FUNCTIONS:
        timed = len(frames) > 1 and frames[1].function in _TIMED_PARK_CALLERS
        return (ThreadState.TIMED_WAITING if timed else ThreadState.WAITING), "parking"
    if top in _SLEEP_FUNCTIONS:
        return ThreadState.TIMED_WAITING, "sleeping"
    if frames[0].native:
        return ThreadState.RUNNABLE, ""
    return ThreadState.UNKNOWN, ""


@functools.lru_cache(maxsize=256)
def parse_state_line(text: str) -> tuple[ThreadState, str]:
    """`WAITING (parking)` -> (WAITING, "parking"). A dump repeats a handful of these."""
    # "TIMED\_WAITING": a Markdown renderer's escape of the underscore (see hotspot.parse_lock_line)
    name, _, detail = text.strip().replace("\\_", "_").partition(" ")
    return _STATE_BY_NAME.get(name, ThreadState.UNKNOWN), detail.strip("() ")


class StatedWait(NamedTuple):
    """A wait the state line names: `WAITING on pkg.Lock@4836840 owned by: kafka-scheduler-0`."""

    lock_id: int
    lock_class: str
    owner: str | None


# The older VisualVM rendering (and ThreadInfo-based tools after it) states the lock in the state
# line instead of a "- parking to wait for" line under the top frame (KAFKA-1305's dump).
_STATED_WAIT = re.compile(
    r"^on (?P<class>[\w.$\[\];]+)@(?P<hash>[0-9a-fA-F]+)(?: owned by:? (?P<owner>.+))?$"
)


@functools.lru_cache(maxsize=256)
def stated_wait(detail: str) -> StatedWait | None:
    """The lock and owner in a state line's detail ("on X@hash owned by: name"), if it names one."""
    match = _STATED_WAIT.match(detail.strip())
    if match is None:
        return None
    owner = match["owner"]
    if owner:
        owner = owner.strip()
        # ThreadInfo.toString() quotes the owner and gives its id: `owned by "pool-4-thread-13" Id=153`.
        quoted = _QUOTED_OWNER.match(owner)
        owner = quoted["name"] if quoted else owner.strip('"')
    return StatedWait(int(match["hash"], 16), match["class"], owner or None)


_QUOTED_OWNER = re.compile(r'^"(?P<name>.*)"(?: Id=\d+)?$')


def stated_wait_kind(state: ThreadState, frames: tuple[Frame, ...]) -> LockEventKind:
    """What a wait stated in the state line is: entering a monitor, in Object.wait(), or parked."""
    if state is ThreadState.BLOCKED:
        return LockEventKind.WAITING_TO_LOCK
    if frames and frames[0].function in OBJECT_WAIT_FUNCTIONS:
        return LockEventKind.WAITING_ON
    return LockEventKind.PARKING


def state_from_header(header_state: str) -> ThreadState:
    lowered = header_state.lower()
    for words, state in _LOWERED_HEADER_WORDS:
        if words in lowered:
            return state
    return ThreadState.UNKNOWN


_LOWERED_HEADER_WORDS = tuple((words.lower(), state) for words, state in _HEADER_WORDS_TO_STATE)


def consistent_status(
    state: ThreadState, state_detail: str
) -> tuple[ThreadStatus, LockEventKind | None] | None:
    """For a state line that needs no repair when the right lock line comes first under the top
    frame: the status it means, and that lock line's kind (None: no lock line is needed)."""
    return _CONSISTENT.get((state, state_detail))


def reconcile(
    state: ThreadState,
    state_detail: str,
    frames: tuple[Frame, ...],
    events: list[LockEvent],
) -> tuple[ThreadStatus, list[LockEvent]]:
    """Return the thread's status and its lock events with HotSpot's known slips repaired."""
    if state is ThreadState.RUNNABLE:
        return ThreadStatus.RUNNABLE, events
    consistent = _CONSISTENT.get((state, state_detail))
    if consistent is not None:
        status, first_kind = consistent
        if first_kind is None:
            return status, events
        if events and events[0].frame_index == 0 and events[0].kind is first_kind:
            # What JDK 8+ print for almost every waiting thread: nothing to reconcile.
            return status, events
    top = frames[0].function if frames else ""
    if state is ThreadState.BLOCKED:
        events = _repair_blocked(top, events)
        if not any(
            e.kind in (LockEventKind.WAITING_TO_LOCK, LockEventKind.WAITING_TO_RELOCK) for e in events
        ):
            # BLOCKED on nothing: the state was written before the thread got the monitor.
            return ThreadStatus.RUNNABLE, events
        return ThreadStatus.BLOCKED, events
    if state in (ThreadState.WAITING, ThreadState.TIMED_WAITING):
        timed = state is ThreadState.TIMED_WAITING
        if top in _SLEEP_FUNCTIONS or state_detail == "sleeping":
            return ThreadStatus.SLEEPING, events
        if top in OBJECT_WAIT_FUNCTIONS or "object monitor" in state_detail:
            return (
                ThreadStatus.IN_OBJECT_WAIT_TIMED if timed else ThreadStatus.IN_OBJECT_WAIT,
                _repair_waiting(top, events),
            )
        return (ThreadStatus.PARKED_TIMED if timed else ThreadStatus.PARKED), _repair_parked(events)
    return _SIMPLE_STATUS[state], events


# State line -> the status it means and the lock line that must come first under the top frame
# for the dump to be self-consistent (then no repair applies).
_CONSISTENT: dict[tuple[ThreadState, str], tuple[ThreadStatus, LockEventKind | None]] = {
    (ThreadState.WAITING, "parking"): (ThreadStatus.PARKED, LockEventKind.PARKING),
    (ThreadState.TIMED_WAITING, "parking"): (ThreadStatus.PARKED_TIMED, LockEventKind.PARKING),
    (ThreadState.WAITING, "on object monitor"): (ThreadStatus.IN_OBJECT_WAIT, LockEventKind.WAITING_ON),
    (ThreadState.TIMED_WAITING, "on object monitor"): (
        ThreadStatus.IN_OBJECT_WAIT_TIMED,
        LockEventKind.WAITING_ON,
    ),
    (ThreadState.BLOCKED, "on object monitor"): (ThreadStatus.BLOCKED, LockEventKind.WAITING_TO_LOCK),
    (ThreadState.TIMED_WAITING, "sleeping"): (ThreadStatus.SLEEPING, None),
}

_SIMPLE_STATUS = {
    ThreadState.RUNNABLE: ThreadStatus.RUNNABLE,
    ThreadState.NEW: ThreadStatus.NEW,
    ThreadState.TERMINATED: ThreadStatus.TERMINATED,
    ThreadState.UNKNOWN: ThreadStatus.UNKNOWN,
}


def _single_locked_monitor(events: list[LockEvent]) -> int | None:
    """Position of the first `- locked` event when the stack locks exactly one monitor."""
    locked = {e.lock_id for e in events if e.kind is LockEventKind.LOCKED and e.lock_id is not None}
    if len(locked) != 1:
        return None
    return next(i for i, e in enumerate(events) if e.kind is LockEventKind.LOCKED)


def _replaced(events: list[LockEvent], position: int, kind: LockEventKind) -> list[LockEvent]:
    repaired = list(events)
    repaired[position] = events[position]._replace(kind=kind)
    return repaired


def _repair_blocked(top_function: str, events: list[LockEvent]) -> list[LockEvent]:
    """A BLOCKED thread without a `waiting to lock` line: find the monitor it is entering.

    JDK 6/7 print the monitor a thread is trying to (re-)enter as `- locked` or, after wait(),
    as `- waiting on`. In Object.wait() the monitor is the one the thread waited on (its
    `waiting on` line, or the only monitor its stack locks); elsewhere it is the `- locked`
    under the top frame. The thread does not hold it.
    """
    if any(e.kind in (LockEventKind.WAITING_TO_LOCK, LockEventKind.WAITING_TO_RELOCK) for e in events):
        return events
    if top_function in OBJECT_WAIT_FUNCTIONS:
        for position, event in enumerate(events):
            if event.kind is LockEventKind.WAITING_ON and event.lock_id is not None:
                return _replaced(events, position, LockEventKind.WAITING_TO_RELOCK)
        single = _single_locked_monitor(events)
        if single is not None:
            return _replaced(events, single, LockEventKind.WAITING_TO_RELOCK)
        return events
    for position, event in enumerate(events):
        if event.frame_index != 0:
            break
        if event.kind in (LockEventKind.LOCKED, LockEventKind.WAITING_ON) and event.lock_id is not None:
            return _replaced(events, position, LockEventKind.WAITING_TO_LOCK)
    return events


def _repair_waiting(top_function: str, events: list[LockEvent]) -> list[LockEvent]:
    """In Object.wait() with `- locked` where `- waiting on` was meant (a JDK 6 slip).

    The monitor waited on is the `- locked` under the top frame, or, when the wait() frame
    itself printed no line, the only monitor the stack locks.
    """
    if any(e.kind is LockEventKind.WAITING_ON for e in events):
        return events
    for position, event in enumerate(events):
        if event.frame_index != 0:
            break
        if event.kind is LockEventKind.LOCKED:
            return _replaced(events, position, LockEventKind.WAITING_ON)
    if top_function in OBJECT_WAIT_FUNCTIONS:
        single = _single_locked_monitor(events)
        if single is not None:
            return _replaced(events, single, LockEventKind.WAITING_ON)
    return events


def _repair_parked(events: list[LockEvent]) -> list[LockEvent]:
    """ThreadInfo.toString() says `waiting on` for a parked thread too; it parks, it holds nothing."""
    for position, event in enumerate(events):
        if event.frame_index != 0:
            break
        if event.kind is LockEventKind.WAITING_ON:
            return _replaced(events, position, LockEventKind.PARKING)
    return events
