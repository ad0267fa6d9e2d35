"""KD611 `owned-without-offset`, a rule over one group's offsets and registrations."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from kafkadiag.lag.evidence import by_topic, ranges
from kafkadiag.rules.base import Finding, Severity
from kafkadiag.rules.cluster import LagFindingRule

if TYPE_CHECKING:
    from kafkadiag.rules.groupfacts import GroupFacts


class OwnedWithoutOffset(LagFindingRule):
    code = "KD611"
    name = "owned-without-offset"
    title = "Owned partition without a committed offset"
    severity = Severity.WARNING
    explanation = """
A partition is owned by a consumer thread but has no committed offset yet: it has consumed nothing
since it started, or never commits.
"""
    remedy = """
Check that the owning thread iterates its stream and that auto-commit (or commitOffsets) runs.
"""

    def group_check(self, facts: GroupFacts) -> Iterator[Finding]:
        if not facts.has_registrations:
            return
        waiting = (o for o in facts.snapshot.offsets if o.owner and o.offset is None and o.error is None)
        for topic, offsets in by_topic(waiting):
            partitions = sorted({offset.partition for offset in offsets})
            yield self.group_finding(
                facts,
                f"{len(partitions)} owned partition(s) of {topic} have no offset node: the "
                f"owner has not committed yet, or cannot (auto.offset.reset decides where it starts)",
                [f"{facts.znode}/offsets/{topic}: no node for partition(s) {ranges(partitions)}"],
                topic=topic,
                partitions=partitions,
            )
