"""kafkadiag's Kafka client (kafka-python's admin client, requests in rounds) against a real
broker: the scan reads what kafka-python's public admin API reads, rounds pipeline many
requests, the one-group-per-request path of brokers before 3.0, and connections that fail or
stop answering, each reported per request within the deadline."""

from __future__ import annotations

import time
from typing import Any

import pytest

from kafkadiag.collect.errors import BrokerUnreachableError
from kafkadiag.collect.kafka import internals
from kafkadiag.collect.kafka import scan as collector
from kafkadiag.collect.kafka.client import NO_ANSWER, KafkaClient, parse_bootstrap
from kafkadiag.collect.kafka.requests import Broker, ListGroupsRequest, MetadataRequest, OffsetFetchRequest
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


def test_the_scan_reads_what_kafka_pythons_public_admin_api_reads(
    broker: ServerProcess, groups_on_broker: Any
) -> None:
    from kafka import KafkaAdminClient

    topic, groups, other = groups_on_broker
    client = KafkaClient(broker.address, {}, 10)
    reference = KafkaAdminClient(bootstrap_servers=broker.address, request_timeout_ms=10000)
    try:
        full = _scan(client, [*groups, workload.unique("absent")])
        by_group = {group.group: group for group in full.groups}
        for group in groups:
            expected = {
                (tp.topic, tp.partition, meta.offset)
                for tp, meta in reference.list_group_offsets({group: None})[group].items()
                if meta.offset >= 0
            }
            assert {(o.topic, o.partition, o.offset) for o in by_group[group].offsets} == expected
            assert expected  # the comparison is not of two empty sets
        assert {(o.topic, o.partition, o.offset) for o in by_group[groups[4]].offsets} == {
            (topic, 0, 4),
            (topic, 1, 5),
            (other, 1, 1),
        }
        absent = [group for group in full.groups if group.group not in groups]
        assert len(absent) == 1 and not absent[0].exists
        watermarks = {(p.topic, p.partition): p.high_watermark for p in full.partitions}
        assert watermarks[(topic, 0)] == 9 and watermarks[(other, 1)] == 1
        # one FindCoordinator, DescribeGroups + ConsumerGroupDescribe (KIP-848) + OffsetFetch,
        # Metadata, 2 ListOffsets: 4 rounds
        assert (full.requests, full.round_trips) == (7, 4)
    finally:
        client.close()
        reference.close()


