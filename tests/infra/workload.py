"""What the tests put into the real broker and ZooKeeper: topics, records, consumers.

Records are produced one per batch (Tansu answers ListOffsets(latest) with the base offset of
the last batch + 1, COMPONENTS.md). Old consumers are written into ZooKeeper exactly as
kafka.consumer.ZookeeperConsumerConnector writes them; new consumers are real kafka-python
group members that subscribe, poll and commit.
"""

from __future__ import annotations

import json
import socket
import time
import uuid
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


# ---- broker -------------------------------------------------------------------------------


def create_topic(bootstrap: str, topic: str, partitions: int) -> None:
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.create_topics([NewTopic(topic, partitions, 1)])
    finally:
        admin.close()
    wait_for_topic(bootstrap, topic, partitions)


def wait_for_topic(bootstrap: str, topic: str, partitions: int, timeout_s: float = 20.0) -> None:
    from confluent_kafka.admin import AdminClient

    admin = AdminClient({"bootstrap.servers": bootstrap})
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        metadata = admin.list_topics(topic=topic, timeout=5)
        described = metadata.topics.get(topic)
        if described is not None and described.error is None and len(described.partitions) == partitions:
            return
        time.sleep(0.1)
    raise AssertionError(f"topic {topic} did not appear with {partitions} partitions")


def produce(bootstrap: str, topic: str, counts: Mapping[int, int]) -> None:
    """Write counts[p] records into partition p, one record per batch."""
    from kafka import KafkaProducer

    producer = KafkaProducer(bootstrap_servers=bootstrap, batch_size=1, linger_ms=0, acks=1)
    try:
        for partition, count in counts.items():
            for index in range(count):
                producer.send(topic, value=f"{partition}:{index}".encode(), partition=partition).get(
                    timeout=30
                )
    finally:
        producer.close(timeout=5)


def commit_offsets_without_joining(
    bootstrap: str, group: str, offsets: Mapping[tuple[str, int], int]
) -> None:
    """An offsets-only group (no members), as `kafka-consumer-groups --reset-offsets` leaves one."""
    from kafka import KafkaAdminClient, TopicPartition
    from kafka.structs import OffsetAndMetadata

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        admin.alter_group_offsets(
            group,
            {
                TopicPartition(topic, partition): OffsetAndMetadata(offset, "", -1)
                for (topic, partition), offset in offsets.items()
            },
        )
    finally:
        admin.close()


@dataclass
class NewConsumer:
    """A real kafka-python group member; `consume` polls and commits up to a number of records."""

    consumer: Any
    group: str
    consumed: dict[tuple[str, int], int] = field(default_factory=dict)

    def consume(self, records: int, timeout_s: float = 60.0) -> None:
        deadline = time.monotonic() + timeout_s
        taken = 0
        while taken < records and time.monotonic() < deadline:
            batch = self.consumer.poll(timeout_ms=200, max_records=records - taken)
            for topic_partition, messages in batch.items():
                taken += len(messages)
                key = (topic_partition.topic, topic_partition.partition)
                self.consumed[key] = messages[-1].offset + 1
        self.consumer.commit()
        if taken < records:
            raise AssertionError(f"consumed {taken} of {records} records in {timeout_s}s")

    def close(self) -> None:
        self.consumer.close()


@contextmanager
def new_consumer(
    bootstrap: str, group: str, topics: Sequence[str], max_poll_interval_ms: int = 60000
) -> Iterator[NewConsumer]:
    """A member that stays in the group while it polls at least every `max_poll_interval_ms`
    (past that, kafka-python's heartbeat thread leaves the group: its state becomes EMPTY)."""
    from kafka import KafkaConsumer

    consumer = KafkaConsumer(
        bootstrap_servers=bootstrap,
        group_id=group,
        client_id=f"test-{group}",
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        # Tansu holds the second join about session_timeout_ms/2 (COMPONENTS.md).
        session_timeout_ms=6000,
        heartbeat_interval_ms=1000,
        max_poll_interval_ms=max_poll_interval_ms,
    )
    consumer.subscribe(list(topics))
    member = NewConsumer(consumer, group)
    try:
        yield member
    finally:
        member.close()


