"""Real Apache Kafka for the tests: brokers of several releases, their own tools as oracles, and
their own consumers as the groups kafkadiag reads.

The jars come from Maven Central through `kafkadiag.sandbox.kafka_release` (`.ci/run` fetches them
before the suite); the servers from `kafkadiag.sandbox.kafka_servers`. Topics are created, records
produced and groups consumed the way operators do it: Kafka's TopicCommand, its console consumers
(the old ZooKeeper consumer up to 1.1.1), and kafka-python for the new consumer. The oracles are the
tools operators compare against: ConsumerOffsetChecker (old consumer, through 0.11) and
kafka-consumer-groups --describe.
"""

from __future__ import annotations

import subprocess
import time
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kafkadiag.sandbox import kafka_servers
from kafkadiag.sandbox.kafka_servers import KafkaBroker, java_argv, version_tuple
from kafkadiag.sandbox.servers import ServerProcess, spawn

TOOL_TIMEOUT_S = 120.0
# kafka-python's name for the versions of brokers that do not answer ApiVersions.
PINNED_API_VERSION = {"0.8.2.2": (0, 8, 2), "0.9.0.1": (0, 9)}
# Where ConsumerGroupCommand lives: kafka.admin until 3.7, kafka-tools from 3.8 on.
TOOLS_GROUP_COMMAND = "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand"
ADMIN_GROUP_COMMAND = "kafka.admin.ConsumerGroupCommand"


@dataclass
class RealKafka:
    """A running broker and a scratch directory for the tools run against it."""

    broker: KafkaBroker
    workdir: Path

    @property
    def version(self) -> str:
        return self.broker.version

    @property
    def address(self) -> str:
        return self.broker.address

    @property
    def zookeeper(self) -> str:
        assert self.broker.zookeeper is not None, f"Kafka {self.version} runs without ZooKeeper"
        return self.broker.zookeeper

    def tool(self, main_class: str, *arguments: str, version: str | None = None) -> str:
        """Run one of Kafka's tools (of the broker's release unless told) and return its stdout."""
        argv = java_argv(version or self.version, self.workdir, "tool", main_class, *arguments)
        result = subprocess.run(
            argv, capture_output=True, text=True, timeout=TOOL_TIMEOUT_S, stdin=subprocess.DEVNULL
        )
        if result.returncode != 0:
            raise AssertionError(
                f"{main_class} {' '.join(arguments)} exited {result.returncode}:\n{result.stderr[-3000:]}"
            )
        return result.stdout

    def create_topic(self, topic: str, partitions: int) -> None:
        if version_tuple(self.version) < (2, 2):
            self.tool(
                "kafka.admin.TopicCommand",
                "--zookeeper",
                self.zookeeper,
                "--create",
                "--topic",
                topic,
                "--partitions",
                str(partitions),
                "--replication-factor",
                "1",
            )
        else:
            from kafka import KafkaAdminClient
            from kafka.admin import NewTopic

            admin = KafkaAdminClient(bootstrap_servers=self.address, **self.client_settings())
            try:
                admin.create_topics([NewTopic(topic, partitions, 1)])
            finally:
                admin.close()
        self.wait_for_leaders(topic, partitions)

    def wait_for_leaders(self, topic: str, partitions: int, timeout_s: float = 30.0) -> None:
        from kafka import KafkaConsumer

        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            # A 0.8 broker lists no brokers in its metadata until a partition has a leader, so
            # even bootstrapping waits for the leaders.
            try:
                consumer = KafkaConsumer(
                    bootstrap_servers=self.address, bootstrap_timeout_ms=2000, **self.client_settings()
                )
            except Exception:  # noqa: BLE001 - retried until the deadline
                time.sleep(0.2)
                continue
            try:
                if len(consumer.partitions_for_topic(topic) or set()) == partitions:
                    return
            except Exception:  # noqa: BLE001 - retried until the deadline
                pass
            finally:
                consumer.close()
            time.sleep(0.2)
        raise AssertionError(
            f"topic {topic} has no leaders for its {partitions} partitions on Kafka {self.version}"
        )

    def client_settings(self) -> dict[str, Any]:
        pinned = PINNED_API_VERSION.get(self.version)
        return {"api_version": pinned} if pinned else {}

    def produce(self, topic: str, counts: Mapping[int, int]) -> None:
        """counts[p] records into partition p."""
        from kafka import KafkaProducer

        producer = KafkaProducer(bootstrap_servers=self.address, acks=1, **self.client_settings())
        try:
            for partition, count in counts.items():
                for index in range(count):
                    producer.send(topic, value=f"{partition}:{index}".encode(), partition=partition)
            producer.flush(timeout=30)
        finally:
            producer.close(timeout=5)

    def topics_in_zookeeper(self) -> list[str]:
        from kazoo.client import KazooClient

        client = KazooClient(hosts=self.zookeeper, timeout=10.0, read_only=True)
        client.start(timeout=10)
        try:
            return sorted(client.get_children("/brokers/topics") if client.exists("/brokers/topics") else [])
        finally:
            client.stop()
            client.close()

    # ---- the old (ZooKeeper) consumer, 0.8.2 to 1.1.1 --------------------------------------

    def old_console_consumer_argv(
        self, topic: str, group: str, settings: Mapping[str, str], **options: str
    ) -> list[str]:
        """Kafka's own ConsoleConsumer on the old consumer (--zookeeper), of the broker's release
        or of `options["release"]` (1.1.1's old consumer against a 3.9 broker)."""
        release = options.get("release", self.version)
        config = self.workdir / f"consumer-{group}-{time.monotonic_ns()}.properties"
        config.write_text(
            "".join(f"{key}={value}\n" for key, value in {"group.id": group, **settings}.items())
        )
        arguments = [
            "--zookeeper",
            self.zookeeper,
            "--topic",
            topic,
            "--consumer.config",
            str(config),
            "--from-beginning",
        ]
        if "max_messages" in options:
            arguments += ["--max-messages", options["max_messages"]]
        return java_argv(
            release, self.workdir, f"console-consumer-{group}", "kafka.tools.ConsoleConsumer", *arguments
        )

    def consume_with_old_consumer(
        self,
        topic: str,
        group: str,
        records: int,
        settings: Mapping[str, str] | None = None,
        release: str | None = None,
    ) -> None:
        """Consume `records` records and exit; the connector commits its offsets as it shuts down."""
        argv = self.old_console_consumer_argv(
            topic, group, settings or {}, max_messages=str(records), release=release or self.version
        )
        result = subprocess.run(
            argv, capture_output=True, text=True, timeout=TOOL_TIMEOUT_S, stdin=subprocess.DEVNULL
        )
        consumed = result.stdout.count("\n")
        if result.returncode != 0 or consumed < records:
            raise AssertionError(
                f"the old consumer read {consumed} of {records} records:\n{result.stderr[-3000:]}"
            )

    @contextmanager
    def running_old_consumer(
        self, topic: str, group: str, settings: Mapping[str, str] | None = None, release: str | None = None
    ) -> Iterator[ServerProcess]:
        """An old consumer that stays in the group until the block ends (stopped by PID)."""
        argv = self.old_console_consumer_argv(topic, group, settings or {}, release=release or self.version)
        process = spawn(f"old-consumer-{group}", argv, self.workdir, 0)
        try:
            yield process
        finally:
            process.stop()

    def offset_checker(self, group: str) -> dict[tuple[str, int], dict[str, str]]:
        """ConsumerOffsetChecker's rows: (topic, partition) -> offset, logSize, lag, owner."""
        out = self.tool("kafka.tools.ConsumerOffsetChecker", "--zookeeper", self.zookeeper, "--group", group)
        rows: dict[tuple[str, int], dict[str, str]] = {}
        for line in out.splitlines():
            fields = line.split()
            if len(fields) == 7 and fields[0] == group and fields[2].isdigit():
                _, topic, partition, offset, log_size, lag, owner = fields
                rows[(topic, int(partition))] = {
                    "offset": offset,
                    "logSize": log_size,
                    "lag": lag,
                    "owner": owner,
                }
        return rows

    def consumer_groups_describe(
        self, group: str, *options: str, release: str | None = None
    ) -> dict[tuple[str, int], dict[str, str]]:
        """kafka-consumer-groups --describe rows by (topic, partition), keyed by its own headers."""
        release = release or self.version
        command = TOOLS_GROUP_COMMAND if version_tuple(release) >= (3, 8) else ADMIN_GROUP_COMMAND
        source = (
            ["--zookeeper", self.zookeeper]
            if "--zookeeper" in options
            else ["--bootstrap-server", self.address]
        )
        extra = [option for option in options if option != "--zookeeper"]
        out = self.tool(command, *source, "--describe", "--group", group, *extra, version=release)
        return parse_describe(out)


