"""KD608: the lag engine's `no-owner` finding."""

from __future__ import annotations

from kafkadiag.rules.base import Severity
from kafkadiag.rules.cluster import LagFindingRule


class NoOwner(LagFindingRule):
    code = "KD608"
    name = "no-owner"
    title = "Partitions nobody owns"
    severity = Severity.ERROR
    lag_code = "no-owner"
    explanation = """
Consumers are registered, but some partitions of a subscribed topic have no owner: no stream
consumes them (a rebalance gave up after rebalance.max.retries).
"""
    remedy = """
Look for 'can't rebalance after' in the consumers' logs; restart the group's consumers so a
rebalance assigns every partition.
"""