def independent_lag(
    bootstrap: str, group: str, partitions: Sequence[tuple[str, int]]
) -> dict[tuple[str, int], dict[str, int | None]]:
    """Committed offset, high watermark, log start and lag per partition, as librdkafka reads them.

    confluent-kafka is the cross-check: a different client implementation reading the same
    broker. A Consumer with a group.id that never subscribes does not join the group;
    `committed` is an OffsetFetch and `get_watermark_offsets(cached=False)` a ListOffsets.
    """
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": bootstrap, "group.id": group, "enable.auto.commit": False})
    try:
        committed = consumer.committed(
            [TopicPartition(topic, partition) for topic, partition in partitions], timeout=20
        )
        result: dict[tuple[str, int], dict[str, int | None]] = {}
        for entry in committed:
            low, high = consumer.get_watermark_offsets(
                TopicPartition(entry.topic, entry.partition), timeout=20, cached=False
            )
            offset = entry.offset if entry.offset >= 0 else None
            result[(entry.topic, entry.partition)] = {
                "committed_offset": offset,
                "high_watermark": high,
                "log_start_offset": low,
                "lag": high - offset if offset is not None else None,
            }
        return result
    finally:
        consumer.close()


def broker_node_id(bootstrap: str) -> int:
    from confluent_kafka.admin import AdminClient

    metadata = AdminClient({"bootstrap.servers": bootstrap}).list_topics(timeout=10)
    return int(next(iter(metadata.brokers)))


# ---- ZooKeeper: the old consumer's layout ---------------------------------------------------


def zk_client(hosts: str) -> Any:
    from kazoo.client import KazooClient

    client = KazooClient(hosts=hosts, timeout=10.0)
    client.start(timeout=10)
    return client


def register_broker(client: Any, broker_id: int, host: str, port: int) -> None:
    """/brokers/ids/<id> as a Kafka 0.10+ broker writes it (ephemeral, tied to `client`)."""
    value = {
        "listener_security_protocol_map": {"PLAINTEXT": "PLAINTEXT"},
        "endpoints": [f"PLAINTEXT://{host}:{port}"],
        "jmx_port": -1,
        "host": host,
        "timestamp": str(int(time.time() * 1000)),
        "port": port,
        "version": 4,
    }
    client.ensure_path("/brokers/ids")
    client.create(f"/brokers/ids/{broker_id}", json.dumps(value).encode(), ephemeral=True)


def register_topic(client: Any, topic: str, partitions: int, leader: int) -> None:
    """/brokers/topics/<t> and each partition's state, as the controller writes them."""
    assignment = {str(partition): [leader] for partition in range(partitions)}
    client.ensure_path("/brokers/topics")
    client.create(f"/brokers/topics/{topic}", json.dumps({"version": 1, "partitions": assignment}).encode())
    for partition in range(partitions):
        state = {"controller_epoch": 1, "leader": leader, "version": 1, "leader_epoch": 0, "isr": [leader]}
        client.create(
            f"/brokers/topics/{topic}/partitions/{partition}/state", json.dumps(state).encode(), makepath=True
        )


def consumer_id(group: str, host: str = "") -> str:
    """<group>_<host>-<startMillis>-<uuid8>, as ZookeeperConsumerConnector builds it."""
    host = host or socket.gethostname()
    return f"{group}_{host}-{int(time.time() * 1000)}-{uuid.uuid4().hex[:8]}"


def range_assignment(
    partitions_by_topic: Mapping[str, int], threads_by_consumer: Mapping[str, Mapping[str, int]]
) -> dict[tuple[str, int], str]:
    """The old consumer's RangeAssignor: per topic, sorted partitions over sorted thread ids."""
    owners: dict[tuple[str, int], str] = {}
    for topic, partition_count in partitions_by_topic.items():
        threads = sorted(
            f"{consumer}-{number}"
            for consumer, subscription in threads_by_consumer.items()
            for number in range(subscription.get(topic, 0))
        )
        if not threads:
            continue
        per_thread, extra = divmod(partition_count, len(threads))
        for position, thread in enumerate(threads):
            start = per_thread * position + min(position, extra)
            count = per_thread + (1 if position + 1 <= extra else 0)
            for partition in range(start, start + count):
                owners[(topic, partition)] = thread
    return owners


