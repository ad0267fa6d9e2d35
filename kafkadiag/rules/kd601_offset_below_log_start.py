"""KD601 `offset-below-log-start`, a rule over one group's offsets and registrations."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from kafkadiag.lag.evidence import where
from kafkadiag.rules.base import Finding, Severity
from kafkadiag.rules.cluster import LagFindingRule

if TYPE_CHECKING:
    from kafkadiag.lag.model import PartitionLag
    from kafkadiag.rules.groupfacts import GroupFacts


class OffsetBelowLogStart(LagFindingRule):
    code = "KD601"
    name = "offset-below-log-start"
    title = "Committed offset below the log start: data was skipped"
    severity = Severity.ERROR
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

    def group_check(self, facts: GroupFacts) -> Iterator[Finding]:
        def message(topic: str, members: list[PartitionLag]) -> str:
            lost = sum((p.log_start_offset or 0) - (p.committed_offset or 0) for p in members)
            return (
                f"{len(members)} partition(s) of {topic} have a committed offset below the log-start "
                f"offset: retention deleted {lost} record(s) before the group read them (data skipped)"
            )

        def line(p: PartitionLag) -> str:
            return f"{where(p)}: committed {p.committed_offset} < log start {p.log_start_offset}"

        below = (p for p in facts.partitions if _below_log_start(p))
        return self.per_topic(facts, below, message, line)


def _below_log_start(partition: PartitionLag) -> bool:
    committed, log_start = partition.committed_offset, partition.log_start_offset
    return committed is not None and log_start is not None and committed < log_start
