"""KD612 `lag-without-active-member`, a rule over one group's offsets and members."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from kafkadiag.lag.evidence import limited, where
from kafkadiag.lag.snapshot import SOURCE_KAFKA
from kafkadiag.rules.base import Finding, Severity
from kafkadiag.rules.cluster import LagFindingRule

if TYPE_CHECKING:
    from kafkadiag.rules.groupfacts import GroupFacts


# DescribeGroups' states of a group without members (ConsumerGroupDescribe says them in lower case).
MEMBERLESS_STATES = ("empty", "dead")


class LagWithoutActiveMember(LagFindingRule):
    code = "KD612"
    name = "lag-without-active-member"
    title = "Lag and no member consuming it"
    severity = Severity.WARNING
    explanation = """
The group has lag, and the group coordinator (DescribeGroups) lists no member: the group is Empty
(or Dead), so nothing consumes its partitions and the lag only grows with every produced record.
One reading is enough to say so: no member, no consumption.
"""
    remedy = """
Start the group's consumers (and see why they stopped: their logs, their exit), or delete the
group's offsets if it is retired.
"""

    def group_check(self, facts: GroupFacts) -> Iterator[Finding]:
        snapshot = facts.snapshot
        if snapshot.source != SOURCE_KAFKA or not snapshot.exists or snapshot.members:
            return
        # The coordinator's word that nobody is in the group, not only an empty member list: a
        # group whose state was not read is not judged.
        if (snapshot.state or "").lower() not in MEMBERLESS_STATES:
            return
        lagging = [p for p in facts.partitions if p.lag is not None and p.lag > 0]
        if not lagging:
            return
        state = snapshot.state
        total = sum(p.lag for p in lagging if p.lag is not None)
        yield self.group_finding(
            facts,
            f"group is {state} with 0 members and lag {total} over {len(lagging)} partition(s): "
            f"nothing is consuming",
            [
                f"DescribeGroups: state {state}, 0 members",
                *limited(
                    [
                        f"{where(p)}: committed {p.committed_offset}, high watermark {p.high_watermark}, "
                        f"lag {p.lag}"
                        for p in lagging
                    ]
                ),
            ],
        )
