"""The scan's client over kafka-python, for SASL GSSAPI and OAUTHBEARER, which kafkadiag's own
client (`kafka_wire`) does not speak.

It offers what `WireClient` offers (brokers, accepts, round, add_broker, close, counters) and
answers with the same `kafka_protocol` tuples, so the scan does not know which one it uses.
The request versions are chosen by the same preferences and pinned on kafka-python's requests.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence
from typing import Any

from kafkadiag.collect import kafka_protocol as wire
from kafkadiag.collect.kafka_wire import NO_ANSWER


class KafkaPythonClient:
    def __init__(self, bootstrap_servers: str, config: dict[str, Any], timeout_s: float) -> None:
        from kafka import KafkaAdminClient

        timeout_ms = max(int(timeout_s * 1000), 100)
        # kafka-python logs every failed attempt at ERROR: kafkadiag reports the outcome, once.
        logging.getLogger("kafka").setLevel(logging.CRITICAL)
        self.admin = KafkaAdminClient(
            **{
                "client_id": "kafkadiag",
                "request_timeout_ms": timeout_ms,
                "bootstrap_timeout_ms": timeout_ms,
                "reconnect_backoff_max_ms": 1000,
                "metadata_max_age_ms": 24 * 3600 * 1000,  # one scan: no background refresh
                **config,
                "bootstrap_servers": bootstrap_servers,
            }
        )
        self.manager = self.admin._manager
        self.requests = 0
        self.round_trips = 0

    @property
    def brokers(self) -> dict[int, tuple[str, int]]:
        return {broker.node_id: (broker.host, broker.port) for broker in self.manager.cluster.brokers()}

    def _accepted(self) -> dict[int, tuple[int, int]]:
        return dict(self.manager.broker_version_data.api_versions)

    def accepts(self, request: Any) -> bool:
        try:
            wire.pick_version(request, self._accepted())
        except wire.UnsupportedVersionError:
            return False
        return True

    def add_broker(self, broker: wire.Broker) -> None:
        from kafka.protocol.metadata import CoordinatorType

        cluster = self.manager.cluster
        if cluster.broker_metadata(broker.node_id) is None:
            answer = wire.Coordinator(str(broker.node_id), 0, broker.node_id, broker.host, broker.port)
            cluster.add_coordinator(answer, CoordinatorType.GROUP, answer.key, synthesize_node_id=False)

    def round(self, calls: Sequence[tuple[int | None, Any]], deadline: float) -> list[tuple[Any, str | None]]:
        if not calls:
            return []
        self.requests += len(calls)
        self.round_trips += 1
        accepted = self._accepted()
        return list(self.manager.run(self._round, calls, accepted, deadline))

    async def _round(
        self, calls: Sequence[tuple[int | None, Any]], accepted: dict[int, tuple[int, int]], deadline: float
    ) -> list[tuple[Any, str | None]]:
        sent: list[tuple[Any, int, Any, str | None]] = []
        for node, request in calls:
            try:
                version = wire.pick_version(request, accepted)
            except wire.UnsupportedVersionError as error:
                sent.append((request, -1, None, str(error)))
                continue
            future = self.manager.send(_translate(request, version), node_id=node)
            sent.append((request, version, future, None))
        outcomes: list[tuple[Any, str | None]] = []
        for request, version, future, reason in sent:
            if reason is not None:
                outcomes.append((None, reason))
                continue
            try:
                remaining_ms = max((deadline - time.monotonic()) * 1000, 1)
                response = await self.manager.wait_for(future, remaining_ms)
                outcomes.append((_convert(request, version, response), None))
            except Exception as error:  # noqa: BLE001 - kept per request
                outcomes.append((None, _describe(error)))
        return outcomes

    def close(self) -> None:
        self.admin.close()


def _describe(error: Exception) -> str:
    name = type(error).__name__
    if name == "KafkaTimeoutError":
        return NO_ANSWER
    text = str(error)
    return f"{name}: {text}" if text and text != name else name


def _translate(request: Any, version: int) -> Any:
    """kafka-python's request for one of kafkadiag's, pinned to `version`."""
    pinned = {"min_version": version, "max_version": version}
    if isinstance(request, wire.MetadataRequest):
        from kafka.protocol.metadata import MetadataRequest

        topic = MetadataRequest.MetadataRequestTopic
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
    if isinstance(request, wire.OffsetFetchRequest):
        return _offset_fetch(request, version)
    if isinstance(request, wire.ListOffsetsRequest):
        from kafka.protocol.consumer import ListOffsetsRequest

        topic_type = ListOffsetsRequest.ListOffsetsTopic
        partition_type = topic_type.ListOffsetsPartition
        topics = [
            topic_type(
                name=name,
                partitions=[partition_type(partition_index=p, timestamp=request.timestamp) for p in parts],
            )
            for name, parts in request.partitions_of
        ]
        return ListOffsetsRequest(replica_id=-1, isolation_level=0, topics=topics, **pinned)
    raise TypeError(f"no kafka-python request for {type(request).__name__}")


def _offset_fetch(request: wire.OffsetFetchRequest, version: int) -> Any:
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


def _convert(request: Any, version: int, response: Any) -> Any:
    """kafka-python's response as the `kafka_protocol` tuple kafkadiag's own client returns."""
    if isinstance(request, wire.MetadataRequest):
        return wire.ClusterMetadata(
            [wire.Broker(b.node_id, b.host, b.port) for b in response.brokers],
            [
                wire.TopicMetadata(
                    t.name,
                    t.error_code,
                    [
                        wire.PartitionMetadata(p.partition_index, p.leader_id, p.error_code)
                        for p in t.partitions
                    ],
                )
                for t in response.topics
            ],
        )
    if isinstance(request, wire.ListGroupsRequest):
        return wire.GroupListing(
            response.error_code,
            [wire.ListedGroup(g.group_id, g.protocol_type or "") for g in response.groups],
        )
    if isinstance(request, wire.FindCoordinatorRequest):
        if version >= request.BATCHED_FROM:
            return [
                wire.Coordinator(c.key, c.error_code, c.node_id, c.host, c.port)
                for c in response.coordinators
            ]
        r = response
        return [wire.Coordinator(request.keys[0], r.error_code, r.node_id, r.host, r.port)]
    if isinstance(request, wire.DescribeGroupsRequest):
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
    if isinstance(request, wire.OffsetFetchRequest):
        groups = response.groups if version >= request.BATCHED_FROM else [response]
        return [
            wire.FetchedGroup(
                group.group_id if version >= request.BATCHED_FROM else request.groups[0],
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
    if isinstance(request, wire.ListOffsetsRequest):
        return [
            wire.ListedOffset(t.name, p.partition_index, p.error_code, p.offset)
            for t in response.topics
            for p in t.partitions
        ]
    raise TypeError(f"no conversion for {type(request).__name__}")
