"""Read Kafka-stored group offsets, group state and members, and partition watermarks.

Read-only and batched, in rounds of requests sent at once (`client`):

- ListGroups: one request per broker (only for --all-groups).
- FindCoordinator: one request for all groups (v4+; one per group on brokers before 3.0).
- DescribeGroups and OffsetFetch: one request per coordinator covering all its groups
  (OffsetFetch v8+, KIP-709; one request per group on older brokers), in the same round.
- Metadata: one request for every topic involved, never allowing auto-creation.
- ListOffsets: per leader, one request for the latest offsets and one for the earliest (the
  protocol accepts a partition only once per request), in the same round.

Nothing here joins a group or commits an offset, and errors stay with the group or partition
they concern.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kafkadiag.collect.collections_paused import few_collections
from kafkadiag.collect.kafka.client import address_text
from kafkadiag.collect.kafka.errors import error_name
from kafkadiag.collect.kafka.members import assigned_partitions, subscribed_topics
from kafkadiag.collect.kafka.requests import (
    EARLIEST,
    LATEST,
    Broker,
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescription,
    ConsumerGroupMember,
    Coordinator,
    DescribedGroup,
    DescribeGroupsRequest,
    FetchedGroup,
    FindCoordinatorRequest,
    ListGroupsRequest,
    ListOffsetsRequest,
    MetadataRequest,
    OffsetFetchRequest,
    by_topic,
)
from kafkadiag.lag.snapshot import (
    SOURCE_KAFKA,
    BrokerPartition,
    CommittedOffset,
    GroupMember,
    GroupSnapshot,
    TopicLayout,
)


@dataclass
class KafkaScan:
    groups: list[GroupSnapshot] = field(default_factory=list)
    partitions: list[BrokerPartition] = field(default_factory=list)
    topics: list[TopicLayout] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    requests: int = 0
    round_trips: int = 0


class _Rounds:
    """Rounds of requests on the client, all bounded by one deadline."""

    def __init__(self, client: Any, deadline: float) -> None:
        self.client = client
        self.deadline = deadline

    def send(self, calls: Sequence[tuple[Any, int | None, Any]]) -> list[tuple[Any, Any, str | None]]:
        """(key, node id or None, request) -> (key, answer, None) or (key, None, reason)."""
        outcomes = self.client.round([(node, request) for _, node, request in calls], self.deadline)
        return [(key, answer, reason) for (key, _, _), (answer, reason) in zip(calls, outcomes)]


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
    rounds = _Rounds(client, time.monotonic() + timeout_s)
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
    rounds: _Rounds,
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
            offsets_by_group = _read_groups(rounds, result, group_ids, topic_filter)
    wanted: dict[str, set[int]] = defaultdict(set)
    for topic, partitions in extra_partitions.items():
        wanted[topic].update(partitions)
    for offsets in offsets_by_group.values():
        for offset in offsets:
            wanted[offset.topic].add(offset.partition)
    for topic in topic_filter or ():
        wanted.setdefault(topic, set())
    if wanted:
        _read_watermarks(rounds, result, wanted)


def _list_groups(rounds: _Rounds, result: KafkaScan) -> list[str]:
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


# Coordinator errors a broker answers while the group's offsets partition is being created or
# loaded (on first use, after a leader change): Kafka's own clients retry them, and so does the
# scan, for at most this long and never past --timeout.
COORDINATOR_RETRY_S = 5.0
COORDINATOR_RETRY_BACKOFF_S = 0.25
_RETRIABLE_COORDINATOR_ERRORS = {14, 15}  # COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE


def _find_coordinators(rounds: _Rounds, result: KafkaScan, group_ids: list[str]) -> dict[str, int | str]:
    """Each group's coordinator node id, or the reason it is unknown."""
    retry_until = min(rounds.deadline, time.monotonic() + COORDINATOR_RETRY_S)
    by_group: dict[str, int | str] = {}
    learned: set[int] = set()  # a few coordinators answer for 1,000s of groups
    pending = list(group_ids)
    while True:
        retriable = []
        for coordinator in _ask_coordinators(rounds, result, pending):
            if coordinator.error_code in _RETRIABLE_COORDINATOR_ERRORS:
                retriable.append(coordinator.key)
            if coordinator.error_code:
                by_group[coordinator.key] = str(error_name(coordinator.error_code))
                continue
            if coordinator.node_id not in learned:
                rounds.client.add_broker(Broker(coordinator.node_id, coordinator.host, coordinator.port))
                learned.add(coordinator.node_id)
            by_group[coordinator.key] = coordinator.node_id
        if not retriable or time.monotonic() + COORDINATOR_RETRY_BACKOFF_S >= retry_until:
            return by_group
        time.sleep(COORDINATOR_RETRY_BACKOFF_S)
        pending = retriable


