"""KD403: kafka-python's heartbeat thread blocked on the coordinator lock."""

from __future__ import annotations

import re
from collections.abc import Iterator

from kafkadiag.model import Thread
from kafkadiag.rules import python
from kafkadiag.rules.base import Finding, Requirement, Rule, Severity
from kafkadiag.rules.context import AnalysisContext

# kafka-python 3.0 names it "<group>-heartbeat", 2.x "kafka-coordinator-heartbeat-thread | <group>".
HEARTBEAT_NAME = re.compile(r"^(?:kafka-coordinator-heartbeat-thread(?: \| .+)?|.+-heartbeat)$")
HEARTBEAT_CODE = ("HeartbeatThread.run", "HeartbeatThread._run_once")
# Python frames that are a lock being taken (`with condition:` enters the Condition's lock).
LOCK_ENTRY = ("Condition.__enter__", "Condition.acquire", "_RLock.acquire", "_RLock.__enter__")
# What an idle heartbeat thread waits in between heartbeats.
IDLE_WAITS = ("Condition.wait", "Event.wait", "Condition.wait_for")
LOCK_ACQUIRE_NATIVE = ("lock_PyThread_acquire_lock", "rlock_acquire", "PyThread_acquire_lock_timed")
COORDINATOR_FILE = "coordinator/"


def is_heartbeat(thread: Thread) -> bool:
    return (
        bool(HEARTBEAT_NAME.match(thread.name))
        or python.python_function_index(thread, *HEARTBEAT_CODE) is not None
    )


class PythonHeartbeatBlocked(Rule[AnalysisContext]):
    code = "KD403"
    name = "python-heartbeat-blocked"
    title = "kafka-python heartbeat thread blocked on the coordinator lock"
    severity = Severity.ERROR
    requires = frozenset({Requirement.PYTHON})
    explanation = """
kafka-python sends heartbeats from a background thread that takes the coordinator's lock for each
one. The poll thread holds the same lock while it polls and rebalances - including while user
callbacks (on_partitions_revoked/assigned) run. A heartbeat thread stuck acquiring the lock, not
waiting between heartbeats, means the lock's holder is stuck: no heartbeats are sent and the
group coordinator evicts the member after session.timeout.ms. py-spy names no lock owners; the
holder is the thread stuck inside the client's poll or a rebalance callback.
"""
    remedy = """
Keep rebalance listeners and anything called from poll() fast; do slow work outside the client's
callbacks. With --native, py-spy shows the heartbeat thread in lock acquisition for certain.
"""

    def check(self, context: AnalysisContext) -> Iterator[Finding]:
        dump = context.dump
        for thread in dump.threads:
            if not is_heartbeat(thread) or thread.active:
                continue
            frames = python.python_frames(thread)
            if not frames or frames[0][1].function in IDLE_WAITS:
                continue
            native_acquire = any(f.native and f.function in LOCK_ACQUIRE_NATIVE for f in thread.frames)
            top = frames[0][1].function
            if not native_acquire and top not in LOCK_ENTRY and top not in HEARTBEAT_CODE:
                continue
            holders = [
                other for other in dump.threads if other is not thread and _inside_client_callback(other)
            ]
            evidence = [context.header(thread), context.frame(thread, frames[0][0])]
            for holder in holders[:3]:
                evidence.append(context.header(holder))
                application = python.first_application_frame(holder)
                if application is not None:
                    evidence.append(context.frame(holder, application))
            who = (
                f"; {', '.join(h.name for h in holders)} is inside the client with a callback that does "
                "not return - the likely holder"
                if holders
                else ""
            )
            yield self.finding(
                f"Heartbeat thread {thread.name} is blocked taking the coordinator lock in "
                f"{frames[0][1].function}{who}.",
                [*(h.name for h in holders), thread.name],
                evidence,
                severity=Severity.ERROR
                if holders or native_acquire or top in LOCK_ENTRY
                else Severity.WARNING,
                story=(
                    f"The heartbeat thread {thread.name} is blocked on the coordinator lock"
                    + (f", held up by {', '.join(h.name for h in holders)} in a callback" if holders else "")
                ),
            )


def _inside_client_callback(thread: Thread) -> bool:
    """In the client's coordinator code, with application code (a callback) above it."""
    frames = python.python_frames(thread)
    client = [index for index, frame in frames if COORDINATOR_FILE in (frame.file or "")]
    if not client:
        return False
    application = python.first_application_frame(thread)
    return application is not None and application < max(client)
