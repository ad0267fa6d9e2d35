"""KD401: a Python poll loop blocked in queue.Queue.put on a full hand-off queue."""

from __future__ import annotations

from collections.abc import Iterator

from kafkadiag.model import Thread
from kafkadiag.rules import python
from kafkadiag.rules.base import Finding, Requirement, Rule, Severity
from kafkadiag.rules.context import AnalysisContext


class PythonPollBlockedOnFullQueue(Rule[AnalysisContext]):
    code = "KD401"
    name = "python-poll-blocked-on-full-queue"
    title = "Python poll loop blocked putting records into a full queue"
    severity = Severity.ERROR
    requires = frozenset({Requirement.PYTHON})
    explanation = """
A consumer thread hands records to workers through a bounded queue.Queue and is blocked in put:
the queue is full because the workers take from it more slowly than the loop puts, or stopped
taking (one dump cannot tell which). While it waits it does not call poll(), so after
max.poll.interval.ms the client leaves the group and a rebalance moves its partitions away - the
stall turns into rebalance churn. The threads that should drain the queue
are those in application code instead of waiting in Queue.get.
"""
    remedy = """
Find out what the workers are stuck in (their stacks are quoted; py-spy --native shows sleeps and
lock waits below the Python frames). Give their I/O timeouts; when the queue is full, pause the
partitions (consumer.pause) and keep calling poll() instead of blocking in put; or put with a
timeout and keep polling in between.
"""

    def check(self, context: AnalysisContext) -> Iterator[Finding]:
        dump = context.dump
        blocked = []
        for thread in dump.threads:
            top = python.python_frames(thread)[:3]  # native frames (py-spy --native) skipped
            put = next((index for index, frame in top if frame.function in python.QUEUE_PUT), None)
            if put is not None and not thread.active:
                blocked.append((thread, put))
        if not blocked:
            return
        blocked_ids = {id(thread) for thread, _ in blocked}  # by identity: names may repeat
        workers = [
            thread for thread in dump.threads if id(thread) not in blocked_ids and self._busy_worker(thread)
        ]
        for thread, put_index in blocked:
            poll = python.looks_like_poll_loop(thread)
            evidence = python.blocked_with_workers_evidence(context, thread, put_index, workers)
            who = "The poll loop" if poll else "The thread"
            # One dump shows where the workers are, not for how long: slow and stopped look alike.
            named = ", ".join(worker.name for worker in workers)
            stuck = (
                f" Threads in application code instead of Queue.get (the likely consumers of the "
                f"queue, busy elsewhere when the dump was taken): {named}. "
                "One dump cannot tell whether they stopped taking or take slowly: a second dump a few "
                "seconds later, with them at the same lines, tells."
                if workers
                else " No thread in the dump is draining a queue: the workers may have died."
            )
            yield self.finding(
                f"{who} {thread.name} is blocked in Queue.put: the hand-off queue is full.{stuck}",
                [thread.name, *(worker.name for worker in workers)],
                evidence,
                severity=Severity.ERROR if poll else Severity.WARNING,
                story=(
                    f"Thread {thread.name} is blocked handing records to a full queue"
                    + (
                        f" while {named} "
                        + ("is" if len(workers) == 1 else "are")
                        + " in application code, not taking from it"
                        if workers
                        else ""
                    )
                ),
            )

    @staticmethod
    def _busy_worker(thread: Thread) -> bool:
        if python.is_waiting_for_work(thread):
            return False
        application = python.first_application_frame(thread)
        if application is None:
            return False
        # A heartbeat or main thread waiting in a Condition/join is not a worker: the wait is in the
        # library frames above its own code (two of them for threading; a green thread's Condition
        # sits under the hub's switch and the semaphore it acquires).
        above = [frame.function for index, frame in python.python_frames(thread) if index < application]
        return "Condition.wait" not in above
