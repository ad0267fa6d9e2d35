"""kafkadiag is read-only, proven: the whole ZooKeeper tree (data and versions) and every group's
offsets, state and members are identical before and after each command, and the only requests
kafkadiag sends are reads (it never joins a group, commits, or writes a znode)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from tests.infra import workload
from tests.infra.cli import run
from tests.infra.servers import ServerProcess
from tests.infra.workload import Cluster

# Every Kafka API kafkadiag may use. JoinGroup, SyncGroup, Heartbeat, LeaveGroup, OffsetCommit,
# Produce, CreateTopics ... are not in it.
READ_ONLY_APIS = {
    "ApiVersionsRequest",
    "MetadataRequest",
    "FindCoordinatorRequest",
    "ListGroupsRequest",
    "DescribeGroupsRequest",
    "ConsumerGroupDescribeRequest",
    "OffsetFetchRequest",
    "ListOffsetsRequest",
    "SaslHandshakeRequest",
    "SaslAuthenticateRequest",
}
ZOOKEEPER_WRITES = (
    "create",
    "create_async",
    "set",
    "set_async",
    "delete",
    "delete_async",
    "ensure_path",
    "transaction",
)


def kafka_state(bootstrap: str) -> dict[str, Any]:
    """Every group on the broker: state, members, and committed offsets (read with librdkafka)."""
    from confluent_kafka import ConsumerGroupTopicPartitions
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})
    listed = admin.list_consumer_groups().result(timeout=20)
    names = sorted(group.group_id for group in listed.valid)
    state: dict[str, Any] = {}
    described = admin.describe_consumer_groups(names) if names else {}
    for name in names:
        description = described[name].result(timeout=20)
        offsets = admin.list_consumer_group_offsets([ConsumerGroupTopicPartitions(name)])[name].result(
            timeout=20
        )
        state[name] = (
            str(description.state),
            sorted(member.member_id for member in description.members),
            sorted((tp.topic, tp.partition, tp.offset) for tp in offsets.topic_partitions),
        )
    return state


def zookeeper_state(address: str) -> dict[str, Any]:
    client = workload.zk_client(address)
    try:
        return workload.zk_tree(client, "/")
    finally:
        client.stop()
        client.close()


def test_no_command_changes_zookeeper_or_any_group(
    cluster: Cluster, zookeeper: ServerProcess, broker: ServerProcess, tmp_path: Path
) -> None:
    # GIVEN an old-consumer group with a live consumer, a live new-consumer group member and an
    # offsets-only group
    topic = cluster.topic(2, {0: 6, 1: 4})
    old = cluster.old_group()
    consumer = old.join({topic: 2})
    old.own(workload.range_assignment({topic: 2}, {consumer: {topic: 2}}))
    old.commit({(topic, 0): 2, (topic, 1): 4})
    idle = workload.unique("idle")
    workload.commit_offsets_without_joining(broker.address, idle, {(topic, 0): 1})
    live = workload.unique("live")
    record_dir = tmp_path / "record"
    zk, bootstrap = cluster.zookeeper, broker.address
    commands = [
        ["lag", "--zookeeper", zk, "--group", old.group],
        ["lag", "--zookeeper", zk, "--all-groups", "--format", "json"],
        ["lag", "--bootstrap-server", bootstrap, "--all-groups", "--format", "prometheus"],
        [
            "lag",
            "--bootstrap-server",
            bootstrap,
            "--zookeeper",
            zk,
            "--group",
            old.group,
            "--group",
            live,
            "--group",
            idle,
            "--samples",
            "2",
            "--interval",
            "0.2",
            "--record",
            str(record_dir),
        ],
        ["lag", "history", str(record_dir)],
        [
            "check",
            "--bootstrap-server",
            bootstrap,
            "--zookeeper",
            zk,
            "--all-groups",
            "--max-lag",
            "1",
            "--format",
            "junit",
        ],
        ["lag", "--bootstrap-server", bootstrap, "--group", workload.unique("unknown")],
        ["diagnose", "--bootstrap-server", bootstrap, "--zookeeper", zk, "--group", old.group,
         "--group", live, "--group", idle, "--format", "json"],
        ["batch", str(record_dir), "--out", str(tmp_path / "batch")],
    ]  # fmt: skip
    every_request: list[str] = []
    # The member polls once only: it must stay in the group while every command runs, Spark's
    # batch included, however slow the machine (a member past max.poll.interval.ms leaves it).
    with workload.new_consumer(bootstrap, live, [topic], max_poll_interval_ms=1_800_000) as member:
        member.consume(3)
        for command in commands:
            before_zk, before_kafka = zookeeper_state(zookeeper.address), kafka_state(bootstrap)
            # WHEN the command runs with every write refused and every request recorded
            with pytest.MonkeyPatch.context() as patch:
                sent = _guard(patch)
                code, out, err = run(command)
            every_request += sent
            # THEN it worked, sent only reads, and nothing changed anywhere
            assert code in (0, 1, 3), (command, code, out, err)
            assert "ZooKeeper write" not in err, err
            assert set(sent) <= READ_ONLY_APIS, (command, sorted(set(sent) - READ_ONLY_APIS))
            assert zookeeper_state(zookeeper.address) == before_zk, command
            assert kafka_state(bootstrap) == before_kafka, command
        # and kafkadiag's requests were seen at all (the guard is not vacuous)
        assert {"OffsetFetchRequest", "ListOffsetsRequest", "DescribeGroupsRequest"} <= set(every_request)


def _guard(patch: pytest.MonkeyPatch) -> list[str]:
    """Record every Kafka request kafkadiag puts on the wire (kafka-python frames each one,
    ApiVersions and SASL included, in KafkaConnection._send_request), and make every ZooKeeper
    write through kazoo fail the test."""
    from kafka.net.connection import KafkaConnection
    from kazoo.client import KazooClient

    sent: list[str] = []
    original_send = KafkaConnection._send_request

    def recording_send(self: Any, request: Any, *args: Any, **kwargs: Any) -> Any:
        # The test's own consumer shares this process (and heartbeats): count kafkadiag's only.
        if self.config.get("client_id") == "kafkadiag":
            sent.append(type(request).__name__)
        return original_send(self, request, *args, **kwargs)

    patch.setattr(KafkaConnection, "_send_request", recording_send)
    for name in ZOOKEEPER_WRITES:

        def refuse(self: Any, *args: Any, _name: str = name, **kwargs: Any) -> Any:
            raise AssertionError(f"kafkadiag called KazooClient.{_name}{args}: a ZooKeeper write")

        patch.setattr(KazooClient, name, refuse)
    return sent
