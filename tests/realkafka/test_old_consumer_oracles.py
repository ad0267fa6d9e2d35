"""The old (ZooKeeper) consumer on real Apache Kafka: kafkadiag's lag against the tools operators
trust for it, on the same cluster at the same moment.

- 0.8.2.2, the seeds' release: Kafka's own ConsoleConsumer commits to ZooKeeper (or to Kafka with
  offsets.storage=kafka); ConsumerOffsetChecker is the oracle (offset, logSize, lag, owner).
- 1.1.1, the last old consumer, against a 3.9 ZooKeeper-mode broker: 1.1.1's
  kafka-consumer-groups --zookeeper --describe is the oracle.
"""

from __future__ import annotations

import time

from tests.infra import workload
from tests.infra.cli import group_of, partitions_of, run_json
from tests.infra.real_kafka import RealKafka


def _lag(kafka: RealKafka, group: str, *extra: str) -> dict:
    return run_json(
        ["lag", "--zookeeper", kafka.zookeeper, "--bootstrap-server", kafka.address, "--group", group, *extra]
    )


def _assert_equals_checker(document: dict, group: str, checker: dict, source: str) -> None:
    ours = {key: value for key, value in partitions_of(document, group).items()}
    assert group_of(document, group)["source"] == source
    assert set(ours) == set(checker), (ours, checker)
    for key, row in checker.items():
        mine = ours[key]
        assert str(mine["committed_offset"]) == row["offset"], (key, mine, row)
        assert str(mine["high_watermark"]) == row["logSize"], (key, mine, row)
        assert str(mine["lag"]) == row["lag"], (key, mine, row)
        assert (mine["owner"] or "none") == row["owner"], (key, mine, row)


def test_zookeeper_offsets_of_a_stopped_consumer_equal_consumer_offset_checker(kafka_0822: RealKafka) -> None:
    # GIVEN a 2-partition topic with 9 and 5 records, and Kafka 0.8.2's own ConsoleConsumer that
    # read 8 of them for a group and exited (committing its offsets to ZooKeeper)
    topic, group = workload.unique("orders"), workload.unique("billing")
    kafka_0822.create_topic(topic, 2)
    kafka_0822.produce(topic, {0: 9, 1: 5})
    kafka_0822.consume_with_old_consumer(topic, group, 8)
    # WHEN kafkadiag and ConsumerOffsetChecker read the group
    document = _lag(kafka_0822, group)
    checker = kafka_0822.offset_checker(group)
    # THEN committed offset, log size (high watermark), lag and owner agree per partition
    assert checker, "ConsumerOffsetChecker printed no rows"
    _assert_equals_checker(document, group, checker, "zookeeper")
    assert group_of(document, group)["total_lag"] == sum(int(row["lag"]) for row in checker.values())


def test_owners_of_a_live_consumer_equal_consumer_offset_checker(kafka_0822: RealKafka) -> None:
    # GIVEN a live old consumer (one stream) that owns both partitions of a topic
    topic, group = workload.unique("payments"), workload.unique("ledger")
    kafka_0822.create_topic(topic, 2)
    kafka_0822.produce(topic, {0: 3, 1: 4})
    settings = {"auto.commit.interval.ms": "200"}
    with kafka_0822.running_old_consumer(topic, group, settings):
        checker = _wait_for(lambda: _all_owned_and_consumed(kafka_0822.offset_checker(group), 2))
        # WHEN kafkadiag reads the group while it runs
        document = _lag(kafka_0822, group)
        # THEN the owners (consumer id and thread) are ConsumerOffsetChecker's
        _assert_equals_checker(document, group, checker, "zookeeper")
        summary = group_of(document, group)
        assert summary["state"] == "Active" and len(summary["members"]) == 1
        owner = next(iter(checker.values()))["owner"]
        assert owner.startswith(f"{group}_") and owner.endswith("-0"), owner


