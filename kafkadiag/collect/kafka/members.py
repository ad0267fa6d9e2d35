"""A group member's subscription and assignment, decoded with kafka-python's consumer protocol
(ConsumerProtocolSubscription / ConsumerProtocolAssignment, every version), and the members of
DescribeGroups and ConsumerGroupDescribe answers as the snapshot's members."""

from __future__ import annotations

from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment, ConsumerProtocolSubscription

from kafkadiag.collect.kafka.requests import ConsumerGroupMember, DescribedMember
from kafkadiag.lag.snapshot import GroupMember


def subscribed_topics(metadata: bytes) -> list[str]:
    """The topics of a consumer's subscription; ValueError for bytes that are not one."""
    try:
        return [str(topic) for topic in ConsumerProtocolSubscription.decode(metadata).topics]
    except Exception as error:  # noqa: BLE001 - kafka-python raises struct.error, ValueError, ...
        raise ValueError(f"not a consumer subscription: {error}") from None


def assigned_partitions(assignment: bytes) -> list[tuple[str, int]]:
    """The (topic, partition) pairs of a consumer's assignment; ValueError for bytes that are not one."""
    try:
        decoded = ConsumerProtocolAssignment.decode(assignment)
        return [
            (str(entry.topic), int(partition))
            for entry in decoded.assigned_partitions
            for partition in entry.partitions
        ]
    except Exception as error:  # noqa: BLE001 - as above
        raise ValueError(f"not a consumer assignment: {error}") from None


def classic_member(member: DescribedMember) -> GroupMember:
    """A classic group's member, from its DescribeGroups entry; bytes that do not decode are
    kept as the member's error."""
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


def consumer_protocol_member(member: ConsumerGroupMember) -> GroupMember:
    """A KIP-848 group's member, from its ConsumerGroupDescribe entry (nothing to decode)."""
    return GroupMember(
        member_id=member.member_id,
        client_id=member.client_id or None,
        host=(member.client_host or "").lstrip("/") or None,
        subscription=tuple(sorted((topic, 1) for topic in member.subscribed_topics)),
        assignment=tuple(sorted(member.assignment)),
    )
