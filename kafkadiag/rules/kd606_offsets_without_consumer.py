"""KD606 `offsets-without-consumer`, a rule over one group's offsets and registrations."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from kafkadiag.rules.base import Finding, Severity
from kafkadiag.rules.cluster import LagFindingRule

if TYPE_CHECKING:
    from kafkadiag.rules.groupfacts import GroupFacts


class OffsetsWithoutConsumer(LagFindingRule):
    code = "KD606"
    name = "offsets-without-consumer"
    title = "Offsets but no live consumer"
    severity = Severity.WARNING
    explanation = """
The group has committed offsets but no registered consumer: nothing consumes, and the lag grows
with every produced record.
"""
    remedy = """
Start the group's consumers, or delete the group's offsets if it is retired.
"""

    def group_check(self, facts: GroupFacts) -> Iterator[Finding]:
        if not facts.registered_in_zookeeper or facts.snapshot.members:
            return
        topics = sorted({o.topic for o in facts.snapshot.offsets if o.offset is not None})
        if topics:
            yield self.group_finding(
                facts,
                f"group has committed offsets for {', '.join(topics)} but no live consumer "
                f"({facts.znode}/ids is empty): nothing is consuming",
                [f"{facts.znode}/ids: no children"],
            )
