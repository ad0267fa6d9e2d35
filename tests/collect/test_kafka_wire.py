"""kafkadiag's own Kafka client against a real broker: the same scan as kafka-python's client,
pipelined rounds, the one-group-per-request path of brokers before 3.0, and connections that
fail or stop answering, each reported per request within the deadline."""

from __future__ import annotations

import time
from typing import Any

import pytest

from kafkadiag.collect import kafka as collector
from kafkadiag.collect import kafka_wire
from kafkadiag.collect.kafka_protocol import Broker, ListGroupsRequest, MetadataRequest, OffsetFetchRequest
from kafkadiag.collect.kafka_python_client import KafkaPythonClient
from kafkadiag.collect.kafka_wire import NO_ANSWER, WireClient
from tests.infra import workload
from tests.infra.servers import ServerProcess, free_port


@pytest.fixture(scope="module")
def groups_on_broker(broker: ServerProcess) -> tuple[str, list[str], str]:
    """Two topics with records and 12 offsets-only groups committed on them."""
    topic, other = workload.unique("wire"), workload.unique("wire-other")
    workload.create_topic(broker.address, topic, 3)
    workload.create_topic(broker.address, other, 2)
    workload.produce(broker.address, topic, {0: 9, 1: 5, 2: 2})
    workload.produce(broker.address, other, {0: 4, 1: 1})
    groups = [workload.unique(f"wire{index}") for index in range(12)]
    for index, group in enumerate(groups):
        offsets = {(topic, 0): index % 9, (topic, 1): 5, (other, 1): 1}
        if index % 3 == 0:
            offsets[(topic, 2)] = 1
        workload.commit_offsets_without_joining(broker.address, group, offsets)
    return topic, groups, other


def _scan(client: Any, groups: list[str], topics: list[str] | None = None) -> collector.KafkaScan:
    return collector.scan(client, groups, topics, {}, timeout_s=10)


def _comparable(scan: collector.KafkaScan) -> tuple[Any, ...]:
    return (scan.groups, scan.partitions, scan.topics, scan.errors)


def test_same_scan_as_through_kafka_python(broker: ServerProcess, groups_on_broker: Any) -> None:
    topic, groups, other = groups_on_broker
    names = [*groups, workload.unique("absent")]
    ours = WireClient(broker.address, {}, 10)
    theirs = KafkaPythonClient(broker.address, {}, 10)
    try:
        for topics in (None, [topic]):
            mine, reference = _scan(ours, names, topics), _scan(theirs, names, topics)
            # THEN every group, offset, owner, watermark and error is the same
            assert _comparable(mine) == _comparable(reference)
            assert mine.requests == reference.requests and mine.round_trips == reference.round_trips
        # and the numbers are the committed ones (the comparison is not of two empty scans)
        full = _scan(ours, groups)
        first = next(group for group in full.groups if group.group == groups[4])
        assert {(o.topic, o.partition, o.offset) for o in first.offsets} == {
            (topic, 0, 4),
            (topic, 1, 5),
            (other, 1, 1),
        }
        watermarks = {(p.topic, p.partition): p.high_watermark for p in full.partitions}
        assert watermarks[(topic, 0)] == 9 and watermarks[(other, 1)] == 1
        # one FindCoordinator, DescribeGroups + OffsetFetch, Metadata, 2 ListOffsets: 4 rounds
        assert (full.requests, full.round_trips) == (6, 4)
    finally:
        ours.close()
        theirs.close()


