"""KD705: the MaxLag comparison's `fetcher-absent` verdict."""

from __future__ import annotations

from kafkadiag.maxlag.facts import ClientFacts, Verdict, limited
from kafkadiag.maxlag.model import VERDICT_FETCHER_ABSENT
from kafkadiag.rules.base import Severity
from kafkadiag.rules.cluster import MetricsVerdictRule


class FetcherAbsent(MetricsVerdictRule):
    code = "KD705"
    name = "fetcher-absent"
    title = "No consumer fetcher metrics in this JVM"
    severity = Severity.WARNING
    verdict = VERDICT_FETCHER_ABSENT
    explanation = """
The JVM exposes no fetcher metrics for this client: the connector is not running there, JMX
reporting is off, or this is not the consumer's JVM.
"""
    remedy = """
Check the --pid (kafkadiag ps lists the consumer processes) and that the connector was created.
"""

    def judge(self, facts: ClientFacts) -> Verdict | None:
        metrics = facts.metrics
        if metrics.has_fetcher_metrics:
            return None
        return self.decided(
            f"client {facts.client}: no MaxLag and no per-partition fetcher lag in this JVM's metrics",
            limited([f"read: {source}" for source in metrics.sources] or ["no consumer fetcher MBean found"]),
            "Check that the metrics source is the consumer's JVM and that its connector is running "
            "(it registers its fetcher metrics when it starts consuming); `kafkadiag lag --group ...` "
            "shows whether the group has owners.",
        )