def test_kafka_stored_offsets_of_the_old_consumer_equal_consumer_offset_checker(
    kafka_0822: RealKafka,
) -> None:
    # GIVEN Kafka 0.8.2's old consumer committing to Kafka (offsets.storage=kafka), not ZooKeeper
    topic, group = workload.unique("shipments"), workload.unique("dispatch")
    kafka_0822.create_topic(topic, 2)
    kafka_0822.produce(topic, {0: 6, 1: 6})
    kafka_0822.consume_with_old_consumer(
        topic, group, 7, {"offsets.storage": "kafka", "dual.commit.enabled": "false"}
    )
    # WHEN kafkadiag reads the group from the broker (OffsetFetch v1 with the partitions named: a
    # 0.8.2 broker answers no ApiVersions and no group listing)
    document = run_json(["lag", "--bootstrap-server", kafka_0822.address, "--group", group])
    checker = kafka_0822.offset_checker(group)
    # THEN its numbers are ConsumerOffsetChecker's, which asks the offset manager too
    reported = partitions_of(document, group)
    assert group_of(document, group)["source"] == "kafka"
    for key, row in checker.items():
        assert str(reported[key]["committed_offset"]) == row["offset"], (key, reported, row)
        assert str(reported[key]["high_watermark"]) == row["logSize"], (key, reported, row)
        assert str(reported[key]["lag"]) == row["lag"], (key, reported, row)
    assert sum(int(row["lag"]) for row in checker.values()) == 5


def test_reading_metadata_never_creates_a_topic_on_a_broker_that_auto_creates(kafka_0822: RealKafka) -> None:
    # GIVEN a 0.8.2 broker with auto.create.topics.enable=true (its Metadata v0 cannot forbid it)
    kafka_0822.create_topic(workload.unique("existing"), 1)
    missing, group = workload.unique("never-created"), workload.unique("reader")
    before = kafka_0822.topics_in_zookeeper()
    # WHEN kafkadiag is asked about a topic that does not exist, for a group and for all groups
    sources = ["--zookeeper", kafka_0822.zookeeper, "--bootstrap-server", kafka_0822.address]
    named = run_json(["lag", *sources, "--group", group, "--topic", missing], expect=3)
    every = run_json(["lag", *sources, "--all-groups", "--topic", missing], expect=3)
    # (exit 3: the topic could not be read, and a 0.8.2 broker cannot list its groups)
    assert any(f"topic {missing}" in error for error in named["errors"]), named["errors"]
    assert any("cannot list groups (ListGroups came with Kafka 0.9)" in error for error in every["errors"])
    time.sleep(1.0)  # auto-creation would have written /brokers/topics/<topic> by now
    # THEN ZooKeeper holds exactly the topics it held before
    assert missing not in kafka_0822.topics_in_zookeeper()
    assert kafka_0822.topics_in_zookeeper() == before


def test_last_old_consumer_on_the_last_zookeeper_broker_equals_consumer_groups(kafka_39: RealKafka) -> None:
    # GIVEN Kafka 1.1.1's old consumer (removed in 2.0) reading from a 3.9 broker, stopped after
    # 10 of 16 records
    topic, group = workload.unique("events"), workload.unique("audit")
    kafka_39.create_topic(topic, 2)
    kafka_39.produce(topic, {0: 10, 1: 6})
    kafka_39.consume_with_old_consumer(topic, group, 10, release="1.1.1")
    # WHEN kafkadiag and 1.1.1's kafka-consumer-groups --zookeeper --describe read the group
    document = _lag(kafka_39, group)
    described = kafka_39.consumer_groups_describe(group, "--zookeeper", release="1.1.1")
    # THEN current offset, log-end offset and lag agree per partition
    reported = partitions_of(document, group)
    assert described and set(described) == set(reported), (described, reported)
    for key, row in described.items():
        assert str(reported[key]["committed_offset"]) == row["CURRENT-OFFSET"], (key, reported[key], row)
        assert str(reported[key]["high_watermark"]) == row["LOG-END-OFFSET"], (key, reported[key], row)
        assert str(reported[key]["lag"]) == row["LAG"], (key, reported[key], row)
    assert group_of(document, group)["total_lag"] == 6


def _all_owned_and_consumed(rows: dict, partitions: int) -> dict | None:
    if len(rows) == partitions and all(row["owner"] != "none" and row["lag"] == "0" for row in rows.values()):
        return rows
    return None


def _wait_for(probe, timeout_s: float = 60.0):  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        found = probe()
        if found:
            return found
        time.sleep(0.5)
    raise AssertionError(f"not reached within {timeout_s}s")
