"""KD705: the MaxLag comparison's `fetcher-absent` verdict."""

from __future__ import annotations

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
