"""KD605 `malformed-registration`, a rule over one group's offsets and registrations."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from kafkadiag.rules.base import Finding, Severity
from kafkadiag.rules.cluster import LagFindingRule

if TYPE_CHECKING:
    from kafkadiag.rules.groupfacts import GroupFacts


class MalformedRegistration(LagFindingRule):
    code = "KD605"
    name = "malformed-registration"
    title = "Consumer registration that is not one"
    severity = Severity.WARNING
    explanation = """
A znode under /consumers/<group>/ids is not a consumer registration as ZookeeperConsumerConnector
writes it: rebalances may fail to parse it.
"""
    remedy = """
Identify the process that wrote it (the value is quoted) and remove it with every consumer of the
group stopped.
"""

    def group_check(self, facts: GroupFacts) -> Iterator[Finding]:
        if not facts.registered_in_zookeeper:
            return
        for member in facts.snapshot.members:
            if member.error is None:
                continue
            evidence = [member.error]
            if member.raw_value is not None:
                evidence.append(f"{member.path} = {member.raw_value!r}")
            yield self.group_finding(
                facts, f"consumer registration {member.member_id} could not be understood", evidence
            )
