"""KD607 `unregistered-owner`, a rule over one group's offsets and registrations."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import TYPE_CHECKING

from kafkadiag.lag.evidence import consumer_of_owner, limited
from kafkadiag.rules.base import Finding, Severity
from kafkadiag.rules.cluster import LagFindingRule

if TYPE_CHECKING:
    from kafkadiag.rules.groupfacts import GroupFacts


class UnregisteredOwner(LagFindingRule):
    code = "KD607"
    name = "unregistered-owner"
    title = "Partition owned by a consumer that is gone"
    severity = Severity.ERROR
    explanation = """
An owner znode names a consumer id that has no registration: a dead consumer's claim. The live
consumers cannot take the partition, so rebalances fail and the partition is not consumed.
"""
    remedy = """
Wait for the dead consumer's ZooKeeper session to expire; if the claim persists, stop the group
and remove the stale owner znode.
"""

    def group_check(self, facts: GroupFacts) -> Iterator[Finding]:
        if not facts.has_registrations:
            return
        registered = {member.member_id for member in facts.snapshot.members}
        # Owners whose consumer id has no registration in /ids.
        orphans: dict[str, list[str]] = defaultdict(list)
        for (topic, partition), owner in sorted(facts.owned().items()):
            if consumer_of_owner(owner) not in registered:
                orphans[owner].append(f"{facts.znode}/owners/{topic}/{partition} = {owner!r}")
        for owner, evidence in sorted(orphans.items()):
            yield self.group_finding(
                facts,
                f"{len(evidence)} partition(s) owned by {owner}, whose consumer {consumer_of_owner(owner)} "
                f"is not registered in {facts.znode}/ids: a dead consumer's claim that blocks a rebalance",
                limited(evidence),
            )
