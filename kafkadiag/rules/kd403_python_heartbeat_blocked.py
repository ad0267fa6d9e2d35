"""KD403: kafka-python's heartbeats blocked by a rebalance listener that does not return.

Two shapes, one per kafka-python line:
- 3.0 runs the group protocol, heartbeats included, as coroutines on the client's I/O thread
  ("kafka-io-<client_id>", NetworkSelector.run_forever in kafka/net/selector.py) and calls a
  synchronous rebalance listener inline on that thread
  (ConsumerCoordinator._invoke_rebalance_listener_async): captured from kafka-python 3.0.12
  against Apache Kafka 4.1.1 (fixtures/captured/py-heartbeat-blocked).
- 2.0 sends heartbeats from its own thread ("<group>-heartbeat", HeartbeatThread._run_once in
  kafka/coordinator/base.py), which takes the client's and the coordinator's locks that the poll
  thread holds through ensure_active_group, the listener included: captured from kafka-python
  2.0.2 against Apache Kafka 4.1.1 (fixtures/captured/py-heartbeat-blocked-kafka-python-2.0).
  From 2.1 on, ensure_active_group takes neither lock, and heartbeats go on while a listener runs
  (until max.poll.interval.ms, when the heartbeat thread leaves the group).
A 2.0 heartbeat thread back from its timed wait between heartbeats may instead wait to retake
the coordinator's lock inside Condition.wait: a dump shows that as the wait itself, which this
rule cannot tell from an idle heartbeat thread and does not report.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from kafkadiag.model import Thread
from kafkadiag.rules import python
from kafkadiag.rules.base import Finding, Requirement, Rule, Severity
from kafkadiag.rules.context import AnalysisContext

# kafka-python 2.x names it "<group>-heartbeat" (HeartbeatThread, kafka/coordinator/base.py);
# Java's client "kafka-coordinator-heartbeat-thread | <group>".
HEARTBEAT_NAME = re.compile(r"^(?:kafka-coordinator-heartbeat-thread(?: \| .+)?|.+-heartbeat)$")
HEARTBEAT_CODE = ("HeartbeatThread.run", "HeartbeatThread._run_once")
# Python frames that are a lock being taken (`with condition:` enters the Condition's lock).
LOCK_ENTRY = ("Condition.__enter__", "Condition.acquire", "_RLock.acquire", "_RLock.__enter__")
# What an idle heartbeat thread waits in between heartbeats.
IDLE_WAITS = ("Condition.wait", "Event.wait", "Condition.wait_for")
LOCK_ACQUIRE_NATIVE = ("lock_PyThread_acquire_lock", "rlock_acquire", "PyThread_acquire_lock_timed")
COORDINATOR_FILE = "coordinator/"
# kafka-python 3.0: the I/O thread's event loop, and the call of a rebalance listener from it.
IO_THREAD_NAME = re.compile(r"^kafka-io-")
EVENT_LOOP = ("NetworkSelector.run_forever", "run_forever")
LISTENER_CALL = ("ConsumerCoordinator._invoke_rebalance_listener_async", "_invoke_rebalance_listener_async")
# Where a caller thread waits for the I/O thread to finish what it asked (KafkaConsumer.poll).
WAITS_FOR_EVENT_LOOP = ("NetworkSelector.run", "run")
SELECTOR_FILE = "kafka/net/selector.py"


def is_heartbeat(thread: Thread) -> bool:
    return (
        bool(HEARTBEAT_NAME.match(thread.name))
        or python.python_function_index(thread, *HEARTBEAT_CODE) is not None
    )


class PythonHeartbeatBlocked(Rule[AnalysisContext]):
    code = "KD403"
    name = "python-heartbeat-blocked"
    title = "kafka-python heartbeats blocked by a rebalance listener"
    severity = Severity.ERROR
    requires = frozenset({Requirement.PYTHON})
    explanation = """
