"""KD608 `no-owner`, a rule over one group's offsets and registrations."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from kafkadiag.lag.evidence import ranges
from kafkadiag.rules.base import Finding, Severity
from kafkadiag.rules.cluster import LagFindingRule

if TYPE_CHECKING:
    from kafkadiag.rules.groupfacts import GroupFacts


class NoOwner(LagFindingRule):
    code = "KD608"
    name = "no-owner"
    title = "Partitions nobody owns"
    severity = Severity.ERROR
    explanation = """
Consumers are registered, but some partitions of a subscribed topic have no owner: no stream
consumes them (a rebalance gave up after rebalance.max.retries).
"""
    remedy = """
Look for 'can't rebalance after' in the consumers' logs; restart the group's consumers so a
rebalance assigns every partition.
"""

    def group_check(self, facts: GroupFacts) -> Iterator[Finding]:
        if not facts.has_registrations:
            return
        owned = facts.owned()
        for topic, _, _ in facts.subscriptions():
            partitions = facts.partitions_of(topic)
            unowned = sorted(p for p in partitions or () if (topic, p) not in owned)
            if partitions and unowned:
                yield self.group_finding(
                    facts,
                    f"{len(unowned)} of {len(partitions)} partition(s) of {topic} have no owner: "
                    f"nobody consumes them (a rebalance failed or is in progress)",
                    [f"{facts.znode}/owners/{topic}: no node for partition(s) {ranges(unowned)}"],
                    topic=topic,
                    partitions=unowned,
                )
