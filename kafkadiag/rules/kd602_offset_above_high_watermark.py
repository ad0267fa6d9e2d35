"""KD602 `offset-above-high-watermark`, a rule over one group's offsets and registrations."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from kafkadiag.lag.evidence import where
from kafkadiag.rules.base import Finding, Severity
from kafkadiag.rules.cluster import LagFindingRule

if TYPE_CHECKING:
    from kafkadiag.lag.model import PartitionLag
    from kafkadiag.rules.groupfacts import GroupFacts


class OffsetAboveHighWatermark(LagFindingRule):
    code = "KD602"
    name = "offset-above-high-watermark"
    title = "Committed offset above the high watermark"
    severity = Severity.ERROR
    explanation = """
The group committed an offset beyond the end of the log (negative lag): the log was truncated (an
unclean leader election) or the topic was deleted and re-created. The consumer will reset its
position.
"""
    remedy = """
Check the broker's logs for unclean leader elections and the topic's creation time; reset the
group's offsets deliberately instead of letting auto.offset.reset decide.
"""

    def group_check(self, facts: GroupFacts) -> Iterator[Finding]:
        def message(topic: str, members: list[PartitionLag]) -> str:
            return (
                f"{len(members)} partition(s) of {topic} have a committed offset above the high "
                f"watermark (negative lag): the log was truncated or the topic re-created; the "
                f"consumer will reset"
            )

        def line(p: PartitionLag) -> str:
            return f"{where(p)}: committed {p.committed_offset} > high watermark {p.high_watermark}"

        above = (p for p in facts.partitions if _above_high_watermark(p))
        return self.per_topic(facts, above, message, line)


def _above_high_watermark(partition: PartitionLag) -> bool:
    committed, high_watermark = partition.committed_offset, partition.high_watermark
    return committed is not None and high_watermark is not None and committed > high_watermark
