"""Kafka-stored groups: their state and members, and their committed offsets.

DescribeGroups and OffsetFetch go to each group's coordinator, one request per coordinator
covering all its groups (OffsetFetch v8+, KIP-709; one request per group on older brokers), in
the same round; KIP-848 groups are described by ConsumerGroupDescribe beside them. Errors stay
with the group they concern.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from kafkadiag.collect.kafka.coordinators import find_coordinators
from kafkadiag.collect.kafka.errors import error_name
from kafkadiag.collect.kafka.members import classic_member, consumer_protocol_member
from kafkadiag.collect.kafka.metadata import Partitions, every_partition, topic_partitions
from kafkadiag.collect.kafka.requests import (
    ConsumerGroupDescribeRequest,
    ConsumerGroupDescription,
    DescribedGroup,
    DescribeGroupsRequest,
    FetchedGroup,
    OffsetFetchRequest,
)
from kafkadiag.collect.kafka.rounds import KafkaScan, Rounds
from kafkadiag.lag.snapshot import SOURCE_KAFKA, CommittedOffset, GroupMember, GroupSnapshot

# The protocol named for a KIP-848 group, whose assignor runs on the broker.
KIP_848_PROTOCOL = "consumer (KIP-848)"
# Errors that mean the principal of --command-config may not look at the group or its topics.
_REFUSED = ("GROUP_AUTHORIZATION_FAILED", "TOPIC_AUTHORIZATION_FAILED")

Description = DescribedGroup | ConsumerGroupDescription


def read_groups(
    rounds: Rounds, result: KafkaScan, group_ids: list[str], topic_filter: set[str] | None
) -> dict[str, list[CommittedOffset]]:
    """Each group's snapshot into `result`; the committed offsets read, by group."""
    group_errors: dict[str, list[str]] = defaultdict(list)
    by_coordinator = _by_coordinator(find_coordinators(rounds, result, group_ids), group_ids, group_errors)
    answers = rounds.send(_group_calls(rounds, result, by_coordinator, topic_filter))
    descriptions, kip_848, offsets = _read_answers(answers, by_coordinator, topic_filter, group_errors)
    _prefer_kip_848(descriptions, kip_848)
    for group in group_ids:
        result.groups.append(
            _group_snapshot(group, descriptions.get(group), offsets.get(group, []), group_errors)
        )
    return offsets


def _by_coordinator(
    coordinators: dict[str, int | str], group_ids: list[str], group_errors: dict[str, list[str]]
) -> dict[int, list[str]]:
    """The groups of each coordinator; a group without one gets the reason in `group_errors`."""
    by_coordinator: dict[int, list[str]] = defaultdict(list)
    for group in group_ids:
        coordinator = coordinators.get(group)
        if not isinstance(coordinator, int):
            group_errors[group].append(
                _group_problem("no coordinator for the group", coordinator or "not found")
            )
            continue
        by_coordinator[coordinator].append(group)
    return by_coordinator


def _group_calls(
    rounds: Rounds, result: KafkaScan, by_coordinator: dict[int, list[str]], topic_filter: set[str] | None
) -> list[tuple[Any, int | None, Any]]:
    """The describes and offset fetches of one round, keyed by (kind, coordinator or group)."""
    partitions_of: Partitions | None = (
        topic_partitions(rounds, result, topic_filter) if topic_filter else None
    )
    if partitions_of is None and by_coordinator and not rounds.client.accepts(OffsetFetchRequest(("",))):
        # Before 0.10.2 OffsetFetch answers only the partitions it is asked about.
        partitions_of = every_partition(rounds, result)
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
    return calls


def _read_answers(
    answers: list[tuple[Any, Any, str | None]],
    by_coordinator: dict[int, list[str]],
    topic_filter: set[str] | None,
    group_errors: dict[str, list[str]],
) -> tuple[dict[str, Description], dict[str, ConsumerGroupDescription], dict[str, list[CommittedOffset]]]:
    """The classic descriptions, the KIP-848 ones and the committed offsets, by group; every
    failure goes to `group_errors`."""
    descriptions: dict[str, Description] = {}
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
    return descriptions, kip_848, offsets


def _prefer_kip_848(
    descriptions: dict[str, Description], kip_848: dict[str, ConsumerGroupDescription]
) -> None:
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


def _group_problem(what: str, error: str | None) -> str:
    if error in _REFUSED:
        return f"not allowed to describe the group ({error}: the ACLs refuse this principal DESCRIBE)"
    return f"{what}: {error}"


def _group_snapshot(
    group: str,
    description: Description | None,
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
            members = [consumer_protocol_member(member) for member in description.members]
        else:
            state = description.group_state or None
            protocol = description.protocol_data or None
            members = [classic_member(member) for member in description.members]
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
