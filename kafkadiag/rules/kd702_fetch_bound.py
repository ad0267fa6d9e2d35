"""KD702: the MaxLag comparison's `fetch-bound` verdict."""

from __future__ import annotations

from kafkadiag.maxlag.model import VERDICT_FETCH_BOUND
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
