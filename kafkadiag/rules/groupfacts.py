"""What the lag engine knows of one group when its KD6xx rules judge it (`lag`, `check`, `diagnose`).

The rules themselves are the classes of kd601 ... kd611 (kafkadiag.rules.lagfamily runs them).
Like every rule they do no I/O: the facts are a snapshot already read and the lag computed from it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from kafkadiag.lag.model import PartitionLag
from kafkadiag.lag.snapshot import SOURCE_ZOOKEEPER, GroupMember, GroupSnapshot, TopicLayout
from kafkadiag.rules.base import Finding


@dataclass(frozen=True)
class GroupFacts:
    """One group's snapshot, its partitions' lag, and the topics' layouts."""

    snapshot: GroupSnapshot
    partitions: Sequence[PartitionLag]
    layouts: Mapping[str, TopicLayout]

    @property
    def name(self) -> str:
        return self.snapshot.group

    @property
    def znode(self) -> str:
        """The old consumer's registry of the group in ZooKeeper."""
        return f"/consumers/{self.snapshot.group}"

    @property
    def registered_in_zookeeper(self) -> bool:
        """An old-consumer group that exists: the ownership rules read its znodes."""
        return self.snapshot.source == SOURCE_ZOOKEEPER and bool(self.snapshot.exists)

    @property
    def has_registrations(self) -> bool:
        """An old-consumer group with registered consumers: ownership can be judged."""
        return self.registered_in_zookeeper and bool(self.snapshot.members)

    def live_members(self) -> list[GroupMember]:
        """Registrations that were understood, or at least name a subscription."""
        return [m for m in self.snapshot.members if m.error is None or m.subscription]

    def owned(self) -> dict[tuple[str, int], str]:
        """(topic, partition) -> the owner's name, for partitions with an owner znode."""
        return {(o.topic, o.partition): o.owner for o in self.snapshot.offsets if o.owner}

    def subscriptions(self) -> list[tuple[str, int, list[str]]]:
        """(topic, consumer threads subscribed, one line per subscriber) in topic order."""
        threads: dict[str, int] = defaultdict(int)
        subscribers: dict[str, list[str]] = defaultdict(list)
        for member in self.live_members():
            for topic, count in member.subscription:
                threads[topic] += count
                subscribers[topic].append(f"{member.member_id}: {count} thread(s)")
        return [(topic, threads[topic], subscribers[topic]) for topic in sorted(threads)]

    def partitions_of(self, topic: str) -> set[int] | None:
        """The topic's partitions as registered, or None when its layout is unknown."""
        layout = self.layouts.get(topic)
        if layout is None or layout.error is not None or not layout.partitions:
            return None
        return set(layout.partitions)


def finding_topic(finding: Finding) -> str | None:
    """The topic a KD6xx finding is about, if one (its details say)."""
    topic = finding.details.get("topic")
    return topic if isinstance(topic, str) else None


def finding_partitions(finding: Finding) -> tuple[int, ...]:
    """The partitions a KD6xx finding names (its details say)."""
    partitions = finding.details.get("partitions")
    if not isinstance(partitions, (list, tuple)):
        return ()
    return tuple(partition for partition in partitions if isinstance(partition, int))
