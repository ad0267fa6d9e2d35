"""KD606: the lag engine's `offsets-without-consumer` finding."""

from __future__ import annotations

from kafkadiag.rules.base import Severity
from kafkadiag.rules.cluster import LagFindingRule


class OffsetsWithoutConsumer(LagFindingRule):
    code = "KD606"
    name = "offsets-without-consumer"
    title = "Offsets but no live consumer"
    severity = Severity.WARNING
    lag_code = "offsets-without-consumer"
    explanation = """
The group has committed offsets but no registered consumer: nothing consumes, and the lag grows
with every produced record.
"""
    remedy = """
Start the group's consumers, or delete the group's offsets if it is retired.
"""
