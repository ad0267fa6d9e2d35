"""KD602: the lag engine's `offset-above-high-watermark` finding."""

from __future__ import annotations

from kafkadiag.rules.base import Severity
from kafkadiag.rules.cluster import LagFindingRule


class OffsetAboveHighWatermark(LagFindingRule):
    code = "KD602"
    name = "offset-above-high-watermark"
    title = "Committed offset above the high watermark"
    severity = Severity.ERROR
    lag_code = "offset-above-high-watermark"
    explanation = """
The group committed an offset beyond the end of the log (negative lag): the log was truncated (an
unclean leader election) or the topic was deleted and re-created. The consumer will reset its
position.
"""
    remedy = """
Check the broker's logs for unclean leader elections and the topic's creation time; reset the
group's offsets deliberately instead of letting auto.offset.reset decide.
"""
