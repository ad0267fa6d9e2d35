"""KD604 `watermark-unknown`, a rule over one group's offsets and registrations."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from kafkadiag.lag.evidence import where
from kafkadiag.rules.base import Finding, Severity
from kafkadiag.rules.cluster import LagFindingRule

if TYPE_CHECKING:
    from kafkadiag.lag.model import PartitionLag
    from kafkadiag.rules.groupfacts import GroupFacts


class WatermarkUnknown(LagFindingRule):
    code = "KD604"
    name = "watermark-unknown"
    title = "High watermark unknown: lag cannot be computed"
    severity = Severity.WARNING
    explanation = """
The partition's leader did not answer for its high watermark (leader unavailable, broker
unreachable, request failed): the lag of those partitions is unknown, not zero.
"""
    remedy = """
Check the partitions' leaders and the brokers' reachability from this host; rerun with a larger
--timeout on slow networks.
"""

    def group_check(self, facts: GroupFacts) -> Iterator[Finding]:
        def message(topic: str, members: list[PartitionLag]) -> str:
            return (
                f"the high watermark of {len(members)} partition(s) of {topic} could not be read: "
                f"their lag is unknown"
            )

        def line(p: PartitionLag) -> str:
            return f"{where(p)}: {'; '.join(p.problems)}"

        unknown = (p for p in facts.partitions if p.high_watermark is None and p.committed_offset is not None)
        return self.per_topic(facts, unknown, message, line)
