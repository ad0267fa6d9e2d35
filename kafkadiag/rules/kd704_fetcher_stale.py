"""KD704: the MaxLag comparison's `fetcher-stale` verdict."""

from __future__ import annotations

from kafkadiag.maxlag.facts import FETCHER_THREAD_PREFIX, ClientFacts, Verdict, bound_text, limited
from kafkadiag.maxlag.model import VERDICT_FETCHER_STALE
from kafkadiag.rules.base import Severity
from kafkadiag.rules.cluster import MetricsVerdictRule


class FetcherStale(MetricsVerdictRule):
    code = "KD704"
    name = "fetcher-stale"
    title = "Fetcher metrics stale: the fetcher is not fetching"
    severity = Severity.ERROR
    verdict = VERDICT_FETCHER_STALE
    explanation = """
The fetcher reports little or no lag, but the committed offsets trail by more than the consumer
can hold: no fetcher thread runs, it never fetched, or it is stuck; its metrics no longer describe
the consumer.
"""
    remedy = """
Take a thread dump: look for the ConsumerFetcherThread (missing, blocked in put, or stuck in I/O)
and the leader-finder thread.
"""

    def judge(self, facts: ClientFacts) -> Verdict | None:
        stale = _why_stale(facts)
        if not stale:
            return None
        fetchers = ", ".join(name for name, _ in facts.metrics.fetcher_threads) or "none"
        evidence = [
            *facts.max_lag_lines(),
            f"fetcher threads: {fetchers}",
            *facts.stream_lines(),
            *facts.partition_lines(),
        ]
        remedy = (
            "The fetcher is not fetching, so MaxLag says nothing about this consumer. Take a thread dump "
            f"(`jstack -l PID`) and look for {FETCHER_THREAD_PREFIX}* and the leader-finder thread; check "
            "the consumer's log for rebalance failures (a rebalance that did not finish leaves the fetchers "
            "closed) and `kafkadiag lag --group ...` for partitions without owners or leaders. If offsets "
            "are committed by the application (auto-commit off), check that it still commits."
        )
        summary = f"client {facts.client}: fetcher metrics stale: " + "; ".join(stale)
        return self.decided(summary, limited(evidence), remedy)


def _why_stale(facts: ClientFacts) -> list[str]:
    """What shows the fetcher's metrics no longer describe the consumer."""
    metrics = facts.metrics
    stale: list[str] = []
    if (
        facts.thread_names_read
        and not facts.new_consumer
        and metrics.fetcher_threads_attributed
        and not metrics.fetcher_threads
    ):
        stale.append(f"no {FETCHER_THREAD_PREFIX}* thread runs in the JVM")
    read = [p for p in facts.partitions if p.fetcher_source is not None]
    never = [p for p in read if not p.fetched]
    if never and len(never) == len(read):
        stale.append(f"the fetcher never fetched any of its {len(never)} partition(s) (ConsumerLag = -1)")
    bound = facts.bound
    if facts.gap_total is not None and bound.records is not None and facts.gap_total > bound.records:
        stale.append(
            f"the committed offsets trail the fetch offsets by {facts.gap_total} records, more than the "
            f"consumer can hold: {bound_text(bound)}"
        )
    return stale
