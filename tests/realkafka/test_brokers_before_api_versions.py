"""Brokers before 0.10 answer no ApiVersions: 0.8.2 drops the connection at the probe, 0.9 logs an
ArrayIndexOutOfBoundsException and leaves it open. kafkadiag recognises both within its probe window
and speaks the versions they understand (or the one api.version pins)."""

from __future__ import annotations

import json
import time

from tests.infra import workload
from tests.infra.cli import group_of, partitions_of, run, run_json
from tests.infra.real_kafka import RealKafka


def _timed_lag(*args: str) -> tuple[dict, float]:
    started = time.monotonic()
    document = run_json(["lag", *args])
    return document, time.monotonic() - started


def test_a_0_9_broker_is_recognised_and_its_group_equals_consumer_groups(kafka_09: RealKafka) -> None:
    # GIVEN a 0.9 broker and a group a kafka-python member (pinned to 0.9) committed 5 of 8 records for
    topic, group = workload.unique("events"), workload.unique("audit")
    kafka_09.create_topic(topic, 2)
    kafka_09.produce(topic, {0: 5, 1: 3})
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(
        bootstrap_servers=kafka_09.address, group_id=group, api_version=(0, 9), enable_auto_commit=False,
        auto_offset_reset="earliest", session_timeout_ms=10000, heartbeat_interval_ms=1000,
    )  # fmt: skip
    try:
        consumer.subscribe([topic])
        taken = 0
        deadline = time.monotonic() + 60
        while taken < 5 and time.monotonic() < deadline:
            taken += sum(
                len(records) for records in consumer.poll(timeout_ms=200, max_records=5 - taken).values()
            )
        consumer.commit()
        # WHEN kafkadiag reads it (auto-negotiated) while the member is alive
        document, elapsed = _timed_lag(
            "--bootstrap-server", kafka_09.address, "--group", group, "--format", "json"
        )
        described = kafka_09.consumer_groups_describe(group, "--new-consumer")
    finally:
        consumer.close()
    # THEN the silent probe costs at most the probe window, and the numbers are the tool's
    assert elapsed < 5.0, elapsed
    reported = partitions_of(document, group)
    assert described and set(described) == set(reported), (described, reported)
    for key, row in described.items():
        mine = reported[key]
        assert str(mine["committed_offset"]) == row["CURRENT OFFSET"], (mine, row)
        assert str(mine["high_watermark"]) == row["LOG END OFFSET"], (mine, row)
        assert str(mine["lag"]) == row["LAG"], (mine, row)
        # 0.9's tool names the owner as <client id>_/<host>
        assert f"{mine['owner_client_id']}_/{mine['owner_host']}" == row["OWNER"], (mine, row)
    assert group_of(document, group)["total_lag"] == 3


def test_a_0_8_2_broker_that_drops_the_probe_is_recognised_at_once(kafka_0822: RealKafka) -> None:
    # GIVEN a 0.8.2 broker with a topic
    topic = workload.unique("orders")
    kafka_0822.create_topic(topic, 1)
    kafka_0822.produce(topic, {0: 4})
    # WHEN kafkadiag lists its groups (no pinning)
    started = time.monotonic()
    code, out, err = run(
        ["lag", "--bootstrap-server", kafka_0822.address, "--all-groups", "--format", "json"]
    )
    elapsed = time.monotonic() - started
    # THEN it took well under the silent broker's probe window, and the one thing it could not do
    # is said: a 0.8.2 broker lists no groups (exit 3)
    assert elapsed < 1.5, elapsed
    assert code == 3 and json.loads(out)["errors"] == [
        "the brokers cannot list groups (ListGroups came with Kafka 0.9): groups that commit offsets to "
        "Kafka are read only when named with --group"
    ], (out, err)


def test_api_version_in_command_config_pins_the_broker_version(kafka_09: RealKafka, tmp_path) -> None:  # type: ignore[no-untyped-def]
    # GIVEN client properties that pin the broker's version, as kafka-python's api_version does
    config = tmp_path / "client.properties"
    config.write_text("api.version=0.9\n")
    topic = workload.unique("pinned")
    kafka_09.create_topic(topic, 1)
    # WHEN kafkadiag reads through them
    document, elapsed = _timed_lag(
        "--bootstrap-server", kafka_09.address, "--command-config", str(config),
        "--all-groups", "--topic", topic, "--format", "json",
    )  # fmt: skip
    # THEN no probe is sent, so no probe window is waited out
    assert elapsed < 1.0, elapsed
    assert document["errors"] == []
