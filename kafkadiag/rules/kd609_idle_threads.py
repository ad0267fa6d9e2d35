"""KD609: the lag engine's `idle-threads` finding."""

from __future__ import annotations

from kafkadiag.rules.base import Severity
from kafkadiag.rules.cluster import LagFindingRule


class IdleThreads(LagFindingRule):
    code = "KD609"
    name = "idle-threads"
    title = "More consumer threads than partitions"
    severity = Severity.INFO
    lag_code = "idle-threads"
    explanation = """
More consumer threads subscribe to a topic than it has partitions: the extra threads own nothing
and stay idle.
"""
    remedy = """
Lower the topic's stream count in createMessageStreams, or add partitions to the topic.
"""
