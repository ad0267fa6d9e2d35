"""Topics and live producers for the sandbox's Apache Kafka broker.

Topics are created the way an operator of each release creates them: with the release's own
TopicCommand through ZooKeeper on brokers before CreateTopics existed (0.10.1), with an admin
client otherwise. Producers are kafka-python, told the broker's version where the broker cannot
say it (0.8.2 does not answer ApiVersions).
"""

from __future__ import annotations

import contextlib
import subprocess
import threading
import time
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from kafkadiag.errors import SandboxError
from kafkadiag.sandbox.kafka_servers import KafkaBroker, java_argv, version_tuple
from kafkadiag.sandbox.servers import stop_process

# The first release whose brokers take CreateTopics requests (KIP-4).
CREATE_TOPICS_FROM = (0, 10, 1)
TOPIC_COMMAND_TIMEOUT_S = 120.0


def client_settings(broker: KafkaBroker) -> dict[str, Any]:
    """kafka-python settings for this broker: a 0.8.2 broker never answers the version probe."""
    if version_tuple(broker.version) < (0, 9):
        return {"api_version": (0, 8, 2)}
    return {}


def create_topics(
    broker: KafkaBroker, workdir: Path, partitions: Mapping[str, int], timeout_s: float = 60.0
) -> None:
    """Create the topics and wait until the broker gives every partition a leader."""
    if version_tuple(broker.version) < CREATE_TOPICS_FROM:
        _create_with_topic_command(broker, workdir, partitions)
    else:
        _create_with_admin_client(broker, partitions)
    _wait_for_leaders(broker, partitions, timeout_s)


def _create_with_topic_command(broker: KafkaBroker, workdir: Path, partitions: Mapping[str, int]) -> None:
    """kafka.admin.TopicCommand, one JVM per topic (it creates one at a time), run side by side."""
    assert broker.zookeeper is not None, "a broker before 0.10.1 runs on ZooKeeper"
    workdir.mkdir(parents=True, exist_ok=True)
    running: list[tuple[str, subprocess.Popen[str]]] = []
    try:
        for topic, count in partitions.items():
            argv = java_argv(
                broker.version, workdir, f"topic-{topic}", "kafka.admin.TopicCommand",
                "--zookeeper", broker.zookeeper, "--create", "--topic", topic,
                "--partitions", str(count), "--replication-factor", "1",
            )  # fmt: skip
            process = subprocess.Popen(
                argv, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
            )
            running.append((topic, process))
        for topic, process in running:
            output, _ = process.communicate(timeout=TOPIC_COMMAND_TIMEOUT_S)
            if process.returncode != 0 or "Created topic" not in output:
                raise SandboxError(
                    f"Kafka's TopicCommand could not create {topic} (exit {process.returncode}):\n"
                    + output[-2000:]
                )
    finally:
        # Interrupted or failed: none of them outlives the sandbox.
        for _, process in running:
            stop_process(process, grace_s=2.0)


def _create_with_admin_client(broker: KafkaBroker, partitions: Mapping[str, int]) -> None:
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic

    admin = KafkaAdminClient(bootstrap_servers=broker.address, client_id="kafkadiag-sandbox")
    try:
        admin.create_topics([NewTopic(topic, count, 1) for topic, count in partitions.items()])
    finally:
        admin.close()


def _wait_for_leaders(broker: KafkaBroker, partitions: Mapping[str, int], timeout_s: float) -> None:
    """The broker's metadata lists every partition, which it does once the partition has a leader.
    A 0.8.2 broker lists no brokers at all before that, so even connecting waits for it."""
    import logging

    from kafka import KafkaConsumer

    # A broker still electing leaders refuses bootstrap; kafka-python would log each try.
    logging.getLogger("kafka").setLevel(logging.CRITICAL)
    deadline = time.monotonic() + timeout_s
    seen: dict[str, int] = {}
    while time.monotonic() < deadline:
        try:
            consumer = KafkaConsumer(
                bootstrap_servers=broker.address, bootstrap_timeout_ms=2000, **client_settings(broker)
            )
        except Exception:  # noqa: BLE001 - retried until the deadline
            time.sleep(0.2)
            continue
        try:
            seen = {topic: len(consumer.partitions_for_topic(topic) or set()) for topic in partitions}
            if seen == dict(partitions):
                return
        except Exception:  # noqa: BLE001 - retried until the deadline
            pass
        finally:
            with contextlib.suppress(Exception):
                consumer.close()
        time.sleep(0.2)
    raise SandboxError(f"the topics' partitions got no leader within {timeout_s:.0f} s (listed: {seen})")


class Producers:
    """One background thread writing `rate` records per second to every partition of the topics."""

    def __init__(self, broker: KafkaBroker, partitions: Mapping[str, int], rate: float = 5.0) -> None:
        self._broker = broker
        self._targets: Sequence[tuple[str, int]] = [
            (topic, partition) for topic, count in partitions.items() for partition in range(count)
        ]
        self._interval = 1.0 / rate
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sandbox-producers", daemon=True)
        self.produced = 0
        self.error: Exception | None = None

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        from kafka import KafkaProducer

        try:
            producer = KafkaProducer(
                bootstrap_servers=self._broker.address,
                linger_ms=0,
                acks=1,
                client_id="sandbox-producer",
                **client_settings(self._broker),
            )
        except Exception as error:  # noqa: BLE001 - reported by the demo
            self.error = error
            return
        try:
            while not self._stop.is_set():
                started = time.monotonic()
                futures = [
                    producer.send(topic, value=b"order %d" % self.produced, partition=partition)
                    for topic, partition in self._targets
                ]
                producer.flush(timeout=10)
                for future in futures:
                    future.get(timeout=10)
                self.produced += len(futures)
                self._stop.wait(max(0.0, self._interval - (time.monotonic() - started)))
        except Exception as error:  # noqa: BLE001 - reported by the demo
            self.error = error
        finally:
            producer.close(timeout=5)
