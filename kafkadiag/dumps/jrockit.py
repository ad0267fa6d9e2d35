"""What JRockit (7 and 8.1, R24 to R28) prints around and inside the threads the HotSpot parser reads.

    ===== FULL THREAD DUMP ===============
    Wed Aug 17 12:05:15 2005
    BEA JRockit(R) R25.2.0-28 dra-45238-20050523-2021-win-ia32

    "Thread-0" id=10 idx=0x14 tid=5628 prio=5 alive, in native, blocked
        -- Blocked trying to get lock: java/lang/Object@0x0095C8D0[thin lock]
        at net/homeip/yusuke/samurai/test/AThread.run()V(StackSample.java:25)
        ^-- Holding lock: java/lang/Object@0x0095C8C8[thin lock]
        -- end of trace

    Circular (deadlocked) lock chains
    ...
    ===== END OF THREAD DUMP ===============

WebLogic prints JRockit's dumps (weblogic.Admin THREAD_DUMP, the server's log) in braces, frames
without "at ", with or without the JVM's descriptors:

    Thread-0xa80 "ExecuteThread: '10' for queue: 'weblogic.kernel.Default'" <Active, priority=5, DAEMON> {
        -- Blocked trying to get lock: java/lang/Object@13a92718[thin lock]
        jrockit/vm/Threads.waitForSignal()V(Native Method)
        ^-- Holding lock: java/lang/Object@13a92710[thin lock]
    }

Otherwise a thread's header is HotSpot's shape (a quoted name, `tid=`), its state is in the header's words
(see kafkadiag.dumps.states), its frames name classes the JVM's way (`java/lang/Object`, read by
kafkadiag.dumps.javaframes). Lock lines say in words what HotSpot's say; the lock chains after the
threads restate what the lock lines already tie together, so they are skipped.
"""

from __future__ import annotations

import re

from kafkadiag.model import LockEventKind, Thread, ThreadState, ThreadStatus

BANNER = "===== FULL THREAD DUMP"
END = "===== END OF THREAD DUMP"
# The VM's line under the banner ("BEA JRockit(R) R27.6.5-32_o-...", "Oracle JRockit(R) R28...").
VM_LINE = re.compile(r"^(?:BEA|Oracle) JRockit\(R\)")
# JRockit 7 and 8.1: `"Finalizer"  id: 0x00000380  prio: 8  WAITING, DAEMON, GCABLE`, then a line of
# the VM's pointers (`thread: 0x40C906A8  lastj: 0x4125FD8C  pt_thr: 0x0000065C`).
COLON_HEADER = re.compile(r'^"(?P<name>.*)"\s+id: (?:0x)+[0-9A-Fa-f]+\s+prio: \d+\s+(?P<state>\S.*)$')
# Lines under a header that say nothing the model keeps: JRockit 8.1's VM pointers, its word for
# an empty stack, and the end of a stack.
PASSED_OVER = (
    "thread: 0x",
    "pt_thr: 0x",
    "No Java stack trace available",
    "-- end of trace",
    "--- End of stack trace",
)
LOCK_CHAINS = ("Circular (deadlocked) lock chains", "Blocked lock chains", "Open lock chains")


def in_braces(header: str) -> bool:
    """A thread opened by WebLogic's `Thread-0x80 "name" <words> {`: every stack line is a frame."""
    return header.endswith("{")


def ends_dump(line: str) -> bool:
    """`===== END OF THREAD DUMP ===============`, or JRockit 8.1's `=====================`."""
    stripped = line.strip()
    return stripped.startswith(END) or (len(stripped) >= 20 and not stripped.strip("="))


# WebLogic's dumps of JRockit 8.1 print the lock's address without 0x: `java/lang/Object@13a92718[thin lock]`.
_LOCK_LINE = re.compile(
    r"^\^?-- (?P<words>[A-Za-z ]+): (?P<class>[^@\s]+)@(?:0x)?(?P<id>[0-9a-fA-F]+)(?:\[[^\]]*\])?"
)
_KINDS = {
    "Waiting for notification on": LockEventKind.WAITING_ON,
    # The monitor Object.wait() gave up, printed where it was taken: HotSpot's "- locked" there.
    "Lock released while waiting": LockEventKind.LOCKED,
    "Blocked trying to get lock": LockEventKind.WAITING_TO_LOCK,
    "Holding lock": LockEventKind.LOCKED,
    "Parking to wait for": LockEventKind.PARKING,
}


# A lock line above the first frame is the thread's state, as a state line would give it: JRockit
# spins on a lock before it blocks, and its header says "active" meanwhile.
WAIT_STATES = {
    LockEventKind.WAITING_TO_LOCK: "BLOCKED (on object monitor)",
    LockEventKind.WAITING_ON: "WAITING (on object monitor)",
    LockEventKind.PARKING: "WAITING (parking)",
}


def lock_line(body: str) -> tuple[LockEventKind, int, str] | None:
    """`-- Blocked trying to get lock: java/lang/Object@0x0095C8D0[thin lock]` -> (kind, id, class)."""
    match = _LOCK_LINE.match(body)
    if match is None:
        return None
    kind = _KINDS.get(match["words"].strip())
    if kind is None:
        return None
    return kind, int(match["id"], 16), match["class"].replace("/", ".")


# The VM's own frames above a Java frame that enters a monitor (JRockit 8.1 prints no lock line):
# `jrockit/vm/Threads.progressiveNap`, `jrockit/vm/Locks.stage2Lock`, `jrockit/vm/Locks.monitorEnter`;
# in JRockit 8.1 SP2 and before `COM/jrockit/vm/RNI.waitOnThinLocker`, then Object's own
# `stage2Lock` and `monitorEnter`.
_VM_FRAMES = ("jrockit.vm.", "COM.jrockit.vm.", "java.lang.Object.stage2Lock")
_MONITOR_ENTER = frozenset({"jrockit.vm.Locks.monitorEnter", "java.lang.Object.monitorEnter"})


def entering_monitor(thread: Thread) -> Thread:
    """A thread the header calls active whose top frames are the VM entering a monitor: BLOCKED,
    as a state line would say (JRockit spins, then sleeps, on a monitor another thread holds)."""
    if thread.state is not ThreadState.RUNNABLE:
        return thread
    for frame in thread.frames:
        if frame.function in _MONITOR_ENTER:
            return thread._replace(state=ThreadState.BLOCKED, status=ThreadStatus.BLOCKED)
        if not frame.function.startswith(_VM_FRAMES):
            break
    return thread