def _ask_coordinators(rounds: _Rounds, result: KafkaScan, group_ids: list[str]) -> list[Coordinator]:
    if rounds.client.accepts(FindCoordinatorRequest(("", ""))):
        requests: list[tuple[str | None, int | None, Any]] = [
            (None, None, FindCoordinatorRequest(tuple(group_ids)))
        ]
    else:  # a broker before 3.0: one request per group
        requests = [(group, None, FindCoordinatorRequest((group,))) for group in group_ids]
    found: list[Coordinator] = []
    for group, answer, reason in rounds.send(requests):
        if reason is None:
            found += answer
        elif group is None:
            result.errors.append(f"cannot find group coordinators: {reason}")
        else:
            result.errors.append(f"cannot find the coordinator of group {group}: {reason}")
    return found


def _read_groups(
    rounds: _Rounds, result: KafkaScan, group_ids: list[str], topic_filter: set[str] | None
) -> dict[str, list[CommittedOffset]]:
    coordinators = _find_coordinators(rounds, result, group_ids)
    by_coordinator: dict[int, list[str]] = defaultdict(list)
    group_errors: dict[str, list[str]] = defaultdict(list)
    for group in group_ids:
        coordinator = coordinators.get(group)
        if not isinstance(coordinator, int):
            group_errors[group].append(
                _group_problem("no coordinator for the group", coordinator or "not found")
            )
            continue
        by_coordinator[coordinator].append(group)

    partitions_of = _topic_partitions(rounds, result, topic_filter) if topic_filter else None
    if partitions_of is None and by_coordinator and not rounds.client.accepts(OffsetFetchRequest(("",))):
        # Before 0.10.2 OffsetFetch answers only the partitions it is asked about.
        partitions_of = _every_partition(rounds, result)
    batched = rounds.client.accepts(OffsetFetchRequest(("", ""), partitions_of))
    # Before 0.9 brokers kept no group members: there is nothing to describe.
    describes = rounds.client.accepts(DescribeGroupsRequest(("",)))
    # KIP-848 groups are described by their own request, sent beside the classic one: which
    # protocol a group uses is known only from the answers.
    describes_kip_848 = rounds.client.accepts(ConsumerGroupDescribeRequest(("",)))
    calls: list[tuple[Any, int | None, Any]] = []
    for coordinator, coordinated in by_coordinator.items():
        if describes:
            calls.append((("describe", coordinator), coordinator, DescribeGroupsRequest(tuple(coordinated))))
        if describes_kip_848:
            calls.append(
                (("describe-848", coordinator), coordinator, ConsumerGroupDescribeRequest(tuple(coordinated)))
            )
        if batched:
            request = OffsetFetchRequest(tuple(coordinated), partitions_of)
            calls.append((("fetch", coordinator), coordinator, request))
        else:  # a broker before 3.0: one group per request
            for group in coordinated:
                calls.append((("fetch-one", group), coordinator, OffsetFetchRequest((group,), partitions_of)))
    answers = rounds.send(calls)

    descriptions: dict[str, DescribedGroup | ConsumerGroupDescription] = {}
    kip_848: dict[str, ConsumerGroupDescription] = {}
    offsets: dict[str, list[CommittedOffset]] = {}
    for (kind, subject), answer, reason in answers:
        affected = [subject] if kind == "fetch-one" else by_coordinator[subject]
        if kind == "describe-848":
            # Classic groups are answered GROUP_ID_NOT_FOUND: DescribeGroups tells of them.
            kip_848.update(
                (described.group_id, described) for described in answer or () if not described.error_code
            )
            continue
        if reason is not None:
            what = "describe the group" if kind == "describe" else "fetch committed offsets"
            for group in affected:
                group_errors[group].append(f"cannot {what}: {reason}")
            continue
        if kind == "describe":
            descriptions.update((described.group_id, described) for described in answer)
            continue
        for fetched in answer:
            if fetched.error_code:
                group_errors[fetched.group_id].append(
                    _group_problem("cannot fetch committed offsets", error_name(fetched.error_code))
                )
                continue
            offsets[fetched.group_id] = _committed_offsets(fetched, topic_filter)

    for group, described in kip_848.items():
        classic = descriptions.get(group)
        # Apache Kafka calls a KIP-848 group Dead, with no members, in DescribeGroups; a group the
        # classic answer shows alive is a classic group, whatever the other answer says.
        if (
            not isinstance(classic, DescribedGroup)
            or classic.error_code
            or not (classic.members or classic.protocol_type)
        ):
            descriptions[group] = described
    for group in group_ids:
        result.groups.append(
            _group_snapshot(group, descriptions.get(group), offsets.get(group, []), group_errors)
        )
    return offsets