def test_brokers_before_3_0_are_asked_one_group_per_request(
    broker: ServerProcess, groups_on_broker: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    topic, groups, other = groups_on_broker
    # (named topics: the broker here answers OffsetFetch v2-v5 asking for every partition with
    # an empty body, so the old path is exercised with explicit partition lists)
    topics = [topic, other]
    client = KafkaClient(broker.address, {}, 10)
    try:
        expected = _scan(client, groups, topics)
        # GIVEN a broker that accepts only what a 2.x broker accepts: FindCoordinator v0-v3,
        # OffsetFetch v1-v7
        accepted = internals.accepted_versions

        def as_old_broker(manager: Any) -> dict[int, tuple[int, int]]:
            return {**accepted(manager), 10: (0, 3), 9: (1, 7)}

        monkeypatch.setattr(internals, "accepted_versions", as_old_broker)
        scan = _scan(client, groups, topics)
    finally:
        client.close()
    # THEN the same result, from one FindCoordinator and one OffsetFetch per group, still in
    # the same number of rounds
    assert _comparable(scan) == _comparable(expected)
    assert scan.requests == expected.requests + 2 * (len(groups) - 1)
    assert scan.round_trips == expected.round_trips


def test_a_round_pipelines_many_requests(broker: ServerProcess, groups_on_broker: Any) -> None:
    _, groups, _ = groups_on_broker
    client = KafkaClient(broker.address, {}, 10)
    try:
        node = next(iter(client.brokers))
        calls = [(node, OffsetFetchRequest((groups[index % len(groups)],))) for index in range(2000)]
        calls += [(None, ListGroupsRequest())]
        before = client.round_trips
        started = time.monotonic()
        outcomes = client.round(calls, time.monotonic() + 20)
        assert client.round_trips == before + 1
        assert all(reason is None for _, reason in outcomes), {reason for _, reason in outcomes}
        # each answer is matched to its own request, in order
        for index, (answer, _) in enumerate(outcomes[:-1]):
            assert answer[0].group_id == groups[index % len(groups)]
        assert set(groups) <= {group.group_id for group in outcomes[-1][0].groups}
        # in flight together: far less than 2000 sequential round trips
        assert time.monotonic() - started < 10
    finally:
        client.close()


def test_a_broker_that_cannot_be_reached_fails_only_its_requests(broker: ServerProcess) -> None:
    client = KafkaClient(broker.address, {}, 10)
    try:
        closed_port = free_port()
        client.add_broker(Broker(977, "127.0.0.1", closed_port))
        node = next(node for node in client.brokers if node != 977)
        started = time.monotonic()
        outcomes = client.round(
            [(977, ListGroupsRequest()), (node, ListGroupsRequest())], time.monotonic() + 3
        )
        (missing, reason), (listing, ok) = outcomes
        assert missing is None and reason is not None
        assert ok is None and listing.error_code == 0
        assert time.monotonic() - started < 4
    finally:
        client.close()


def _round_while_paused(
    client: KafkaClient, broker: ServerProcess, deadline_s: float
) -> tuple[Any, Any, float]:
    """(answer, reason, seconds waited) of a Metadata round sent to a SIGSTOPped broker."""
    broker.pause()
    try:
        started = time.monotonic()
        ((answer, reason),) = client.round([(None, MetadataRequest())], time.monotonic() + deadline_s)
        return answer, reason, time.monotonic() - started
    finally:
        broker.resume()


def test_a_broker_that_stops_answering_is_bounded_and_the_next_round_is_answered(
    own_broker: ServerProcess,
) -> None:
    client = KafkaClient(own_broker.address, {}, 10)
    try:
        answer, reason, waited = _round_while_paused(client, own_broker, 1.0)
        assert answer is None and reason == NO_ANSWER
        assert 0.9 < waited < 2.0
        # the late answer must not be read as the next request's
        ((answer, reason),) = client.round([(None, ListGroupsRequest())], time.monotonic() + 10)
        assert reason is None and answer.error_code == 0
    finally:
        client.close()


def test_bootstrap_failures_name_the_address_and_the_cause() -> None:
    port = free_port()
    started = time.monotonic()
    with pytest.raises(BrokerUnreachableError, match=rf"127\.0\.0\.1:{port}: .*(refused|REFUSED)") as raised:
        KafkaClient(f"127.0.0.1:{port}", {}, 1.0)
    assert f"cannot reach a Kafka broker at 127.0.0.1:{port} (127.0.0.1:{port}: connection refused" in str(
        raised.value
    )
    assert time.monotonic() - started < 2.5
    with pytest.raises(ValueError, match="not host:port"):
        KafkaClient("localhost", {}, 1.0)
    assert parse_bootstrap(" a:1, [::1]:9092 ,") == [("a", 1), ("::1", 9092)]
    for bad in ("a:0", "a:70000", "a:x", ":9092"):
        with pytest.raises(ValueError, match="not host:port"):
            parse_bootstrap(bad)


def test_zookeeper_given_as_the_bootstrap_server_is_refused_in_bounded_time(zookeeper: ServerProcess) -> None:
    started = time.monotonic()
    with pytest.raises(BrokerUnreachableError, match=zookeeper.address):
        KafkaClient(zookeeper.address, {}, 1.0)
    assert time.monotonic() - started < 2.5


def test_a_bootstrap_port_in_superscript_digits_is_refused_not_a_crash() -> None:
    # GIVEN a port that str.isdigit() accepts and int() refuses
    from kafkadiag.collect.kafka.client import parse_bootstrap

    # WHEN it is parsed THEN it is a ValueError naming the entry (exit 3 upstream), not a crash
    with pytest.raises(ValueError, match="is not host:port"):
        parse_bootstrap("broker:9092,broker:²")
