"""KD611: the lag engine's `owned-without-offset` finding."""

from __future__ import annotations

from kafkadiag.rules.base import Severity
from kafkadiag.rules.cluster import LagFindingRule


class OwnedWithoutOffset(LagFindingRule):
    code = "KD611"
    name = "owned-without-offset"
    title = "Owned partition without a committed offset"
    severity = Severity.WARNING
    lag_code = "owned-without-offset"
    explanation = """
A partition is owned by a consumer thread but has no committed offset yet: it has consumed nothing
since it started, or never commits.
"""
    remedy = """
Check that the owning thread iterates its stream and that auto-commit (or commitOffsets) runs.
"""
