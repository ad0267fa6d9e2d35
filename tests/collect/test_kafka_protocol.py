"""kafkadiag's Kafka messages against an independent implementation: every request version it
speaks must frame to the same bytes kafka-python writes, and every response version
kafka-python writes must read back as the values put in."""

from __future__ import annotations

from typing import Any

import pytest

from kafkadiag.collect import kafka_protocol as wire
from kafkadiag.collect.kafka_codec import Reader, TruncatedMessageError, Writer

CLIENT_ID = "kafkadiag"
CORRELATION_ID = 4242


def _theirs_request(message: Any, version: int) -> bytes:
    message.with_header(correlation_id=CORRELATION_ID, client_id=CLIENT_ID)
    return bytes(message.encode(version=version, header=True, framed=True))


def _ours_request(request: Any, version: int) -> bytes:
    return wire.encode_request(request, version, CORRELATION_ID, CLIENT_ID)


def _encode_theirs(response: Any, version: int, correlation_id: int = CORRELATION_ID) -> bytes:
    response.API_VERSION = version  # before the header: kafka-python copies it into request headers only
    response.with_header(correlation_id=correlation_id)
    return bytes(response.encode(header=True))


def _decode_theirs(response: Any, request: Any, version: int) -> Any:
    payload = _encode_theirs(response, version)
    assert wire.correlation_id_of(payload) == CORRELATION_ID
    return wire.decode_response(request, version, payload)


# -- requests: the same bytes -----------------------------------------------------------------


@pytest.mark.parametrize("version", wire.MetadataRequest().versions)
def test_metadata_request_bytes(version: int) -> None:
    from kafka.protocol.metadata import MetadataRequest

    topic = MetadataRequest.MetadataRequestTopic
    theirs = MetadataRequest(
        topics=[topic(name="orders"), topic(name="payments")],
        allow_auto_topic_creation=False,
        include_cluster_authorized_operations=False,
        include_topic_authorized_operations=False,
    )
    ours = wire.MetadataRequest(("orders", "payments"))
    assert _ours_request(ours, version) == _theirs_request(theirs, version)


@pytest.mark.parametrize("version", wire.ListGroupsRequest().versions)
def test_list_groups_request_bytes(version: int) -> None:
    from kafka.protocol.admin import ListGroupsRequest

    assert _ours_request(wire.ListGroupsRequest(), version) == _theirs_request(ListGroupsRequest(), version)


@pytest.mark.parametrize("version", wire.FindCoordinatorRequest(("g",)).versions)
def test_find_coordinator_request_bytes(version: int) -> None:
    from kafka.protocol.metadata import FindCoordinatorRequest

    if version >= 4:
        theirs = FindCoordinatorRequest(key_type=0, coordinator_keys=["g1", "g2", "gé"])
        ours = wire.FindCoordinatorRequest(("g1", "g2", "gé"))
    else:
        theirs = FindCoordinatorRequest(key="gé", key_type=0)
        ours = wire.FindCoordinatorRequest(("gé",))
    assert _ours_request(ours, version) == _theirs_request(theirs, version)


@pytest.mark.parametrize("version", wire.DescribeGroupsRequest(("g",)).versions)
def test_describe_groups_request_bytes(version: int) -> None:
    from kafka.protocol.admin import DescribeGroupsRequest

    theirs = DescribeGroupsRequest(groups=["a", "b"], include_authorized_operations=False)
    assert _ours_request(wire.DescribeGroupsRequest(("a", "b")), version) == _theirs_request(theirs, version)


