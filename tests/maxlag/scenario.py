"""An old-consumer deployment for the end-to-end tests: the reproducer JVM, a real topic on the
real broker, and the group's registration, ownership and committed offsets in the real ZooKeeper.

The reproducer's simulated log is kept equal to the broker's: every record the test produces goes
to the broker first (one record per batch), then the reproducer is told the partition's new high
watermark. Its auto-commits are written into ZooKeeper the way ZookeeperConsumerConnector writes
them (`sync_commits`), so the lag engine computes the checker lag from real servers.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from tests.infra import workload
from tests.infra.workload import Cluster, OldConsumerGroup
from tests.maxlag.reproducer import Reproducer

RECORD_BYTES = 100


@dataclass
class Deployment:
    cluster: Cluster
    group: OldConsumerGroup
    topic: str
    partitions: int
    consumer: Reproducer
    produced: dict[int, int] = field(default_factory=dict)

    @property
    def pid(self) -> int:
        return self.consumer.pid

    def cli_args(self) -> list[str]:
        return ["--zookeeper", self.cluster.zookeeper, "--group", self.group.group]

    def produce(self, counts: dict[int, int], tell_consumer: bool = True) -> None:
        """counts[p] more records into partition p of the real topic; then the new hw to the JVM."""
        workload.produce(self.cluster.bootstrap, self.topic, counts)
        for partition, count in counts.items():
            self.produced[partition] = self.produced.get(partition, 0) + count
            if tell_consumer:
                self.consumer.command(f"hw {self.topic} {partition} {self.produced[partition]}")

    def status(self) -> dict[str, Any]:
        return self.consumer.status()

    def wait_for(
        self, predicate: Callable[[dict[str, Any]], bool], what: str, timeout_s: float = 30.0
    ) -> dict[str, Any]:
        return self.consumer.wait_for(predicate, what, timeout_s)

    def sync_commits(self) -> dict[int, int]:
        """Write the JVM's committed offsets into ZooKeeper, as its auto-commit would."""
        status = self.consumer.status()
        committed = {entry["partition"]: entry["committed_offset"] for entry in status["partitions"]}
        self.group.commit({(self.topic, partition): offset for partition, offset in committed.items()})
        return committed

    def settle_commits(self, interval_ms: int) -> dict[int, int]:
        """Wait two auto-commit intervals so committed offsets caught up with consumption, then sync."""
        time.sleep(2 * interval_ms / 1000)
        return self.sync_commits()


def deploy(
    cluster: Cluster,
    start: Callable[..., Reproducer],
    settings: dict[str, str],
    partitions: int = 2,
    streams: int = 2,
    extra_args: Sequence[str] = (),
    jvm_options: Sequence[str] = (),
    prefix: str = "maxlag",
) -> Deployment:
    topic = cluster.topic(partitions, prefix=f"{prefix}-topic")
    group = cluster.old_group(prefix)
    consumer_id = group.join({topic: streams})
    owners = workload.range_assignment({topic: partitions}, {consumer_id: {topic: streams}})
    group.own(owners)
    host, port = cluster.bootstrap.rsplit(":", 1)
    reproducer = start(
        group.group,
        [f"{topic}:{partitions}:{streams}"],
        settings,
        [
            "--consumer-id",
            consumer_id,
            "--record-bytes",
            str(RECORD_BYTES),
            "--broker",
            f"{host}:{port}:{cluster.broker_id}",
            *extra_args,
        ],
        jvm_options=jvm_options,
    )
    assert reproducer.consumer_id == consumer_id
    return Deployment(cluster, group, topic, partitions, reproducer)


def all_committed(deployment: Deployment) -> Callable[[dict[str, Any]], bool]:
    def predicate(status: dict[str, Any]) -> bool:
        return all(
            entry["committed_offset"] == deployment.produced.get(entry["partition"], 0)
            for entry in status["partitions"]
        )

    return predicate
