"""A group member's subscription and assignment, decoded with kafka-python's consumer protocol
(ConsumerProtocolSubscription / ConsumerProtocolAssignment, every version)."""

from __future__ import annotations

from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment, ConsumerProtocolSubscription


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