# Errors that mean the principal of --command-config may not look at the group or its topics.
_REFUSED = ("GROUP_AUTHORIZATION_FAILED", "TOPIC_AUTHORIZATION_FAILED")


def _group_problem(what: str, error: str | None) -> str:
    if error in _REFUSED:
        return f"not allowed to describe the group ({error}: the ACLs refuse this principal DESCRIBE)"
    return f"{what}: {error}"


def _group_snapshot(
    group: str,
    description: DescribedGroup | ConsumerGroupDescription | None,
    group_offsets: list[CommittedOffset],
    group_errors: dict[str, list[str]],
) -> GroupSnapshot:
    members: list[GroupMember] = []
    state = protocol = None
    if description is not None:
        if description.error_code:
            group_errors[group].append(
                _group_problem("cannot describe the group", error_name(description.error_code))
            )
        elif isinstance(description, ConsumerGroupDescription):
            state = description.group_state or None
            protocol = KIP_848_PROTOCOL
            members = [_consumer_protocol_member(member) for member in description.members]
        else:
            state = description.group_state or None
            protocol = description.protocol_data or None
            members = [_member(member) for member in description.members]
    owners = {
        (topic, partition): member.member_id for member in members for topic, partition in member.assignment
    }
    if owners:
        group_offsets = _with_owners(group_offsets, owners)
    # A group the coordinator has never heard of is described with no members and no offsets
    # (Apache Kafka says "Dead", other brokers "Empty"): there is nothing to report about it.
    errors = list(group_errors.get(group, ()))
    exists = bool(members or group_offsets) or state not in (None, "", "Dead", "Empty") or bool(errors)
    if not exists:
        errors.append(f"no such group on the brokers (state {state}, no members, no committed offsets)")
    return GroupSnapshot(
        group=group,
        source=SOURCE_KAFKA,
        state=state,
        protocol=protocol,
        members=tuple(members),
        offsets=tuple(group_offsets),
        errors=tuple(errors),
        exists=exists,
    )


def _committed_offsets(fetched: FetchedGroup, topic_filter: set[str] | None) -> list[CommittedOffset]:
    offsets = []
    for topic in fetched.topics:
        if topic_filter is not None and topic.name not in topic_filter:
            continue
        for partition in topic.partitions:
            error = error_name(partition.error_code)
            committed: int | None = partition.committed_offset
            if committed is None or committed < 0:
                if error is None:
                    continue  # -1: nothing committed for this partition (explicit lists ask for it)
                committed = None
            offsets.append(
                CommittedOffset(
                    topic.name,
                    partition.partition_index,
                    committed,
                    error=f"OffsetFetch: {error}" if error else None,
                )
            )
    offsets.sort(key=lambda offset: (offset.topic, offset.partition))
    return offsets


def _with_owners(offsets: list[CommittedOffset], owners: dict[tuple[str, int], str]) -> list[CommittedOffset]:
    known = {(offset.topic, offset.partition) for offset in offsets}
    updated = [offset._replace(owner=owners.get((offset.topic, offset.partition))) for offset in offsets]
    # Assigned partitions with nothing committed yet are part of the group too.
    updated += [
        CommittedOffset(topic=topic, partition=partition, owner=owner)
        for (topic, partition), owner in owners.items()
        if (topic, partition) not in known
    ]
    updated.sort(key=lambda offset: (offset.topic, offset.partition))
    return updated


# The protocol named for a KIP-848 group, whose assignor runs on the broker.
KIP_848_PROTOCOL = "consumer (KIP-848)"


def _consumer_protocol_member(member: ConsumerGroupMember) -> GroupMember:
    return GroupMember(
        member_id=member.member_id,
        client_id=member.client_id or None,
        host=(member.client_host or "").lstrip("/") or None,
        subscription=tuple(sorted((topic, 1) for topic in member.subscribed_topics)),
        assignment=tuple(sorted(member.assignment)),
    )


def _member(member: Any) -> GroupMember:
    subscription: tuple[tuple[str, int], ...] = ()
    assignment: tuple[tuple[str, int], ...] = ()
    error = None
    if member.member_metadata:
        try:
            subscription = tuple(sorted((topic, 1) for topic in subscribed_topics(member.member_metadata)))
        except ValueError:  # a non-consumer protocol, or bytes that are not a subscription
            error = "subscription metadata could not be decoded"
    if member.member_assignment:
        try:
            assignment = tuple(sorted(assigned_partitions(member.member_assignment)))
        except ValueError:
            error = "assignment could not be decoded"
    return GroupMember(
        member_id=member.member_id,
        client_id=member.client_id or None,
        host=(member.client_host or "").lstrip("/") or None,
        subscription=subscription,
        assignment=assignment,
        error=error,
    )


