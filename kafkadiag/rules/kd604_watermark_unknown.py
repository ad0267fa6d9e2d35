"""KD604: the lag engine's `watermark-unknown` finding."""

from __future__ import annotations

from kafkadiag.rules.base import Severity
from kafkadiag.rules.cluster import LagFindingRule


class WatermarkUnknown(LagFindingRule):
    code = "KD604"
    name = "watermark-unknown"
    title = "High watermark unknown: lag cannot be computed"
    severity = Severity.WARNING
    lag_code = "watermark-unknown"
    explanation = """
The partition's leader did not answer for its high watermark (leader unavailable, broker
unreachable, request failed): the lag of those partitions is unknown, not zero.
"""
    remedy = """
Check the partitions' leaders and the brokers' reachability from this host; rerun with a larger
--timeout on slow networks.
"""
