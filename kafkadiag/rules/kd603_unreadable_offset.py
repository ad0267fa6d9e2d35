"""KD603 `unreadable-offset`, a rule over one group's offsets and registrations."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from kafkadiag.lag.evidence import limited
from kafkadiag.rules.base import Finding, Severity
from kafkadiag.rules.cluster import LagFindingRule

if TYPE_CHECKING:
    from kafkadiag.rules.groupfacts import GroupFacts


class UnreadableOffset(LagFindingRule):
    code = "KD603"
    name = "unreadable-offset"
    title = "Committed offset that could not be read"
    severity = Severity.ERROR
    explanation = """
An offset znode (or a Kafka-stored offset) is not a plain decimal number, or could not be read:
tools disagree on such a value and the consumer may fail to start from it.
"""
    remedy = """
Quote the raw value (in the evidence) to whoever owns the group; rewrite the offset with the
consumer stopped, using the tool the group's consumer version expects.
"""

    def group_check(self, facts: GroupFacts) -> Iterator[Finding]:
        unreadable = [
            p
            for p in facts.partitions
            if p.committed_offset is None and any("offset" in problem for problem in p.problems)
        ]
        if unreadable:
            yield self.group_finding(
                facts,
                f"{len(unreadable)} partition(s) have a committed offset that could not be read "
                "or understood",
                limited([problem for p in unreadable for problem in p.problems]),
            )
