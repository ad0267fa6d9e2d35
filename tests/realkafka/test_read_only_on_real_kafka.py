"""kafkadiag is read-only against real Apache Kafka of every line it speaks to: only read requests
go on the wire, nothing under /consumers or /brokers/topics changes in ZooKeeper, no group changes
(as Kafka's own kafka-consumer-groups describes it), no topic appears."""

from __future__ import annotations

from typing import Any

import pytest

from tests.infra import workload
from tests.infra.cli import run
from tests.infra.real_kafka import RealKafka
from tests.lag.test_read_only import READ_ONLY_APIS, _guard


def _zookeeper_state(kafka: RealKafka) -> dict[str, Any]:
    client = workload.zk_client(kafka.zookeeper)
    try:
        return {root: workload.zk_tree(client, root) for root in ("/consumers", "/brokers/topics", "/config")}
    finally:
        client.stop()
        client.close()


def _commands(kafka: RealKafka, groups: list[str], with_zookeeper: bool) -> list[list[str]]:
    sources = ["--bootstrap-server", kafka.address]
    if with_zookeeper:
        sources += ["--zookeeper", kafka.zookeeper]
    named = [argument for group in groups for argument in ("--group", group)]
    return [
        ["lag", *sources, *named, "--format", "json"],
        ["lag", *sources, "--all-groups", "--format", "prometheus"],
        ["check", *sources, *named, "--max-lag", "1", "--format", "junit"],
        ["diagnose", *sources, *named, "--format", "json"],
    ]


def _run_guarded(command: list[str]) -> list[str]:
    with pytest.MonkeyPatch.context() as patch:
        sent = _guard(patch)
        code, out, err = run(command)
    assert code in (0, 1, 3), (command, code, out, err)
    assert set(sent) <= READ_ONLY_APIS, (command, sorted(set(sent) - READ_ONLY_APIS))
    return sent


def test_nothing_changes_on_a_0_8_2_cluster(kafka_0822: RealKafka) -> None:
    # GIVEN a live old consumer committing to ZooKeeper and a stopped one that committed to Kafka
    topic = workload.unique("orders")
    kafka_0822.create_topic(topic, 2)
    kafka_0822.produce(topic, {0: 5, 1: 5})
    stored_in_kafka = workload.unique("kafka-stored")
    kafka_0822.consume_with_old_consumer(topic, stored_in_kafka, 4, {"offsets.storage": "kafka"})
    live = workload.unique("live")
    # (caught up: its connector rewrites an offset znode only when the offset moves)
    with kafka_0822.running_old_consumer(topic, live, {"auto.commit.interval.ms": "200"}):
        _wait_for_owner(kafka_0822, live)
        before_zookeeper, before_topics = _zookeeper_state(kafka_0822), kafka_0822.topics_in_zookeeper()
        before_offsets = kafka_0822.offset_checker(stored_in_kafka)
        sent: list[str] = []
        # WHEN every reading command runs against it
        for command in _commands(kafka_0822, [live, stored_in_kafka], with_zookeeper=True):
            sent += _run_guarded(command)
            # THEN nothing changed
            assert _zookeeper_state(kafka_0822) == before_zookeeper, command
            assert kafka_0822.topics_in_zookeeper() == before_topics, command
        assert kafka_0822.offset_checker(stored_in_kafka) == before_offsets
    # and the broker was asked (the guard is not vacuous)
    assert {"OffsetFetchRequest", "ListOffsetsRequest", "MetadataRequest"} <= set(sent)


@pytest.mark.parametrize("release", ["kafka_39", "kafka_41"])
def test_nothing_changes_on_a_modern_cluster(release: str, request: pytest.FixtureRequest) -> None:
    kafka: RealKafka = request.getfixturevalue(release)
    # GIVEN a live group member and an offsets-only group
    topic = workload.unique("payments")
    kafka.create_topic(topic, 2)
    kafka.produce(topic, {0: 4, 1: 4})
    live, idle = workload.unique("live"), workload.unique("idle")
    workload.commit_offsets_without_joining(kafka.address, idle, {(topic, 0): 1})
    with workload.new_consumer(kafka.address, live, [topic], max_poll_interval_ms=600_000) as member:
        member.consume(3)
        before = {group: kafka.consumer_groups_describe(group) for group in (live, idle)}
        sent: list[str] = []
        # WHEN every reading command runs against it
        for command in _commands(kafka, [live, idle], with_zookeeper=False):
            sent += _run_guarded(command)
        # THEN the groups are as kafka-consumer-groups described them before
        assert {group: kafka.consumer_groups_describe(group) for group in (live, idle)} == before
    assert {"OffsetFetchRequest", "ListOffsetsRequest", "DescribeGroupsRequest"} <= set(sent)


def _wait_for_owner(kafka: RealKafka, group: str, timeout_s: float = 60.0) -> None:
    import time

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        rows = kafka.offset_checker(group)
        if rows and all(row["owner"] != "none" and row["lag"] == "0" for row in rows.values()):
            return
        time.sleep(0.5)
    raise AssertionError(f"the old consumer of {group} did not claim its partitions and catch up")