# v1 cannot ask for every partition: kafkadiag names them when it must use v1
@pytest.mark.parametrize(
    ("version", "explicit"), [(v, e) for v in (1, 2, 3, 4, 5, 8) for e in (False, True) if v > 1 or e]
)
def test_offset_fetch_request_bytes(version: int, explicit: bool) -> None:
    from kafka.protocol.consumer import OffsetFetchRequest

    partitions_of = (("orders", (0, 1, 2)), ("payments", (7,))) if explicit else None
    request = wire.OffsetFetchRequest(("g1",) if version < 8 else ("g1", "g2"), partitions_of)
    assert version in request.versions
    if version >= 8:
        group_type = OffsetFetchRequest.OffsetFetchRequestGroup
        topic_type: Any = group_type.OffsetFetchRequestTopics
    else:
        topic_type = OffsetFetchRequest.OffsetFetchRequestTopic
    topics = (
        [topic_type(name=name, partition_indexes=list(parts)) for name, parts in partitions_of]
        if partitions_of
        else None
    )
    if version >= 8:
        theirs = OffsetFetchRequest(
            groups=[group_type(group_id=group, topics=topics) for group in ("g1", "g2")], require_stable=False
        )
    else:
        theirs = OffsetFetchRequest(group_id="g1", topics=topics, require_stable=False)
    assert _ours_request(request, version) == _theirs_request(theirs, version)


@pytest.mark.parametrize("timestamp", [wire.LATEST, wire.EARLIEST])
@pytest.mark.parametrize("version", wire.ListOffsetsRequest((), 0).versions)
def test_list_offsets_request_bytes(version: int, timestamp: int) -> None:
    from kafka.protocol.consumer import ListOffsetsRequest

    topic_type = ListOffsetsRequest.ListOffsetsTopic
    partition_type = topic_type.ListOffsetsPartition
    theirs = ListOffsetsRequest(
        replica_id=-1,
        isolation_level=0,
        topics=[
            topic_type(
                name=name,
                partitions=[
                    partition_type(partition_index=p, current_leader_epoch=-1, timestamp=timestamp)
                    for p in parts
                ],
            )
            for name, parts in (("a", [0, 3]), ("b", [1]))
        ],
    )
    ours = wire.ListOffsetsRequest(wire.by_topic([("b", 1), ("a", 0), ("a", 3)]), timestamp)
    assert _ours_request(ours, version) == _theirs_request(theirs, version)


@pytest.mark.parametrize("version", [0, 1])
def test_sasl_request_bytes(version: int) -> None:
    from kafka.protocol.sasl import SaslAuthenticateRequest, SaslHandshakeRequest

    assert _ours_request(wire.SaslHandshakeRequest("SCRAM-SHA-256"), 1) == _theirs_request(
        SaslHandshakeRequest(mechanism="SCRAM-SHA-256"), 1
    )
    assert _ours_request(wire.SaslAuthenticateRequest(b"\0u\0p"), version) == _theirs_request(
        SaslAuthenticateRequest(auth_bytes=b"\0u\0p"), version
    )


def test_api_versions_request_bytes() -> None:
    from kafka.protocol.metadata import ApiVersionsRequest

    assert _ours_request(wire.ApiVersionsRequest(), 0) == _theirs_request(ApiVersionsRequest(), 0)


# -- responses: the values put in ---------------------------------------------------------------


@pytest.mark.parametrize("version", wire.MetadataRequest().versions)
def test_metadata_response(version: int) -> None:
    from kafka.protocol.metadata import MetadataResponse

    broker, topic = MetadataResponse.MetadataResponseBroker, MetadataResponse.MetadataResponseTopic
    partition = topic.MetadataResponsePartition
    response = MetadataResponse(
        throttle_time_ms=5,
        brokers=[broker(node_id=1, host="b1", port=9092, rack="r1"), broker(node_id=2, host="b2", port=9093)],
        cluster_id="c",
        controller_id=1,
        topics=[
            topic(error_code=3, name="gone", is_internal=False, partitions=[], authorized_operations=[]),
            topic(
                error_code=0,
                name="orders",
                is_internal=False,
                partitions=[
                    partition(
                        error_code=0,
                        partition_index=1,
                        leader_id=2,
                        leader_epoch=4,
                        replica_nodes=[2, 1],
                        isr_nodes=[2],
                        offline_replicas=[1],
                    ),
                    partition(
                        error_code=5,
                        partition_index=0,
                        leader_id=-1,
                        leader_epoch=-1,
                        replica_nodes=[1],
                        isr_nodes=[],
                        offline_replicas=[],
                    ),
                ],
                authorized_operations=[],
            ),
        ],
        authorized_operations=[],
    )
    decoded = _decode_theirs(response, wire.MetadataRequest(), version)
    assert decoded == wire.ClusterMetadata(
        [wire.Broker(1, "b1", 9092), wire.Broker(2, "b2", 9093)],
        [
            wire.TopicMetadata("gone", 3, []),
            wire.TopicMetadata(
                "orders", 0, [wire.PartitionMetadata(1, 2, 0), wire.PartitionMetadata(0, -1, 5)]
            ),
        ],
    )