kafka-python 3.0 runs the group protocol, heartbeats included, as coroutines on the client's I/O
thread ("kafka-io-<client_id>") and calls a synchronous rebalance listener (on_partitions_revoked,
on_partitions_assigned, on_partitions_lost) inline on that thread: while the listener runs, no
heartbeat is sent, and poll() waits for the thread. A dump showing the I/O thread inside the
listener, waiting, is a rebalance held up by application code; if it stays there past
session.timeout.ms the group coordinator evicts the member. kafka-python 2.0 sends heartbeats from
a background thread that takes the client's and the coordinator's locks for each one, while the
poll thread holds them through a rebalance, its listener included: a heartbeat thread stuck
acquiring them, not waiting between heartbeats, means their holder is stuck. py-spy names no lock
owners; the holder is the thread inside the client's poll with a callback above it. (From 2.1 on
the poll thread holds neither lock during the listener.)
"""
    remedy = """
Keep rebalance listeners fast; do slow work (flushing state, committing elsewhere) outside them,
or, on kafka-python 3.0, use an AsyncConsumerRebalanceListener or hand the work to a worker
thread. Take a second dump: a listener still in the same place is not returning.
"""

    def check(self, context: AnalysisContext) -> Iterator[Finding]:
        yield from self._io_threads_in_listeners(context)
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

    def _io_threads_in_listeners(self, context: AnalysisContext) -> Iterator[Finding]:
        """kafka-python 3.0: the I/O thread inside a synchronous rebalance listener, not running."""
        dump = context.dump
        for thread in dump.threads:
            if thread.active or not _is_io_thread(thread):  # running: the listener is working
                continue
            call = python.python_function_index(thread, *LISTENER_CALL)
            listener = python.first_application_frame(thread)
            if call is None or listener is None or listener > call:
                continue
            waiting = [
                other for other in dump.threads if other is not thread and _waits_for_event_loop(other)
            ]
            yield self._listener_finding(context, thread, listener, call, waiting)

    def _listener_finding(
        self, context: AnalysisContext, thread: Thread, listener: int, call: int, waiting: list[Thread]
    ) -> Finding:
        function = thread.frames[listener].function
        evidence = [context.header(thread), context.frame(thread, listener), context.frame(thread, call)]
        for other in waiting[:3]:
            evidence.append(context.header(other))
            application = python.first_application_frame(other)
            if application is not None:
                evidence.append(context.frame(other, application))
        # py-spy tells an idle thread from a running one; the traceback formats do not.
        state = ", idle" if thread.active is False else ""
        behind = f"; {', '.join(t.name for t in waiting)} wait(s) in poll for it" if waiting else ""
        return self.finding(
            f"kafka-python's I/O thread {thread.name} is inside the rebalance listener {function}{state}: "
            f"heartbeats run on this thread and none is sent until the listener returns{behind}.",
            [thread.name, *(t.name for t in waiting)],
            evidence,
            story=f"The rebalance listener {function} holds up kafka-python's I/O thread {thread.name}, "
            "and with it the group's heartbeats",
        )


def _is_io_thread(thread: Thread) -> bool:
    if IO_THREAD_NAME.match(thread.name):
        return True
    return any(
        frame.function in EVENT_LOOP and (frame.file or "").endswith(SELECTOR_FILE)
        for _, frame in python.python_frames(thread)
    )


def _waits_for_event_loop(thread: Thread) -> bool:
    """A caller thread (poll) waiting for the I/O thread: NetworkSelector.run near the top."""
    return any(
        frame.function in WAITS_FOR_EVENT_LOOP and (frame.file or "").endswith(SELECTOR_FILE)
        for _, frame in python.python_frames(thread)[:4]
    )


def _inside_client_callback(thread: Thread) -> bool:
    """In the client's coordinator code, with application code (a callback) above it."""
    frames = python.python_frames(thread)
    client = [index for index, frame in frames if COORDINATOR_FILE in (frame.file or "")]
    if not client:
        return False
    application = python.first_application_frame(thread)
    return application is not None and application < max(client)
