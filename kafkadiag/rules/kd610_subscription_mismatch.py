"""KD610: the lag engine's `subscription-mismatch` finding."""

from __future__ import annotations

from kafkadiag.rules.base import Severity
from kafkadiag.rules.cluster import LagFindingRule


class SubscriptionMismatch(LagFindingRule):
    code = "KD610"
    name = "subscription-mismatch"
    title = "Consumers of one group subscribe differently"
    severity = Severity.ERROR
    lag_code = "subscription-mismatch"
    explanation = """
Registered consumers of the group subscribe to different topic sets or patterns: each rebalance
computes a different assignment, and rebalances can repeat without end.
"""
    remedy = """
Give every consumer of the group the same subscription, or split them into groups.
"""