@pytest.mark.parametrize("version", wire.ListGroupsRequest().versions)
def test_list_groups_response(version: int) -> None:
    from kafka.protocol.admin import ListGroupsResponse

    group = ListGroupsResponse.ListedGroup
    response = ListGroupsResponse(
        throttle_time_ms=0,
        error_code=0,
        groups=[group(group_id="a", protocol_type="consumer"), group(group_id="b", protocol_type="")],
    )
    assert _decode_theirs(response, wire.ListGroupsRequest(), version) == wire.GroupListing(
        0, [wire.ListedGroup("a", "consumer"), wire.ListedGroup("b", "")]
    )


@pytest.mark.parametrize("version", [0, 1, 2, 4])
def test_find_coordinator_response(version: int) -> None:
    from kafka.protocol.metadata import FindCoordinatorResponse

    if version >= 4:
        coordinator = FindCoordinatorResponse.Coordinator
        response = FindCoordinatorResponse(
            throttle_time_ms=0,
            coordinators=[
                coordinator(key="g1", node_id=3, host="h3", port=9094, error_code=0, error_message=None),
                coordinator(key="g2", node_id=-1, host="", port=-1, error_code=15, error_message="loading"),
            ],
        )
        request = wire.FindCoordinatorRequest(("g1", "g2"))
        expected = [wire.Coordinator("g1", 0, 3, "h3", 9094), wire.Coordinator("g2", 15, -1, "", -1)]
    else:
        response = FindCoordinatorResponse(
            throttle_time_ms=0, error_code=0, error_message=None, node_id=3, host="h3", port=9094
        )
        request = wire.FindCoordinatorRequest(("g1",))
        expected = [wire.Coordinator("g1", 0, 3, "h3", 9094)]
    assert _decode_theirs(response, request, version) == expected


def _subscription(version: int, topics: list[str]) -> bytes:
    from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

    topic_partition = ConsumerProtocolSubscription.TopicPartition
    message = ConsumerProtocolSubscription(
        topics=topics,
        user_data=b"u",
        owned_partitions=[topic_partition(topic=topics[0], partitions=[0])],
        generation_id=7,
        rack_id="rack",
    )
    return bytes(message.encode(version=version))


def _assignment(version: int, pairs: dict[str, list[int]]) -> bytes:
    from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment

    topic_partition = ConsumerProtocolAssignment.TopicPartition
    message = ConsumerProtocolAssignment(
        assigned_partitions=[
            topic_partition(topic=topic, partitions=parts) for topic, parts in pairs.items()
        ],
        user_data=None,
    )
    return bytes(message.encode(version=version))


@pytest.mark.parametrize("protocol_version", [0, 1, 2, 3])
def test_consumer_protocol_subscription_and_assignment(protocol_version: int) -> None:
    metadata = _subscription(protocol_version, ["orders", "payments"])
    assignment = _assignment(protocol_version, {"orders": [0, 2], "payments": [1]})
    # the version is the first field: kafkadiag reads what every version starts with
    assert int.from_bytes(metadata[:2], "big") == protocol_version
    assert wire.subscribed_topics(metadata) == ["orders", "payments"]
    assert wire.assigned_partitions(assignment) == [("orders", 0), ("orders", 2), ("payments", 1)]


def test_undecodable_member_bytes_are_refused() -> None:
    with pytest.raises(ValueError):
        wire.subscribed_topics(b"\x00")
    with pytest.raises(ValueError):
        wire.assigned_partitions(b"\xff\xff\x00\x00\x00\x01")  # negative version
    with pytest.raises(ValueError):
        wire.subscribed_topics(b"\x00\x00\x00\x00\x00\x05\x00\x03ab")  # 5 topics promised, 1 cut


