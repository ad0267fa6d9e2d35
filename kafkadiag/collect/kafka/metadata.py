"""Topic layouts from one Metadata request, never allowing the topics' auto-creation; the brokers
it names become known to the client."""

from __future__ import annotations

from collections.abc import Iterable

from kafkadiag.collect.kafka.errors import error_name
from kafkadiag.collect.kafka.requests import MetadataRequest
from kafkadiag.collect.kafka.rounds import KafkaScan, Rounds
from kafkadiag.lag.snapshot import SOURCE_KAFKA, TopicLayout

# (topic, its partitions) pairs, in topic order: what OffsetFetch is asked about.
Partitions = tuple[tuple[str, tuple[int, ...]], ...]


def topic_partitions(rounds: Rounds, result: KafkaScan, topics: Iterable[str]) -> Partitions:
    layouts = metadata(rounds, result, set(topics))
    return tuple(
        (layout.topic, layout.partitions)
        for layout in sorted(layouts.values(), key=lambda layout: layout.topic)
        if layout.error is None
    )


def every_partition(rounds: Rounds, result: KafkaScan) -> Partitions:
    """Every partition of every topic but Kafka's internal ones (`__consumer_offsets`)."""
    layouts = metadata(rounds, result, set(), every_topic=True)
    return tuple(
        (layout.topic, layout.partitions)
        for layout in sorted(layouts.values(), key=lambda layout: layout.topic)
        if layout.error is None and not layout.topic.startswith("__")
    )


def metadata(
    rounds: Rounds, result: KafkaScan, topics: set[str], every_topic: bool = False
) -> dict[str, TopicLayout]:
    request = MetadataRequest(tuple(sorted(topics)), all_topics=every_topic)
    ((_, answer, reason),) = rounds.send([(None, None, request)])
    layouts: dict[str, TopicLayout] = {}
    if reason is not None:
        result.errors.append(f"cannot read topic metadata: {reason}")
        for topic in topics:
            layouts[topic] = TopicLayout(topic, SOURCE_KAFKA, error=f"metadata: {reason}")
        return layouts
    for broker in answer.brokers:
        rounds.client.add_broker(broker)
    for described in answer.topics:
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
