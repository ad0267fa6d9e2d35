"""kafkadiag's requests as kafka-python's request classes, pinned to the version chosen, and
kafka-python's responses as the answers in `requests` (so the scan never sees kafka-python's
version-dependent message shapes)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafkadiag.collect.kafka import internals
from kafkadiag.collect.kafka import requests as wire


def to_kafka_python(request: Any, version: int) -> Any:
    """kafka-python's request for one of kafkadiag's, pinned to `version`."""
    pinned = {"min_version": version, "max_version": version}
    if isinstance(request, wire.MetadataRequest):
        from kafka.protocol.metadata import MetadataRequest

        topic = MetadataRequest.MetadataRequestTopic
        if request.all_topics or version < request.ASKS_BY_NAME_FROM:
            # Named topics would be created (auto.create.topics.enable): ask for all of them.
            # v0 says "all" with an empty list, v1-v3 with null.
            return MetadataRequest(topics=[] if version == 0 else None, **pinned)
        return MetadataRequest(
            topics=[topic(name=name) for name in request.topics], allow_auto_topic_creation=False, **pinned
        )
    if isinstance(request, wire.ListGroupsRequest):
        from kafka.protocol.admin import ListGroupsRequest

        return ListGroupsRequest(**pinned)
    if isinstance(request, wire.FindCoordinatorRequest):
        from kafka.protocol.metadata import FindCoordinatorRequest

        if version >= request.BATCHED_FROM:
            return FindCoordinatorRequest(key_type=0, coordinator_keys=list(request.keys), **pinned)
        return FindCoordinatorRequest(key=request.keys[0], key_type=0, **pinned)
    if isinstance(request, wire.DescribeGroupsRequest):
        from kafka.protocol.admin import DescribeGroupsRequest

        return DescribeGroupsRequest(
            groups=list(request.groups), include_authorized_operations=False, **pinned
        )
    if isinstance(request, wire.ConsumerGroupDescribeRequest):
        request_class, _ = internals.consumer_group_describe_classes()
        return request_class(group_ids=list(request.groups), include_authorized_operations=False, **pinned)
    if isinstance(request, wire.OffsetFetchRequest):
        return offset_fetch_request(request, version)
    if isinstance(request, wire.ListOffsetsRequest):
        from kafka.protocol.consumer import ListOffsetsRequest

        topic_type = ListOffsetsRequest.ListOffsetsTopic
        partition_type = topic_type.ListOffsetsPartition
        # v0 answers a list of offsets before the timestamp; one is the high watermark (latest)
        # or the log-start offset (earliest).
        extra = {"max_num_offsets": 1} if version == 0 else {}
        topics = [
            topic_type(
                name=name,
                partitions=[
                    partition_type(partition_index=p, timestamp=request.timestamp, **extra) for p in parts
                ],
            )
            for name, parts in request.partitions_of
        ]
        return ListOffsetsRequest(replica_id=-1, isolation_level=0, topics=topics, **pinned)
    raise TypeError(f"no kafka-python request for {type(request).__name__}")


def offset_fetch_request(request: wire.OffsetFetchRequest, version: int) -> Any:
    from kafka.protocol.consumer import OffsetFetchRequest

    pinned = {"min_version": version, "max_version": version}
    if version >= request.BATCHED_FROM:
        group_type = OffsetFetchRequest.OffsetFetchRequestGroup
        topic_type: Any = group_type.OffsetFetchRequestTopics
    else:
        topic_type = OffsetFetchRequest.OffsetFetchRequestTopic
    topics = (
        None
        if request.partitions_of is None
        else [topic_type(name=name, partition_indexes=list(parts)) for name, parts in request.partitions_of]
    )
    if version >= request.BATCHED_FROM:
        return OffsetFetchRequest(
            groups=[group_type(group_id=group, topics=topics) for group in request.groups], **pinned
        )
    return OffsetFetchRequest(group_id=request.groups[0], topics=topics, **pinned)


def to_answer(request: Any, version: int, response: Any) -> Any:
    """kafka-python's response as the `requests` answer for kafkadiag's request."""
    convert = _ANSWERS.get(type(request))
    if convert is None:
        raise TypeError(f"no conversion for {type(request).__name__}")
    return convert(request, version, response)


def _cluster_metadata(request: wire.MetadataRequest, version: int, response: Any) -> wire.ClusterMetadata:
    wanted = None if request.all_topics else set(request.topics)
    return wire.ClusterMetadata(
        [wire.Broker(b.node_id, b.host, b.port) for b in response.brokers],
        [
            wire.TopicMetadata(
                t.name,
                t.error_code,
                [wire.PartitionMetadata(p.partition_index, p.leader_id, p.error_code) for p in t.partitions],
            )
            for t in response.topics
            if wanted is None or t.name in wanted
        ],
    )


def _group_listing(request: wire.ListGroupsRequest, version: int, response: Any) -> wire.GroupListing:
    return wire.GroupListing(
        response.error_code,
        [wire.ListedGroup(g.group_id, g.protocol_type or "") for g in response.groups],
    )


def _coordinators(
    request: wire.FindCoordinatorRequest, version: int, response: Any
) -> list[wire.Coordinator]:
    if version >= request.BATCHED_FROM:
        return [
            wire.Coordinator(c.key, c.error_code, c.node_id, c.host, c.port) for c in response.coordinators
        ]
    r = response
    return [wire.Coordinator(request.keys[0], r.error_code, r.node_id, r.host, r.port)]


def _described_groups(
    request: wire.DescribeGroupsRequest, version: int, response: Any
) -> list[wire.DescribedGroup]:
    return [
        wire.DescribedGroup(
            g.group_id,
            g.error_code,
            g.group_state or "",
            g.protocol_type or "",
            g.protocol_data or "",
            [
                wire.DescribedMember(
                    m.member_id,
                    m.client_id or "",
                    m.client_host or "",
                    bytes(m.member_metadata or b""),
                    bytes(m.member_assignment or b""),
                )
                for m in g.members
            ],
        )
        for g in response.groups
    ]


def _consumer_group_descriptions(
    request: wire.ConsumerGroupDescribeRequest, version: int, response: Any
) -> list[wire.ConsumerGroupDescription]:
    return [
        wire.ConsumerGroupDescription(
            g.group_id,
            g.error_code,
            g.group_state or "",
            [
                wire.ConsumerGroupMember(
                    m.member_id,
                    m.client_id or "",
                    m.client_host or "",
                    list(m.subscribed_topic_names or []),
                    [
                        (topic.topic_name, partition)
                        for topic in m.assignment.topic_partitions
                        for partition in topic.partitions
                    ],
                )
                for m in g.members
            ],
        )
        for g in response.groups
    ]


def _fetched_groups(request: wire.OffsetFetchRequest, version: int, response: Any) -> list[wire.FetchedGroup]:
    batched = version >= request.BATCHED_FROM
    groups = response.groups if batched else [response]
    return [
        wire.FetchedGroup(
            group.group_id if batched else request.groups[0],
            getattr(group, "error_code", 0) or 0,
            [
                wire.FetchedTopic(
                    t.name,
                    [
                        wire.FetchedPartition(p.partition_index, p.committed_offset, p.error_code)
                        for p in t.partitions
                    ],
                )
                for t in group.topics
            ],
        )
        for group in groups
    ]


def _listed_offsets(request: wire.ListOffsetsRequest, version: int, response: Any) -> list[wire.ListedOffset]:
    return [
        wire.ListedOffset(t.name, p.partition_index, p.error_code, _listed_offset(p, version))
        for t in response.topics
        for p in t.partitions
    ]


# One conversion per request kind, looked up by the request's exact class.
_ANSWERS: dict[type, Callable[[Any, int, Any], Any]] = {
    wire.MetadataRequest: _cluster_metadata,
    wire.ListGroupsRequest: _group_listing,
    wire.FindCoordinatorRequest: _coordinators,
    wire.DescribeGroupsRequest: _described_groups,
    wire.ConsumerGroupDescribeRequest: _consumer_group_descriptions,
    wire.OffsetFetchRequest: _fetched_groups,
    wire.ListOffsetsRequest: _listed_offsets,
}


def _listed_offset(partition: Any, version: int) -> int:
    if version > 0:
        return int(partition.offset)
    offsets = partition.old_style_offsets or []
    return int(offsets[0]) if offsets else -1