@pytest.mark.parametrize("version", wire.DescribeGroupsRequest(("g",)).versions)
def test_describe_groups_response(version: int) -> None:
    from kafka.protocol.admin import DescribeGroupsResponse

    group, member = (
        DescribeGroupsResponse.DescribedGroup,
        DescribeGroupsResponse.DescribedGroup.DescribedGroupMember,
    )
    metadata, assignment = _subscription(1, ["orders"]), _assignment(1, {"orders": [0, 1]})
    response = DescribeGroupsResponse(
        throttle_time_ms=0,
        groups=[
            group(
                error_code=0,
                group_id="g",
                group_state="Stable",
                protocol_type="consumer",
                protocol_data="range",
                members=[
                    member(
                        member_id="m-1",
                        group_instance_id="static-1",
                        client_id="c",
                        client_host="/10.0.0.1",
                        member_metadata=metadata,
                        member_assignment=assignment,
                    )
                ],
                authorized_operations=[],
            ),
            group(
                error_code=30,
                group_id="secret",
                group_state="",
                protocol_type="",
                protocol_data="",
                members=[],
                authorized_operations=[],
            ),
        ],
    )
    decoded = _decode_theirs(response, wire.DescribeGroupsRequest(("g", "secret")), version)
    assert decoded == [
        wire.DescribedGroup(
            "g",
            0,
            "Stable",
            "consumer",
            "range",
            [wire.DescribedMember("m-1", "c", "/10.0.0.1", metadata, assignment)],
        ),
        wire.DescribedGroup("secret", 30, "", "", "", []),
    ]


@pytest.mark.parametrize("version", [1, 2, 3, 4, 5, 8])
def test_offset_fetch_response(version: int) -> None:
    from kafka.protocol.consumer import OffsetFetchResponse

    rows = [("orders", [(0, 42, 0), (1, -1, 0)]), ("payments", [(3, -1, 3)])]
    expected_topics = [
        wire.FetchedTopic(name, [wire.FetchedPartition(*row) for row in partitions])
        for name, partitions in rows
    ]
    if version >= 8:
        group_type = OffsetFetchResponse.OffsetFetchResponseGroup
        topic_type: Any = group_type.OffsetFetchResponseTopics
        partition_type: Any = topic_type.OffsetFetchResponsePartitions
    else:
        topic_type = OffsetFetchResponse.OffsetFetchResponseTopic
        partition_type = topic_type.OffsetFetchResponsePartition
    topics = [
        topic_type(
            name=name,
            partitions=[
                partition_type(
                    partition_index=index,
                    committed_offset=offset,
                    committed_leader_epoch=-1,
                    metadata="m" if offset >= 0 else None,
                    error_code=error,
                )
                for index, offset, error in partitions
            ],
        )
        for name, partitions in rows
    ]
    if version >= 8:
        response = OffsetFetchResponse(
            throttle_time_ms=0,
            groups=[
                group_type(group_id="g1", topics=topics, error_code=0),
                group_type(group_id="g2", topics=[], error_code=30),
            ],
        )
        request = wire.OffsetFetchRequest(("g1", "g2"))
        expected = [wire.FetchedGroup("g1", 0, expected_topics), wire.FetchedGroup("g2", 30, [])]
    else:
        response = OffsetFetchResponse(throttle_time_ms=0, topics=topics, error_code=0 if version < 2 else 16)
        request = wire.OffsetFetchRequest(("g1",), (("orders", (0, 1)),))
        expected = [wire.FetchedGroup("g1", 0 if version < 2 else 16, expected_topics)]
    assert _decode_theirs(response, request, version) == expected


