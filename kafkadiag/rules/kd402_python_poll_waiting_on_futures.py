"""KD402: a Python poll loop waits on its workers' futures instead of polling."""

from __future__ import annotations

from collections.abc import Iterator

from kafkadiag.rules import python
from kafkadiag.rules.base import Finding, Requirement, Rule, Severity
from kafkadiag.rules.context import AnalysisContext

# concurrent.futures waits, as py-spy names them.
FUTURE_WAITS = (
    "wait",
    "as_completed",
    "Future.result",
    "Future.exception",
    "Executor.map",
    "result_iterator",
)


class PythonPollWaitingOnFutures(Rule[AnalysisContext]):
    code = "KD402"
    name = "python-poll-waiting-on-futures"
    title = "Python poll loop waits on futures instead of polling"
    severity = Severity.ERROR
    requires = frozenset({Requirement.PYTHON})
    explanation = """
The consumer's poll loop submitted records to a thread pool and now waits for the results
(concurrent.futures.wait, as_completed, Future.result). Until they finish it does not call
poll(): with kafka-python or confluent-kafka the member leaves the group after
max.poll.interval.ms and its partitions are reassigned, while the stuck work is redone elsewhere.
"""
    remedy = """
See what the workers are stuck in (quoted). Wait with a timeout and keep polling (pause the
partitions while the batch runs), give the workers' I/O timeouts, or raise max.poll.interval.ms to
cover the slowest batch.
"""

    def check(self, context: AnalysisContext) -> Iterator[Finding]:
        dump = context.dump
        waiting = []
        for thread in dump.threads:
            frames = python.python_frames(thread)[:5]
            wait = next(
                (
                    index
                    for index, frame in frames
                    if frame.function in FUTURE_WAITS and "concurrent/futures" in (frame.file or "futures")
                ),
                None,
            )
            if wait is None or thread.active or not python.looks_like_poll_loop(thread):
                continue
            waiting.append((thread, wait))
        if not waiting:
            return
        waiting_ids = {id(thread) for thread, _ in waiting}  # by identity: names may repeat
        workers = [
            thread
            for thread in dump.threads
            if id(thread) not in waiting_ids
            and not python.is_waiting_for_work(thread)
            and python.first_application_frame(thread) is not None
            and "Condition.wait" not in [f.function for _, f in python.python_frames(thread)[:1]]
        ]
        for thread, wait in waiting:
            evidence = python.blocked_with_workers_evidence(context, thread, wait, workers)
            stuck = f" Workers in application code: {', '.join(w.name for w in workers)}." if workers else ""
            yield self.finding(
                f"Poll loop {thread.name} waits in {thread.frames[wait].function} for its workers instead "
                f"of calling poll().{stuck}",
                [thread.name, *(worker.name for worker in workers)],
                evidence,
                story=f"Poll loop {thread.name} waits on its workers' futures instead of polling",
            )
