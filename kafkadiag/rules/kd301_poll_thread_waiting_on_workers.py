"""KD301: a consumer's poll thread waits for its workers instead of polling."""

from __future__ import annotations

from collections.abc import Iterator

from kafkadiag.rules import newconsumer, stackindex, stacks
from kafkadiag.rules.base import Finding, Requirement, Rule, Severity
from kafkadiag.rules.context import AnalysisContext
from kafkadiag.rules.kd103_hidden_wait_deadlock import HIDDEN_WAITS


class PollThreadWaitingOnWorkers(Rule[AnalysisContext]):
    code = "KD301"
    name = "poll-thread-waiting-on-workers"
    title = "Poll thread waits for its workers instead of polling"
    severity = Severity.WARNING
    requires = frozenset({Requirement.JAVA})
    explanation = """
The thread that calls KafkaConsumer.poll hands the records to workers and then waits for them
(a CountDownLatch, Future.get, invokeAll, CompletableFuture.join) before it polls again. While it
waits, poll() is not called: when the workers take longer than max.poll.interval.ms (5 minutes
by default), the consumer leaves the group, its partitions move to another member, and the
batch it was processing is redelivered - often to a member that gets stuck the same way.
"""
    remedy = """
See what the workers are doing (their stacks are quoted). Bound their work with timeouts; let the
poll thread keep polling while workers run (pause the partitions with consumer.pause(), resume
them when the batch is done, commit afterwards); or raise max.poll.interval.ms to fit the longest
batch, knowing it also delays the detection of a dead consumer.
"""

    def check(self, context: AnalysisContext) -> Iterator[Finding]:
        dump = context.dump
        poll_threads = newconsumer.PollThreads(context)
        for thread in stackindex.threads_with(dump, *HIDDEN_WAITS):
            wait_index = stacks.index_of(thread, *HIDDEN_WAITS)
            if wait_index is None or thread.status not in stacks.WAITING_STATUSES:
                continue
            if not poll_threads.is_poll_thread(thread):
                continue
            workers = poll_threads.workers_of(thread)
            waited = HIDDEN_WAITS[thread.frames[wait_index].function]
            evidence = poll_threads.evidence(thread, wait_index, workers)
            busy = f" Busy workers: {newconsumer.describe_workers(workers)}." if workers else ""
            yield self.finding(
                f"{poll_threads.named(thread)} waits in {waited} instead of calling poll().{busy}",
                [thread.name, *(worker.name for worker in workers)],
                evidence,
                severity=Severity.ERROR if workers else Severity.WARNING,
                story=f"Poll thread {thread.name} waits for its workers ({waited}) instead of polling",
            )