def parse_describe(out: str) -> dict[tuple[str, int], dict[str, str]]:
    """Rows of any release's table: 0.9 and 0.10 print "GROUP, TOPIC, PARTITION, CURRENT OFFSET,
    ..." separated by commas, later releases columns separated by spaces."""
    rows: dict[tuple[str, int], dict[str, str]] = {}
    header: list[str] | None = None
    for line in out.splitlines():
        fields = line.split(", ") if ", " in line else line.split()
        if "PARTITION" in fields and "LAG" in fields:
            header = fields
            continue
        if header is None or len(fields) != len(header):
            continue
        row = dict(zip(header, fields))
        if row["PARTITION"].isdigit():
            rows[(row["TOPIC"], int(row["PARTITION"]))] = row
    return rows


def start_zookeeper_mode(version: str, workdir: Path, zookeeper: ServerProcess) -> RealKafka:
    broker = kafka_servers.start_zookeeper_broker(version, workdir / f"kafka-{version}", zookeeper.address)
    return with_group_coordinator(RealKafka(broker, workdir))


def start_kraft(version: str, workdir: Path) -> RealKafka:
    broker = kafka_servers.start_kraft_broker(version, workdir / f"kafka-{version}")
    return with_group_coordinator(RealKafka(broker, workdir))


def with_group_coordinator(kafka: RealKafka, timeout_s: float = 60.0) -> RealKafka:
    """Wait until the broker coordinates groups: the first FindCoordinator creates the offsets
    topic, and until its partitions have leaders every group request is refused."""
    if version_tuple(kafka.version) < (0, 9):
        return kafka  # the seeds' tests warm it up themselves: 0.8.2 lists no brokers before a topic exists
    from kafka import KafkaAdminClient

    deadline = time.monotonic() + timeout_s
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        try:
            admin = KafkaAdminClient(bootstrap_servers=kafka.address, **kafka.client_settings())
            try:
                if version_tuple(kafka.version) < (0, 10, 2):  # OffsetFetch of a whole group came in 0.10.2
                    admin.describe_groups(["kafkadiag-tests-warm-up"])
                else:
                    admin.list_group_offsets("kafkadiag-tests-warm-up")
                return kafka
            finally:
                admin.close()
        except Exception as error:  # noqa: BLE001 - retried until the deadline
            last_error = error
            time.sleep(0.3)
    kafka.broker.stop()
    raise AssertionError(f"Kafka {kafka.version} coordinates no groups after {timeout_s}s: {last_error}")
