"""KD610 `subscription-mismatch`, a rule over one group's offsets and registrations."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import TYPE_CHECKING

from kafkadiag.lag.evidence import limited
from kafkadiag.rules.base import Finding, Severity
from kafkadiag.rules.cluster import LagFindingRule

if TYPE_CHECKING:
    from kafkadiag.rules.groupfacts import GroupFacts


class SubscriptionMismatch(LagFindingRule):
    code = "KD610"
    name = "subscription-mismatch"
    title = "Consumers of one group subscribe differently"
    severity = Severity.ERROR
    explanation = """
Registered consumers of the group subscribe to different topic sets or patterns: each rebalance
computes a different assignment, and rebalances can repeat without end.
"""
    remedy = """
Give every consumer of the group the same subscription, or split them into groups.
"""

    def group_check(self, facts: GroupFacts) -> Iterator[Finding]:
        if not facts.has_registrations:
            return
        live = facts.live_members()
        # Members whose subscriptions disagree: the old consumer then rebalances without end.
        shapes: dict[tuple[tuple[str, ...], str | None], list[str]] = defaultdict(list)
        for member in live:
            topics = tuple(sorted(topic for topic, _ in member.subscription))
            shapes[(topics, member.pattern)].append(member.member_id)
        if len(shapes) > 1:
            evidence = [
                f"{', '.join(topics) or '(nothing)'} ({pattern or 'static'}): {', '.join(sorted(members))}"
                for (topics, pattern), members in sorted(shapes.items())
            ]
            yield self.group_finding(
                facts,
                f"the group's {len(live)} consumers subscribe to different topics: each rebalance "
                f"assigns from a different view, so rebalances can repeat without end",
                limited(evidence),
            )
