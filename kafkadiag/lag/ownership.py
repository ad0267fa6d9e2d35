"""Ownership checks for the old (ZooKeeper) consumer, and the offset checks for every group.

Each check quotes its evidence (znode paths and values) so a reader can verify it in zkCli.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from kafkadiag.digits import all_ascii_digits
from kafkadiag.lag.model import SEVERITY_ERROR, SEVERITY_INFO, SEVERITY_WARNING, Finding
from kafkadiag.lag.snapshot import SOURCE_ZOOKEEPER, GroupSnapshot, TopicLayout

# Listing at most this many partitions or nodes in one finding's evidence keeps reports readable.
EVIDENCE_LIMIT = 20


def _ranges(numbers: Iterable[int]) -> str:
    """[0, 1, 2, 5, 7, 8] -> "0-2, 5, 7-8"."""
    ordered = sorted(set(numbers))
    parts: list[str] = []
    start = previous = None
    for number in ordered:
        if start is None:
            start = previous = number
        elif previous is not None and number == previous + 1:
            previous = number
        else:
            parts.append(f"{start}" if start == previous else f"{start}-{previous}")
            start = previous = number
    if start is not None:
        parts.append(f"{start}" if start == previous else f"{start}-{previous}")
    return ", ".join(parts)


def _limited(lines: list[str]) -> tuple[str, ...]:
    if len(lines) <= EVIDENCE_LIMIT:
        return tuple(lines)
    return (*lines[:EVIDENCE_LIMIT], f"... and {len(lines) - EVIDENCE_LIMIT} more")


def consumer_of_owner(owner: str) -> str:
    """ "<consumerId>-<threadNo>" -> "<consumerId>"."""
    head, dash, thread = owner.rpartition("-")
    return head if dash and all_ascii_digits(thread) else owner


def ownership_findings(group: GroupSnapshot, layouts: dict[str, TopicLayout]) -> list[Finding]:
    if group.source != SOURCE_ZOOKEEPER or not group.exists:
        return []
    findings: list[Finding] = []
    base = f"/consumers/{group.group}"
    name = group.group
    live = [member for member in group.members if member.error is None or member.subscription]
    registered = {member.member_id for member in group.members}

    for member in group.members:
        if member.error is not None:
            evidence = [member.error]
            if member.raw_value is not None:
                evidence.append(f"{member.path} = {member.raw_value!r}")
            findings.append(
                Finding(
                    "malformed-registration",
                    SEVERITY_WARNING,
                    name,
                    f"consumer registration {member.member_id} could not be understood",
                    evidence=tuple(evidence),
                )
            )

    has_offsets = any(offset.offset is not None for offset in group.offsets)
    if not group.members:
        if has_offsets:
            topics = sorted({offset.topic for offset in group.offsets if offset.offset is not None})
            findings.append(
                Finding(
                    "offsets-without-consumer",
                    SEVERITY_WARNING,
                    name,
                    f"group has committed offsets for {', '.join(topics)} but no live consumer "
                    f"({base}/ids is empty): nothing is consuming",
                    evidence=(f"{base}/ids: no children",),
                )
            )
        return findings

    owned = {(offset.topic, offset.partition): offset for offset in group.offsets if offset.owner}
    # Owners whose consumer id has no registration in /ids.
    orphans: dict[str, list[str]] = defaultdict(list)
    for (topic, partition), offset in sorted(owned.items()):
        assert offset.owner is not None
        if consumer_of_owner(offset.owner) not in registered:
            orphans[offset.owner].append(f"{base}/owners/{topic}/{partition} = {offset.owner!r}")
    for owner, evidence in sorted(orphans.items()):
        findings.append(
            Finding(
                "unregistered-owner",
                SEVERITY_ERROR,
                name,
                f"{len(evidence)} partition(s) owned by {owner}, whose consumer {consumer_of_owner(owner)} "
                f"is not registered in {base}/ids: a dead consumer's claim that blocks a rebalance",
                evidence=_limited(evidence),
            )
        )

    # Threads per topic from the registrations, against the topic's partition count.
    threads_by_topic: dict[str, int] = defaultdict(int)
    subscribers: dict[str, list[str]] = defaultdict(list)
    for member in live:
        for topic, threads in member.subscription:
            threads_by_topic[topic] += threads
            subscribers[topic].append(f"{member.member_id}: {threads} thread(s)")
    for topic, threads in sorted(threads_by_topic.items()):
        layout = layouts.get(topic)
        if layout is None or layout.error is not None or not layout.partitions:
            continue
        partitions = set(layout.partitions)
        unowned = sorted(partition for partition in partitions if (topic, partition) not in owned)
        if unowned:
            findings.append(
                Finding(
                    "no-owner",
                    SEVERITY_ERROR,
                    name,
                    f"{len(unowned)} of {len(partitions)} partition(s) of {topic} have no owner: "
                    f"nobody consumes them (a rebalance failed or is in progress)",
                    topic=topic,
                    partitions=tuple(unowned),
                    evidence=(f"{base}/owners/{topic}: no node for partition(s) {_ranges(unowned)}",),
                )
            )
        if threads > len(partitions):
            findings.append(
                Finding(
                    "idle-threads",
                    SEVERITY_INFO,
                    name,
                    f"{threads} consumer threads subscribe to {topic}, which has {len(partitions)} "
                    f"partition(s): {threads - len(partitions)} thread(s) get nothing to consume",
                    topic=topic,
                    evidence=_limited(
                        subscribers[topic] + [f"/brokers/topics/{topic}: {len(partitions)} partitions"]
                    ),
                )
            )

    # Members whose subscriptions disagree: the old consumer then rebalances without end.
    shapes: dict[tuple[tuple[str, ...], str | None], list[str]] = defaultdict(list)
    for member in live:
        shapes[(tuple(sorted(topic for topic, _ in member.subscription)), member.pattern)].append(
            member.member_id
        )
    if len(shapes) > 1:
        evidence = [
            f"{', '.join(topics) or '(nothing)'} ({pattern or 'static'}): {', '.join(sorted(members))}"
            for (topics, pattern), members in sorted(shapes.items())
        ]
        findings.append(
            Finding(
                "subscription-mismatch",
                SEVERITY_ERROR,
                name,
                f"the group's {len(live)} consumers subscribe to different topics: each rebalance "
                f"assigns from a different view, so rebalances can repeat without end",
                evidence=_limited(evidence),
            )
        )

    without_offset = sorted(
        (offset.topic, offset.partition)
        for offset in owned.values()
        if offset.offset is None and offset.error is None
    )
    if without_offset:
        by_topic: dict[str, list[int]] = defaultdict(list)
        for topic, partition in without_offset:
            by_topic[topic].append(partition)
        for topic, partitions_list in sorted(by_topic.items()):
            findings.append(
                Finding(
                    "owned-without-offset",
                    SEVERITY_WARNING,
                    name,
                    f"{len(partitions_list)} owned partition(s) of {topic} have no offset node: the "
                    f"owner has not committed yet, or cannot (auto.offset.reset decides where it starts)",
                    topic=topic,
                    partitions=tuple(partitions_list),
                    evidence=(
                        f"{base}/offsets/{topic}: no node for partition(s) {_ranges(partitions_list)}",
                    ),
                )
            )
    return findings