class OldConsumerGroup:
    """Writes a group's /consumers nodes as live ZookeeperConsumerConnectors would.

    Each consumer instance has its own ZooKeeper session, so its ephemeral /ids and /owners nodes
    vanish when it `leave`s, exactly as when a real consumer process dies.
    """

    def __init__(self, hosts: str, group: str) -> None:
        self.hosts = hosts
        self.group = group
        self.base = f"/consumers/{group}"
        self.sessions: dict[str, Any] = {}
        self.admin = zk_client(hosts)

    def join(self, subscription: Mapping[str, int], host: str = "") -> str:
        identifier = consumer_id(self.group, host)
        session = zk_client(self.hosts)
        value = {
            "version": 1,
            "subscription": dict(subscription),
            "pattern": "static",
            "timestamp": str(int(time.time() * 1000)),
        }
        session.ensure_path(f"{self.base}/ids")
        session.create(f"{self.base}/ids/{identifier}", json.dumps(value).encode(), ephemeral=True)
        self.sessions[identifier] = session
        return identifier

    def own(self, owners: Mapping[tuple[str, int], str]) -> None:
        """Claim partitions for "<consumerId>-<threadNo>" owners, in the owner's own session."""
        for (topic, partition), thread in owners.items():
            consumer = thread.rsplit("-", 1)[0]
            session = self.sessions.get(consumer, self.admin)
            session.ensure_path(f"{self.base}/owners/{topic}")
            session.create(f"{self.base}/owners/{topic}/{partition}", thread.encode(), ephemeral=True)

    def commit(self, offsets: Mapping[tuple[str, int], int | str]) -> None:
        """Write offset znodes (persistent); only changed offsets are rewritten, as the connector does."""
        for (topic, partition), offset in offsets.items():
            path = f"{self.base}/offsets/{topic}/{partition}"
            data = str(offset).encode()
            if self.admin.exists(path):
                current, _ = self.admin.get(path)
                if current != data:
                    self.admin.set(path, data)
            else:
                self.admin.create(path, data, makepath=True)

    def leave(self, consumer: str) -> None:
        session = self.sessions.pop(consumer)
        session.stop()
        session.close()

    def close(self) -> None:
        for consumer in list(self.sessions):
            self.leave(consumer)
        self.admin.stop()
        self.admin.close()


def zk_tree(client: Any, root: str = "/") -> dict[str, tuple[bytes, int, int, int, int]]:
    """Every znode under root with its data and versions (data, cversion, aversion, mzxid)."""
    tree: dict[str, tuple[bytes, int, int, int, int]] = {}
    stack = [root]
    while stack:
        path = stack.pop()
        data, stat = client.get(path)
        tree[path] = (data, stat.version, stat.cversion, stat.aversion, stat.mzxid)
        for child in client.get_children(path):
            stack.append(f"{path.rstrip('/')}/{child}")
    return tree


# ---- a test's own corner of the shared servers ---------------------------------------------


class Cluster:
    """A chroot of its own in the shared ZooKeeper (brokers registered as Kafka does) plus the
    shared broker: what an old-consumer deployment looks like to kafkadiag, isolated per test."""

    def __init__(self, zookeeper_address: str, bootstrap: str) -> None:
        self.chroot = "/" + unique("kafka")
        self.bootstrap = bootstrap
        self.zookeeper_root = zookeeper_address
        root = zk_client(zookeeper_address)
        root.ensure_path(self.chroot)
        root.stop()
        root.close()
        self.zookeeper = f"{zookeeper_address}{self.chroot}"
        self.client = zk_client(self.zookeeper)  # holds the broker registration (ephemeral)
        self.broker_id = broker_node_id(bootstrap)
        host, port = bootstrap.rsplit(":", 1)
        register_broker(self.client, self.broker_id, host, int(port))
        self.groups: list[OldConsumerGroup] = []

    def topic(self, partitions: int, counts: Mapping[int, int] | None = None, prefix: str = "topic") -> str:
        """A real topic on the broker with counts[p] records, registered in this chroot."""
        name = unique(prefix)
        create_topic(self.bootstrap, name, partitions)
        if counts:
            produce(self.bootstrap, name, counts)
        register_topic(self.client, name, partitions, self.broker_id)
        return name

    def old_group(self, prefix: str = "old") -> OldConsumerGroup:
        group = OldConsumerGroup(self.zookeeper, unique(prefix))
        self.groups.append(group)
        return group

    def close(self) -> None:
        for group in self.groups:
            group.close()
        self.client.stop()
        self.client.close()
