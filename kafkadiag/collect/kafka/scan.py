"""Read Kafka-stored group offsets, group state and members, and partition watermarks.

Read-only and batched, in rounds of requests sent at once (`client`, `rounds`):

- ListGroups: one request per broker (only for --all-groups).
- FindCoordinator: one request for all groups (v4+; one per group on brokers before 3.0)
  (`coordinators`).
- DescribeGroups and OffsetFetch: one request per coordinator covering all its groups
  (OffsetFetch v8+, KIP-709; one request per group on older brokers), in the same round
  (`groups`).
- Metadata: one request for every topic involved, never allowing auto-creation (`metadata`).
- ListOffsets: per leader, one request for the latest offsets and one for the earliest (the
  protocol accepts a partition only once per request), in the same round (`watermarks`).

Nothing here joins a group or commits an offset, and errors stay with the group or partition
they concern.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Sequence
from typing import Any

from kafkadiag.collect.collections_paused import few_collections
from kafkadiag.collect.kafka.errors import error_name
from kafkadiag.collect.kafka.groups import read_groups
from kafkadiag.collect.kafka.requests import ListGroupsRequest
from kafkadiag.collect.kafka.rounds import KafkaScan, Rounds
from kafkadiag.collect.kafka.watermarks import read_watermarks
from kafkadiag.lag.snapshot import CommittedOffset

__all__ = ["KafkaScan", "scan"]


def scan(
    client: Any,
    groups: Sequence[str] | None,
    topics: Sequence[str] | None,
    extra_partitions: dict[str, set[int]],
    timeout_s: float,
    include_groups: bool = True,
) -> KafkaScan:
    """Read Kafka-stored groups (None: every group) and the watermarks of every partition involved.

    `extra_partitions` are partitions that other sources (ZooKeeper) need watermarks for.
    """
    rounds = Rounds(client, time.monotonic() + timeout_s)
    result = KafkaScan()
    requests_before, round_trips_before = client.requests, client.round_trips
    try:
        with few_collections():
            _scan(rounds, result, groups, topics, extra_partitions, include_groups)
    finally:
        result.requests = client.requests - requests_before
        result.round_trips = client.round_trips - round_trips_before
    return result


def _scan(
    rounds: Rounds,
    result: KafkaScan,
    groups: Sequence[str] | None,
    topics: Sequence[str] | None,
    extra_partitions: dict[str, set[int]],
    include_groups: bool,
) -> None:
    topic_filter = set(topics) if topics else None
    offsets_by_group: dict[str, list[CommittedOffset]] = {}
    if include_groups:
        group_ids = list(dict.fromkeys(groups)) if groups is not None else _list_groups(rounds, result)
        if group_ids:
            offsets_by_group = read_groups(rounds, result, group_ids, topic_filter)
    wanted: dict[str, set[int]] = defaultdict(set)
    for topic, partitions in extra_partitions.items():
        wanted[topic].update(partitions)
    for offsets in offsets_by_group.values():
        for offset in offsets:
            wanted[offset.topic].add(offset.partition)
    for topic in topic_filter or ():
        wanted.setdefault(topic, set())
    if wanted:
        read_watermarks(rounds, result, wanted)


def _list_groups(rounds: Rounds, result: KafkaScan) -> list[str]:
    if not rounds.client.accepts(ListGroupsRequest()):
        result.errors.append(
            "the brokers cannot list groups (ListGroups came with Kafka 0.9): groups that commit offsets "
            "to Kafka are read only when named with --group"
        )
        return []
    answers = rounds.send([(broker, broker, ListGroupsRequest()) for broker in sorted(rounds.client.brokers)])
    group_ids: list[str] = []
    for broker, listing, reason in answers:
        problem = reason or (error_name(listing.error_code) if listing is not None else None)
        if problem:
            result.errors.append(f"cannot list groups on broker {broker}: {problem}")
            continue
        for group in listing.groups:
            # "consumer" groups, and "" for groups that only ever committed offsets (no members).
            if group.protocol_type in ("consumer", ""):
                group_ids.append(group.group_id)
    return sorted(set(group_ids))
