"""KD602 `offset-above-high-watermark`, a rule over one group's offsets and registrations."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from kafkadiag.lag.evidence import by_topic, limited, where
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
        for topic, members in by_topic(p for p in facts.partitions if _above_high_watermark(p)):
            yield self.group_finding(
                facts,
                f"{len(members)} partition(s) of {topic} have a committed offset above the high watermark "
                f"(negative lag): the log was truncated or the topic re-created; the consumer will reset",
                limited(
                    [
                        f"{where(p)}: committed {p.committed_offset} > high watermark {p.high_watermark}"
                        for p in members
                    ]
                ),
                topic=topic,
                partitions=[p.partition for p in members],
            )


def _above_high_watermark(partition: PartitionLag) -> bool:
    committed, high_watermark = partition.committed_offset, partition.high_watermark
    return committed is not None and high_watermark is not None and committed > high_watermark
