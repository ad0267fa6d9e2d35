"""KD701: the MaxLag comparison's `streams-not-draining` verdict."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkadiag.lag.evidence import ranges
from kafkadiag.maxlag.facts import ClientFacts, Verdict, describe_setting, limited
from kafkadiag.maxlag.model import STREAM_EMPTY, STREAM_FULL, VERDICT_STREAMS_NOT_DRAINING, StreamComparison
from kafkadiag.rules.base import Severity
from kafkadiag.rules.cluster import DiagnosisContext, MetricsVerdictRule, runs_fetcher

if TYPE_CHECKING:
    from kafkadiag.maxlag.model import ClientComparison


class StreamsNotDraining(MetricsVerdictRule):
    code = "KD701"
    name = "streams-not-draining"
    title = "A full stream queue blocks the fetcher, whose MaxLag then stays small"
    severity = Severity.WARNING
    verdict = VERDICT_STREAMS_NOT_DRAINING
    explanation = """
A stream's FetchQueueSize reached queued.max.message.chunks: its thread is not taking from the
queue as fast as the fetcher fills it. The fetcher's next put() on that queue blocks until the
thread takes a chunk, so MaxLag stays small while the committed offsets fall behind, and every
other stream the fetcher serves waits. Whether the committed lag is past what the buffers hold is
stated with the comparison (KD801 weighs it), not assumed here.

One reading cannot tell a stream that stopped from one that only drains slower than it is fed (a
consumer working through a backlog fills its queues too), so the finding weighs what else was
read: an error when a thread dump of the same consumer shows its fetcher stalled (blocked in
put(), KD201, or held up by a stream thread that stopped, KD203); a note when the dump shows
that fetcher not blocked, the queue having been full only at the moment it was read; a warning,
saying so, when no dump of that consumer was read.
"""
    remedy = """
Take a thread dump of the consumer and look at the thread iterating the full stream (`kafkadiag
diagnose --pid` does both): fix what it is stuck in, or move processing to a worker pool.
"""

    def weigh(self, context: DiagnosisContext, client: ClientComparison) -> tuple[Severity, str]:
        # A stall the dump shows on this client's fetcher: blocked in put() (KD201, or KD302 where
        # the stack is not kafka.consumer's own), or held up by the stream thread that stopped
        # (KD203 names the fetcher it holds up).
        confirming = [
            finding
            for finding in (context.dumps.findings if context.dumps is not None else ())
            if finding.severity is Severity.ERROR and any(runs_fetcher(client, t) for t in finding.threads)
        ]
        if confirming:
            first = confirming[0]
            said = first.message.split(". ")[0].rstrip(".")
            return Severity.ERROR, f"The thread dump confirms it ({first.rule}: {said})"
        dumped = context.fetchers_dumped(client)
        if dumped:
            return Severity.INFO, (
                f"The thread dump read with these metrics shows {', '.join(dumped)} not blocked in "
                "put(): the queue was full at the moment it was read, as a stream that drains slower "
                "than it is fed fills it, and no stall is shown"
            )
        return Severity.WARNING, (
            "Read once, with no thread dump of this consumer: a stream that stopped and one that "
            "drains slower than it is fed both fill their queue; a thread dump "
            "(`kafkadiag diagnose --pid`) tells which"
        )

    def judge(self, facts: ClientFacts) -> Verdict | None:
        full = [s for s in facts.streams if s.state == STREAM_FULL]
        if not full:
            return None
        empty = [s for s in facts.streams if s.state == STREAM_EMPTY]
        evidence = [
            *facts.stream_lines(full),
            *facts.stream_lines(empty),
            *facts.max_lag_lines(),
            f"capacity: {describe_setting(facts.settings, 'queued.max.message.chunks')}",
            *facts.partition_lines(),
        ]
        return self.decided(_summary(facts, full, empty), limited(evidence), _remedy(facts, full))


def _summary(facts: ClientFacts, full: list[StreamComparison], empty: list[StreamComparison]) -> str:
    named = ", ".join(
        f"{s.topic} thread {s.thread_id}" + (f" (partitions {ranges(s.partitions)})" if s.partitions else "")
        for s in full
    )
    summary = f"client {facts.client}: stream queue full: {named}"
    starving = ", ".join(f"{s.topic} thread {s.thread_id}" for s in empty)
    if starving:
        summary += f"; empty (starving): {starving}"
    max_lag = facts.metrics.max_lag
    summary += f"; MaxLag {max_lag if max_lag is not None else 'unknown'}"
    if facts.gap_total is not None:
        summary += f", gap {facts.gap_total} records between fetch and commit"
    return summary


def _remedy(facts: ClientFacts, full: list[StreamComparison]) -> str:
    threads = [name for name, _ in facts.metrics.fetcher_threads]
    stream_names = ", ".join(s.owner or f"{s.topic} thread {s.thread_id}" for s in full)
    blocked = (
        f"The fetcher ({', '.join(threads)}) is blocked in put() on that queue, so " if threads else "So "
    )
    return (
        f"The thread consuming {stream_names} is not taking from its queue as fast as the fetcher "
        "fills it: the application code handling its messages is blocked or too slow (one reading "
        "does not tell which). Take a thread dump now "
        "(`jstack -l PID > dump.txt`, then `kafkadiag dump analyze dump.txt`) and look at the thread "
        "iterating that stream: the frames above ConsumerIterator.next/KafkaStream are where it waits. "
        + blocked
        + "every stream it serves waits until the stream drains; if the dump shows the handler "
        "stuck, unblock or restart it."
    )
