"""The new consumer on real Apache Kafka: kafkadiag's lag against kafka-consumer-groups --describe of
the same release, on the same cluster, with the group's members alive.

- 1.1 and 3.9 (ZooKeeper mode): a kafka-python group member (the classic group protocol).
- 4.1, KRaft: the classic protocol, and Kafka's own Java consumer on the consumer group protocol of
  KIP-848 (group.protocol=consumer), whose members the broker assigns itself.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager

import pytest

from kafkadiag.sandbox.kafka_servers import java_argv
from kafkadiag.sandbox.servers import ServerProcess, spawn
from tests.infra import workload
from tests.infra.cli import group_of, partitions_of, run_json
from tests.infra.real_kafka import RealKafka

CONSOLE_CONSUMER_4 = "org.apache.kafka.tools.consumer.ConsoleConsumer"


def _assert_equals_describe(document: dict, group: str, described: dict) -> None:
    reported = partitions_of(document, group)
    assert described and set(described) == set(reported), (described, reported)
    for key, row in described.items():
        mine = reported[key]
        expected = {
            "committed_offset": row["CURRENT-OFFSET"],
            "high_watermark": row["LOG-END-OFFSET"],
            "lag": row["LAG"],
            "owner": row["CONSUMER-ID"],
            # The tool prints the host as the coordinator has it, with a leading slash.
            "owner_host": row["HOST"].lstrip("/"),
            "owner_client_id": row["CLIENT-ID"],
        }
        for field, theirs in expected.items():
            assert str(mine[field] if mine[field] is not None else "-") == theirs, (key, field, mine, row)


@pytest.mark.parametrize("release", ["kafka_11", "kafka_39", "kafka_41"])
def test_live_classic_group_equals_consumer_groups_describe(
    release: str, request: pytest.FixtureRequest
) -> None:
    kafka: RealKafka = request.getfixturevalue(release)
    # GIVEN a live kafka-python member that consumed and committed 7 of 12 records
    topic, group = workload.unique("invoices"), workload.unique("billing")
    kafka.create_topic(topic, 3)
    kafka.produce(topic, {0: 5, 1: 4, 2: 3})
    with workload.new_consumer(kafka.address, group, [topic]) as member:
        member.consume(7)
        # WHEN kafkadiag and the release's kafka-consumer-groups --describe read it
        document = run_json(["lag", "--bootstrap-server", kafka.address, "--group", group])
        described = kafka.consumer_groups_describe(group)
    # THEN offsets, lag, consumer id, host and client id agree per partition
    _assert_equals_describe(document, group, described)
    summary = group_of(document, group)
    assert summary["state"] == "Stable" and summary["total_lag"] == 5


def test_kip_848_group_equals_consumer_groups_describe(kafka_41: RealKafka) -> None:
    # GIVEN Kafka 4.1's own console consumer on the consumer group protocol (KIP-848), alive and
    # caught up on a 2-partition topic of 6 and 4 records
    topic, group = workload.unique("orders"), workload.unique("fulfilment")
    kafka_41.create_topic(topic, 2)
    kafka_41.produce(topic, {0: 6, 1: 4})
    with _console_consumer(kafka_41, topic, group, "group.protocol=consumer"):
        described = _wait_for_members(kafka_41, group, 2)
        # WHEN kafkadiag reads it
        document = run_json(["lag", "--bootstrap-server", kafka_41.address, "--group", group])
        # THEN its offsets, lag and owners are what the tool describes
        _assert_equals_describe(document, group, kafka_41.consumer_groups_describe(group))
        assert {row["CONSUMER-ID"] for row in described.values()} == {
            partition["owner"] for partition in group_of(document, group)["partitions"]
        }


@contextmanager
def _console_consumer(kafka: RealKafka, topic: str, group: str, *properties: str) -> Iterator[ServerProcess]:
    arguments = ["--bootstrap-server", kafka.address, "--topic", topic, "--group", group, "--from-beginning"]
    for setting in properties:
        arguments += ["--consumer-property", setting]
    arguments += ["--consumer-property", "auto.commit.interval.ms=200"]
    argv = java_argv(kafka.version, kafka.workdir, f"console-{group}", CONSOLE_CONSUMER_4, *arguments)
    process = spawn(f"console-consumer-{group}", argv, kafka.workdir, 0)
    try:
        yield process
    finally:
        process.stop()


def _wait_for_members(kafka: RealKafka, group: str, partitions: int, timeout_s: float = 60.0) -> dict:
    deadline = time.monotonic() + timeout_s
    described: dict = {}
    while time.monotonic() < deadline:
        described = kafka.consumer_groups_describe(group)
        if len(described) == partitions and all(
            row["CONSUMER-ID"] != "-" and row["LAG"] == "0" for row in described.values()
        ):
            return described
        time.sleep(0.5)
    raise AssertionError(f"the group did not settle within {timeout_s}s: {described}")
