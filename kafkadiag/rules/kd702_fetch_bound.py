"""KD702: the MaxLag comparison's `fetch-bound` verdict."""

from __future__ import annotations

from kafkadiag.maxlag.facts import ClientFacts, Verdict, describe_setting, limited
from kafkadiag.maxlag.model import STREAM_EMPTY, VERDICT_FETCH_BOUND
from kafkadiag.rules.base import Severity
from kafkadiag.rules.cluster import MetricsVerdictRule


class FetchBound(MetricsVerdictRule):
    code = "KD702"
    name = "fetch-bound"
    title = "The fetcher is behind: the consumer is fetch-bound"
    severity = Severity.WARNING
    verdict = VERDICT_FETCH_BOUND
    explanation = """
MaxLag exceeds what one fetch brings per partition while the queues are not full: the consumer is
limited by fetching (broker, network, fetch size), not by processing.
"""
    remedy = """
Check the brokers' request latency and the network; raise fetch.message.max.bytes or
num.consumer.fetchers.
"""

    def judge(self, facts: ClientFacts) -> Verdict | None:
        if facts.new_consumer or not facts.behind():
            return None
        summary = (
            f"client {facts.client}: fetcher behind: MaxLag {facts.max_fetcher_lag} > {facts.threshold} "
            f"({facts.threshold_source}) while no stream queue is full"
        )
        empty = [s for s in facts.streams if s.state == STREAM_EMPTY]
        if empty:
            summary += f"; {len(empty)} of {len(facts.streams)} queues empty (streams waiting for data)"
        evidence = [
            *facts.max_lag_lines(),
            facts.threshold_line(),
            *facts.stream_lines(),
            *facts.partition_lines(),
        ]
        if facts.metrics.min_fetch_rate is not None:
            evidence.append(
                f"MinFetchRate = {facts.metrics.min_fetch_rate:.3g} fetch requests/s (one-minute rate)"
            )
        fetch_size = describe_setting(facts.settings, facts.fetch_setting)
        remedy = (
            "Fetching is the bottleneck, not processing: the streams wait for data. Check the leaders' "
            "brokers (request latency, load, FetchRequestAndResponseMetrics), the network between "
            f"consumer and brokers, and the fetch size: {fetch_size} caps what one fetch brings per "
            "partition; raise it, or num.consumer.fetchers."
        )
        return self.decided(summary, limited(evidence), remedy)
