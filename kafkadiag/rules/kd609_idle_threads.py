"""KD609 `idle-threads`, a rule over one group's offsets and registrations."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING

from kafkadiag.lag.evidence import limited
from kafkadiag.rules.base import Finding, Severity
from kafkadiag.rules.cluster import LagFindingRule

if TYPE_CHECKING:
    from kafkadiag.rules.groupfacts import GroupFacts


class IdleThreads(LagFindingRule):
    code = "KD609"
    name = "idle-threads"
    title = "More consumer threads than partitions"
    severity = Severity.INFO
    explanation = """
More consumer threads subscribe to a topic than it has partitions: the extra threads own nothing
and stay idle.
"""
    remedy = """
Lower the topic's stream count in createMessageStreams, or add partitions to the topic.
"""

    def group_check(self, facts: GroupFacts) -> Iterator[Finding]:
        if not facts.has_registrations:
            return
        for topic, threads, subscribers in facts.subscriptions():
            partitions = facts.partitions_of(topic)
            if partitions and threads > len(partitions):
                yield self.group_finding(
                    facts,
                    f"{threads} consumer threads subscribe to {topic}, which has {len(partitions)} "
                    f"partition(s): {threads - len(partitions)} thread(s) get nothing to consume",
                    limited([*subscribers, f"/brokers/topics/{topic}: {len(partitions)} partitions"]),
                    topic=topic,
                )
