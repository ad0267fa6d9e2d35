"""KD601: the lag engine's `offset-below-log-start` finding."""

from __future__ import annotations

from kafkadiag.rules.base import Severity
from kafkadiag.rules.cluster import LagFindingRule


class OffsetBelowLogStart(LagFindingRule):
    code = "KD601"
    name = "offset-below-log-start"
    title = "Committed offset below the log start: data was skipped"
    severity = Severity.ERROR
    lag_code = "offset-below-log-start"
    explanation = """
The group's committed offset is older than the oldest record the broker still has: retention
deleted records before the group read them. On restart the consumer resets (auto.offset.reset) and
those records are never processed.
"""
    remedy = """
Find why the group fell so far behind (the other findings, a stall in a thread dump), raise the
topic's retention while it catches up, and decide whether the skipped records must be replayed
from elsewhere.
"""