def test_brokers_before_3_0_are_asked_one_group_per_request(
    broker: ServerProcess, groups_on_broker: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    topic, groups, other = groups_on_broker
    # (named topics: the Tansu broker here answers OffsetFetch v2-v5 asking for every partition
    # with an empty body, so the old path is exercised with explicit partition lists)
    topics = [topic, other]
    batched = WireClient(broker.address, {}, 10)
    try:
        expected = _scan(batched, groups, topics)
    finally:
        batched.close()
    # GIVEN connections that accept only what a 2.x broker accepts: FindCoordinator v0-v3,
    # OffsetFetch v1-v7
    original_open = WireClient._open

    def as_old_broker(self: WireClient, address: Any, deadline: float) -> Any:
        connection = original_open(self, address, deadline)
        connection.accepted = {**connection.accepted, 10: (0, 3), 9: (1, 7)}
        return connection

    monkeypatch.setattr(WireClient, "_open", as_old_broker)
    old = WireClient(broker.address, {}, 10)
    try:
        scan = _scan(old, groups, topics)
    finally:
        old.close()
    # THEN the same result, from one FindCoordinator and one OffsetFetch per group, still in
    # the same number of rounds
    assert _comparable(scan) == _comparable(expected)
    assert scan.requests == expected.requests + 2 * (len(groups) - 1)
    assert scan.round_trips == expected.round_trips


def test_a_round_pipelines_many_requests_on_one_connection(
    broker: ServerProcess, groups_on_broker: Any
) -> None:
    _, groups, _ = groups_on_broker
    client = WireClient(broker.address, {}, 10)
    try:
        node = next(iter(client.brokers))
        calls = [(node, OffsetFetchRequest((groups[index % len(groups)],))) for index in range(2000)]
        calls += [(None, ListGroupsRequest())]
        before = client.round_trips
        outcomes = client.round(calls, time.monotonic() + 20)
        assert client.round_trips == before + 1
        assert all(reason is None for _, reason in outcomes), {reason for _, reason in outcomes}
        # each answer is matched to its own request (by correlation id), in order
        for index, (answer, _) in enumerate(outcomes[:-1]):
            assert answer[0].group_id == groups[index % len(groups)]
        assert set(groups) <= {group.group_id for group in outcomes[-1][0].groups}
    finally:
        client.close()


def test_a_broker_that_cannot_be_reached_fails_only_its_requests(broker: ServerProcess) -> None:
    client = WireClient(broker.address, {}, 10)
    try:
        closed_port = free_port()
        client.add_broker(Broker(977, "127.0.0.1", closed_port))
        node = next(node for node in client.brokers if node != 977)
        outcomes = client.round(
            [(977, ListGroupsRequest()), (node, ListGroupsRequest())], time.monotonic() + 5
        )
        (missing, reason), (listing, ok) = outcomes
        assert missing is None and f"cannot connect to broker 977 (127.0.0.1:{closed_port})" in str(reason)
        assert "refused" in str(reason).lower()
        assert ok is None and listing.error_code == 0
    finally:
        client.close()


def _round_while_paused(
    client: WireClient, broker: ServerProcess, deadline_s: float
) -> tuple[Any, Any, float]:
    """(answer, reason, seconds waited) of a Metadata round sent to a SIGSTOPped broker."""
    broker.pause()
    try:
        started = time.monotonic()
        ((answer, reason),) = client.round([(None, MetadataRequest())], time.monotonic() + deadline_s)
        return answer, reason, time.monotonic() - started
    finally:
        broker.resume()


def test_a_broker_that_stops_answering_is_bounded_and_the_next_round_reconnects(
    own_broker: ServerProcess,
) -> None:
    client = WireClient(own_broker.address, {}, 10)
    try:
        answer, reason, waited = _round_while_paused(client, own_broker, 1.0)
        assert answer is None and reason == NO_ANSWER
        assert 0.9 < waited < 2.0
        # the late answer must not be read as the next request's: a fresh connection is used
        ((answer, reason),) = client.round([(None, ListGroupsRequest())], time.monotonic() + 10)
        assert reason is None and answer.error_code == 0
    finally:
        client.close()
    # request.timeout.ms from --command-config bounds a round within a longer --timeout
    client = WireClient(own_broker.address, {"request_timeout_ms": 500}, 10)
    try:
        _, reason, waited = _round_while_paused(client, own_broker, 10.0)
        assert reason == NO_ANSWER and 0.4 < waited < 1.5
    finally:
        client.close()


def test_bootstrap_failures_name_the_address_and_the_cause() -> None:
    port = free_port()
    started = time.monotonic()
    with pytest.raises(kafka_wire.ConnectError, match=rf"127\.0\.0\.1:{port}: Connection refused"):
        WireClient(f"127.0.0.1:{port}", {}, 1.0)
    assert time.monotonic() - started < 2.5
    with pytest.raises(ValueError, match="not host:port"):
        WireClient("localhost", {}, 1.0)
    assert kafka_wire.parse_bootstrap(" a:1, [::1]:9092 ,") == [("a", 1), ("::1", 9092)]


def test_gssapi_and_oauthbearer_connect_through_kafka_python(monkeypatch: pytest.MonkeyPatch) -> None:
    opened: list[str] = []

    def record(name: str) -> Any:
        def init(self: Any, bootstrap: str, config: dict[str, Any], timeout_s: float) -> None:
            opened.append(name)

        return init

    monkeypatch.setattr(KafkaPythonClient, "__init__", record("kafka-python"))
    monkeypatch.setattr(WireClient, "__init__", record("wire"))
    for protocol, mechanism in [
        ("SASL_SSL", "GSSAPI"),
        ("SASL_PLAINTEXT", "OAUTHBEARER"),
        ("SASL_SSL", "SCRAM-SHA-512"),
        ("SASL_PLAINTEXT", "PLAIN"),
        ("SSL", "GSSAPI"),  # a mechanism without SASL is not used
        ("PLAINTEXT", None),
    ]:
        collector.open_client("h:9092", {"security_protocol": protocol, "sasl_mechanism": mechanism}, 1)
    assert opened == ["kafka-python", "kafka-python", "wire", "wire", "wire", "wire"]


def test_zookeeper_given_as_the_bootstrap_server_is_refused_in_bounded_time(zookeeper: ServerProcess) -> None:
    started = time.monotonic()
    with pytest.raises(kafka_wire.ConnectError, match=zookeeper.address):
        WireClient(zookeeper.address, {}, 1.0)
    assert time.monotonic() - started < 2.5


@pytest.mark.parametrize(
    ("header", "reason"),
    [
        (bytes([0x15, 0x03, 0x03, 0x00]), "answered in TLS"),  # a TLS alert record
        (bytes([0x16, 0x03, 0x01, 0x00]), "answered in TLS"),  # a TLS handshake record
        (b"HTTP", "does not speak Kafka"),
        ((-1).to_bytes(4, "big", signed=True), "does not speak Kafka"),
        ((2).to_bytes(4, "big"), "does not speak Kafka"),  # shorter than a correlation id
    ],
)
def test_frames_that_cannot_be_kafka_answers_are_named(header: bytes, reason: str) -> None:
    with pytest.raises(ConnectionAbortedError, match=reason):
        kafka_wire.frame_size(header)
    assert kafka_wire.frame_size((1234).to_bytes(4, "big")) == 1234
