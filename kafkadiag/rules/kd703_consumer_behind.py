"""KD703: the MaxLag comparison's `consumer-behind` verdict."""

from __future__ import annotations

from kafkadiag.maxlag.model import VERDICT_CONSUMER_BEHIND
from kafkadiag.rules.base import Severity
from kafkadiag.rules.cluster import MetricsVerdictRule


class ConsumerBehind(MetricsVerdictRule):
    code = "KD703"
    name = "consumer-behind"
    title = "The new consumer's position trails the log"
    severity = Severity.WARNING
    verdict = VERDICT_CONSUMER_BEHIND
    explanation = """
records-lag-max exceeds one fetch: the new consumer fetches inside poll(), so a slow poll loop and
a slow fetch look the same here.
"""
    remedy = """
Take a thread dump (or py-spy dump) of the consumer to see where the poll loop spends its time.
"""
