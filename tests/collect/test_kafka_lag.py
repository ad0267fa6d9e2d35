"""New-consumer lag from real groups that subscribe, poll and commit on a real broker, checked
offset by offset against librdkafka (confluent-kafka) reading the same broker; the first also on
Tansu, another Kafka-protocol broker."""

from __future__ import annotations

import pytest

from tests.infra import workload
from tests.infra.cli import group_of, partitions_of, run_json
from tests.infra.servers import ServerProcess


def _assert_agrees(document: dict, group: str, topic: str, partitions: int, bootstrap: str) -> None:
    reported = partitions_of(document, group)
    independent = workload.independent_lag(bootstrap, group, [(topic, p) for p in range(partitions)])
    for partition in range(partitions):
        theirs = independent[(topic, partition)]
        if theirs["committed_offset"] is None:
            assert (topic, partition) not in reported or reported[(topic, partition)][
                "committed_offset"
            ] is None
            continue
        ours = reported[(topic, partition)]
        for key in ("committed_offset", "high_watermark", "log_start_offset", "lag"):
            assert ours[key] == theirs[key], (partition, key, ours, theirs)


@pytest.mark.parametrize("server", ["broker", "tansu_broker"])
def test_live_and_offsets_only_groups_agree_with_librdkafka(
    server: str, request: pytest.FixtureRequest
) -> None:
    # On Apache Kafka, and on Tansu: another implementation of the protocol, with its own quirks.
    broker: ServerProcess = request.getfixturevalue(server)
    # GIVEN a 3-partition topic with 8, 6 and 4 records; a live group member that consumed and
    # committed 9 records, and a group that only has committed offsets (no members)
    topic = workload.unique("payments")
    workload.create_topic(broker.address, topic, 3)
    workload.produce(broker.address, topic, {0: 8, 1: 6, 2: 4})
    live = workload.unique("live")
    idle = workload.unique("idle")
    workload.commit_offsets_without_joining(
        broker.address, idle, {(topic, 0): 2, (topic, 1): 6, (topic, 2): 1}
    )
    with workload.new_consumer(broker.address, live, [topic]) as member:
        member.consume(9)
        # WHEN kafkadiag reads both groups while the member is alive
        document = run_json(["lag", "--bootstrap-server", broker.address, "--group", live, "--group", idle])
        # THEN every committed offset, watermark and lag is what librdkafka reads
        _assert_agrees(document, live, topic, 3, broker.address)
        _assert_agrees(document, idle, topic, 3, broker.address)
        live_summary = group_of(document, live)
        assert live_summary["state"] == "Stable" and len(live_summary["members"]) == 1
        assert live_summary["source"] == "kafka"
        assert live_summary["total_lag"] == 18 - 9
    idle_summary = group_of(document, idle)
    assert idle_summary["state"] == "Empty" and idle_summary["members"] == []
    assert {(p["partition"], p["lag"]) for p in idle_summary["partitions"]} == {(0, 6), (1, 0), (2, 3)}


def test_many_groups_are_read_in_a_few_batched_requests(broker: ServerProcess) -> None:
    # GIVEN 30 offsets-only groups on one topic
    topic = workload.unique("batched")
    workload.create_topic(broker.address, topic, 2)
    workload.produce(broker.address, topic, {0: 3, 1: 3})
    groups = [workload.unique(f"batch{index}") for index in range(30)]
    for index, group in enumerate(groups):
        workload.commit_offsets_without_joining(broker.address, group, {(topic, 0): index % 4, (topic, 1): 3})
    # WHEN kafkadiag reads all of them
    args = ["lag", "--bootstrap-server", broker.address]
    for group in groups:
        args += ["--group", group]
    document = run_json(args)
    # THEN their lags are right and the requests do not grow with the number of groups:
    # FindCoordinator, DescribeGroups, ConsumerGroupDescribe, OffsetFetch, Metadata, ListOffsets
    # latest + earliest
    for index, group in enumerate(groups):
        assert partitions_of(document, group)[(topic, 0)]["lag"] == 3 - index % 4
    assert document["stats"]["kafka_requests"] <= 7, document["stats"]


def test_all_groups_finds_kafka_groups(broker: ServerProcess) -> None:
    # GIVEN a group with committed offsets
    topic = workload.unique("listed")
    workload.create_topic(broker.address, topic, 1)
    workload.produce(broker.address, topic, {0: 2})
    group = workload.unique("listed")
    workload.commit_offsets_without_joining(broker.address, group, {(topic, 0): 1})
    # WHEN kafkadiag is asked for every group
    document = run_json(["lag", "--bootstrap-server", broker.address, "--all-groups", "--topic", topic])
    # THEN the group is among them with its lag, and only the asked topic is shown
    assert partitions_of(document, group) == {(topic, 0): partitions_of(document, group)[(topic, 0)]}
    assert partitions_of(document, group)[(topic, 0)]["lag"] == 1