def _topic_partitions(
    rounds: _Rounds, result: KafkaScan, topics: Iterable[str]
) -> tuple[tuple[str, tuple[int, ...]], ...]:
    layouts = _metadata(rounds, result, set(topics))
    return tuple(
        (layout.topic, layout.partitions)
        for layout in sorted(layouts.values(), key=lambda layout: layout.topic)
        if layout.error is None
    )


def _every_partition(rounds: _Rounds, result: KafkaScan) -> tuple[tuple[str, tuple[int, ...]], ...]:
    """Every partition of every topic but Kafka's internal ones (`__consumer_offsets`)."""
    layouts = _metadata(rounds, result, set(), every_topic=True)
    return tuple(
        (layout.topic, layout.partitions)
        for layout in sorted(layouts.values(), key=lambda layout: layout.topic)
        if layout.error is None and not layout.topic.startswith("__")
    )


def _metadata(
    rounds: _Rounds, result: KafkaScan, topics: set[str], every_topic: bool = False
) -> dict[str, TopicLayout]:
    request = MetadataRequest(tuple(sorted(topics)), all_topics=every_topic)
    ((_, metadata, reason),) = rounds.send([(None, None, request)])
    layouts: dict[str, TopicLayout] = {}
    if reason is not None:
        result.errors.append(f"cannot read topic metadata: {reason}")
        for topic in topics:
            layouts[topic] = TopicLayout(topic, SOURCE_KAFKA, error=f"metadata: {reason}")
        return layouts
    for broker in metadata.brokers:
        rounds.client.add_broker(broker)
    for described in metadata.topics:
        topic_error = error_name(described.error_code)
        if topic_error:
            layouts[described.name] = TopicLayout(
                described.name, SOURCE_KAFKA, error=f"metadata: {topic_error}"
            )
            continue
        partitions = sorted(described.partitions, key=lambda partition: partition.partition_index)
        layouts[described.name] = TopicLayout(
            described.name,
            SOURCE_KAFKA,
            partitions=tuple(partition.partition_index for partition in partitions),
            leaders=tuple(
                (partition.partition_index, partition.leader_id if not partition.error_code else -1)
                for partition in partitions
            ),
        )
    for topic in topics:
        layouts.setdefault(topic, TopicLayout(topic, SOURCE_KAFKA, error="metadata: not in the response"))
    return layouts


def _read_watermarks(rounds: _Rounds, result: KafkaScan, wanted: dict[str, set[int]]) -> None:
    layouts = _metadata(rounds, result, set(wanted))
    result.topics.extend(layouts[topic] for topic in sorted(layouts))
    by_leader: dict[int, list[tuple[str, int]]] = defaultdict(list)
    problems: dict[tuple[str, int], str] = {}
    leaders: dict[tuple[str, int], int] = {}
    for topic, partitions in sorted(wanted.items()):
        layout = layouts[topic]
        if layout.error is not None:
            for partition in partitions:
                problems[(topic, partition)] = layout.error
            continue
        leader_of = dict(layout.leaders)
        for partition in sorted(partitions or set(layout.partitions)):
            leader = leader_of.get(partition)
            if leader is None:
                problems[(topic, partition)] = "partition unknown to the brokers' metadata (no leader)"
            elif leader < 0:
                problems[(topic, partition)] = "leader not available"
            else:
                leaders[(topic, partition)] = leader
                by_leader[leader].append((topic, partition))
    calls = [
        ((leader, timestamp), leader, ListOffsetsRequest(by_topic(leader_partitions), timestamp))
        for leader, leader_partitions in sorted(by_leader.items())
        for timestamp in (LATEST, EARLIEST)
    ]
    found: dict[tuple[str, int], dict[int, int]] = defaultdict(dict)
    for (leader, timestamp), answer, reason in rounds.send(calls):
        if reason is not None:
            where = address_text(rounds.client.brokers.get(leader))
            kind = "high watermark" if timestamp == LATEST else "log-start offset"
            for key in by_leader[leader]:
                problems.setdefault(key, f"leader {leader}{where} did not answer for the {kind}: {reason}")
            continue
        for listed in answer:
            key = (listed.topic, listed.partition_index)
            listed_error = error_name(listed.error_code)
            if listed_error:
                problems.setdefault(key, f"ListOffsets on leader {leader}: {listed_error}")
                continue
            if listed.offset < 0:  # ListOffsets v0 may answer an empty list
                problems.setdefault(key, f"ListOffsets on leader {leader}: no offset in the answer")
                continue
            found[key][timestamp] = listed.offset
    for topic, partition in sorted(set(leaders) | set(problems)):
        values = found.get((topic, partition), {})
        result.partitions.append(
            BrokerPartition(
                topic=topic,
                partition=partition,
                leader=leaders.get((topic, partition)),
                high_watermark=values.get(LATEST),
                log_start_offset=values.get(EARLIEST),
                error=problems.get((topic, partition)),
            )
        )
