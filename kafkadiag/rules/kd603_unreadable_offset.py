"""KD603: the lag engine's `unreadable-offset` finding."""

from __future__ import annotations

from kafkadiag.rules.base import Severity
from kafkadiag.rules.cluster import LagFindingRule


class UnreadableOffset(LagFindingRule):
    code = "KD603"
    name = "unreadable-offset"
    title = "Committed offset that could not be read"
    severity = Severity.ERROR
    lag_code = "unreadable-offset"
    explanation = """
An offset znode (or a Kafka-stored offset) is not a plain decimal number, or could not be read:
tools disagree on such a value and the consumer may fail to start from it.
"""
    remedy = """
Quote the raw value (in the evidence) to whoever owns the group; rewrite the offset with the
consumer stopped, using the tool the group's consumer version expects.
"""