@pytest.mark.parametrize("version", wire.ListOffsetsRequest((), 0).versions)
def test_list_offsets_response(version: int) -> None:
    from kafka.protocol.consumer import ListOffsetsResponse

    topic_type = ListOffsetsResponse.ListOffsetsTopicResponse
    partition_type = topic_type.ListOffsetsPartitionResponse
    response = ListOffsetsResponse(
        throttle_time_ms=0,
        topics=[
            topic_type(
                name="a",
                partitions=[
                    partition_type(
                        partition_index=0, error_code=0, timestamp=-1, offset=1234567890123, leader_epoch=3
                    ),
                    partition_type(partition_index=3, error_code=6, timestamp=-1, offset=-1, leader_epoch=-1),
                ],
            )
        ],
    )
    assert _decode_theirs(response, wire.ListOffsetsRequest((("a", (0, 3)),), wire.LATEST), version) == [
        wire.ListedOffset("a", 0, 0, 1234567890123),
        wire.ListedOffset("a", 3, 6, -1),
    ]


def test_api_versions_response() -> None:
    from kafka.protocol.metadata import ApiVersionsResponse

    api = ApiVersionsResponse.ApiVersion
    response = ApiVersionsResponse(
        error_code=0,
        api_keys=[
            api(api_key=3, min_version=0, max_version=12),
            api(api_key=9, min_version=1, max_version=9),
        ],
    )
    assert _decode_theirs(response, wire.ApiVersionsRequest(), 0) == (0, {3: (0, 12), 9: (1, 9)})


@pytest.mark.parametrize("version", [0, 1])
def test_sasl_authenticate_response(version: int) -> None:
    from kafka.protocol.sasl import SaslAuthenticateResponse

    response = SaslAuthenticateResponse(
        error_code=58, error_message="bad password", auth_bytes=b"e=x", session_lifetime_ms=0
    )
    assert _decode_theirs(response, wire.SaslAuthenticateRequest(b""), version) == wire.SaslAnswer(
        58, "bad password", b"e=x"
    )


# -- version choice, truncation, tagged fields ---------------------------------------------------


def test_the_first_preferred_version_the_broker_accepts_is_used() -> None:
    batched = wire.OffsetFetchRequest(("a", "b"))
    single = wire.OffsetFetchRequest(("a",))
    assert wire.pick_version(single, {9: (1, 9)}) == 8
    assert wire.pick_version(single, {9: (0, 7)}) == 5  # v6-v7: flexible single-group, not spoken
    assert wire.pick_version(wire.DescribeGroupsRequest(("g",)), {15: (0, 5)}) == 2
    assert wire.pick_version(wire.DescribeGroupsRequest(("g",)), {15: (3, 6)}) == 3
    assert wire.pick_version(wire.ListOffsetsRequest((), -1), {2: (0, 10)}) == 1
    with pytest.raises(wire.UnsupportedVersionError, match=r"OffsetFetch v0-v7, kafkadiag speaks v8"):
        wire.pick_version(batched, {9: (0, 7)})
    with pytest.raises(wire.UnsupportedVersionError, match=r"Metadata none"):
        wire.pick_version(wire.MetadataRequest(), {})


def test_a_truncated_response_is_a_clear_error_not_a_wrong_value() -> None:
    from kafka.protocol.admin import ListGroupsResponse

    group = ListGroupsResponse.ListedGroup
    response = ListGroupsResponse(
        throttle_time_ms=0, error_code=0, groups=[group(group_id="a", protocol_type="c")]
    )
    payload = _encode_theirs(response, 2, correlation_id=1)
    for cut in range(4, len(payload)):
        with pytest.raises(ValueError, match="malformed ListGroups v2 response"):
            wire.decode_response(wire.ListGroupsRequest(), 2, payload[:cut])


def test_tagged_fields_are_skipped_whatever_they_hold() -> None:
    writer = Writer().uvarint(2).uvarint(0).uvarint(3).int8(1).int16(2).uvarint(300).uvarint(1).int8(9)
    writer.int32(77)
    reader = Reader(bytes(writer.buffer))
    reader.skip_tagged_fields()
    assert reader.int32() == 77
    with pytest.raises(TruncatedMessageError):
        Reader(b"\x01\x00\x05\x00").skip_tagged_fields()


@pytest.mark.parametrize("value", [0, 1, 127, 128, 300, 16383, 16384, 2**31 - 1, 2**35])
def test_unsigned_varints_round_trip(value: int) -> None:
    assert Reader(bytes(Writer().uvarint(value).buffer)).uvarint() == value
