"""KD704: the MaxLag comparison's `fetcher-stale` verdict."""

from __future__ import annotations

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
