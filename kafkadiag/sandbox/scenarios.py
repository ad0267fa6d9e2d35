"""The two stories the sandbox tells, each a running system of real Apache Kafka plus the incident
it can trigger.

* old-consumer: the seeds' incident. A ZooKeeper, an Apache Kafka 0.8.2.2 broker, and an order
  service on 0.8.2.2's own old (ZooKeeper-based) consumer, one connector over three topics. The
  incident: the payments handler's gateway stops answering, the payments stream queue fills, the
  shared ConsumerFetcherThread blocks in put() holding its partition-map lock, and orders and
  shipments starve.
* python: a billing service on a kafka-python group consumer (on a Kafka 3.9 broker) handing
  records to workers through a bounded queue. The incident: the workers hang, the queue fills, the
  poll loop blocks in put().

ZooKeeper and the brokers come from Kafka's released jars (`kafka_release`, fetched from Maven
Central on first use); every process binds 127.0.0.1 on free ports and is stopped by its PID.
"""

from __future__ import annotations

import contextlib
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafkadiag.errors import SandboxError
from kafkadiag.sandbox import kafka_release, order_service, servers, traffic
from kafkadiag.sandbox.child import CommandedProcess, start_commanded
from kafkadiag.sandbox.kafka_servers import KafkaBroker, start_zookeeper_broker

SCENARIOS = ("old-consumer", "python")
ORDER_TOPICS = {"orders": 2, "payments": 2, "shipments": 2}
HUNG_TOPIC = "payments"
BILLING_TOPICS = {"invoices": 2}
# The broker each scenario runs: the seeds' release for the old consumer; the last ZooKeeper-mode
# line for kafka-python (its ZooKeeper and broker then come from the same jars).
BROKER_RELEASE = {"old-consumer": order_service.RELEASE, "python": servers.ZOOKEEPER_FROM}
GROUP = {"old-consumer": "orders-service", "python": "billing-service"}
# After the queue fills, long enough for several auto-commits to show the starving topics' lag.
STALL_SETTLE_S = 4.0
# Status polls (0.2 s apart) in a row with every partition consumed and no queue full.
HEALTHY_SETTLED_POLLS = 5


@dataclass
class Sandbox:
    """What is running, and what kafkadiag needs to look at it."""

    scenario: str
    zookeeper: servers.ServerProcess
    broker: KafkaBroker
    producers: traffic.Producers
    consumer: CommandedProcess
    group: str
    topics: dict[str, int]
    workdir: Path
    consumer_details: dict[str, Any] = field(default_factory=dict)

    @property
    def pid(self) -> int:
        return self.consumer.pid

    @property
    def zookeeper_connect(self) -> str:
        """ZooKeeper with the broker's chroot: where the cluster and the old consumer's group live."""
        return self.broker.zookeeper or self.zookeeper.address

    @property
    def incident(self) -> str:
        if self.scenario == "old-consumer":
            return f"the payment gateway the {HUNG_TOPIC} handler calls stops answering"
        return "the payment gateway the billing workers call stops answering"

    def diagnose_arguments(self) -> list[str]:
        """What `kafkadiag diagnose` needs to look at this sandbox, as a user would type it."""
        arguments = ["--bootstrap-server", self.broker.address, "--group", self.group, "--pid", str(self.pid)]
        if self.scenario == "old-consumer":
            arguments = ["--zookeeper", self.zookeeper_connect, *arguments]
        return arguments

    def commands_to_try(self) -> list[str]:
        diagnose = " ".join(["kafkadiag diagnose", *self.diagnose_arguments()])
        if self.scenario == "old-consumer":
            source = f"--zookeeper {self.zookeeper_connect} --group {self.group}"
            return [
                diagnose,
                f"kafkadiag lag {source} --bootstrap-server {self.broker.address}",
                f"kafkadiag maxlag --pid {self.pid} {source}",
                f"jstack -l {self.pid} > dump.txt && kafkadiag dump analyze dump.txt",
            ]
        return [
            diagnose,
            f"kafkadiag lag --bootstrap-server {self.broker.address} --group {self.group}",
            f"py-spy dump --pid {self.pid} > dump.txt && kafkadiag dump analyze dump.txt",
        ]

    def trigger_incident(self) -> None:
        if self.scenario == "old-consumer":
            self.consumer.command(f"hang {HUNG_TOPIC}")
        else:
            self.consumer.command("hang")

    def wait_until_consuming(self, timeout_s: float = 60.0) -> dict[str, Any]:
        """Wait until every partition has been consumed from and committed once: the healthy state."""
        deadline = time.monotonic() + timeout_s
        settled = 0
        while time.monotonic() < deadline:
            self._check_producers()
            status = self.consumer.status()
            # Caught up, not only started: while the consumer works through the records produced
            # before it started, its queues are full for moments, and a diagnosis then rightly
            # says so. Healthy is every partition consumed and no queue full for a second.
            consuming = len(status["done"]) == sum(self.topics.values())
            settled = settled + 1 if consuming and not _any_queue_full(self.scenario, status) else 0
            if settled >= HEALTHY_SETTLED_POLLS:
                # One more commit interval, so the committed offsets are recent.
                time.sleep(1.2)
                return self.consumer.status()
            time.sleep(0.2)
        raise SandboxError(f"the {self.scenario} consumer did not catch up within {timeout_s:.0f} s")

    def wait_until_stalled(self, timeout_s: float = 30.0) -> dict[str, Any]:
        """Wait until the hand-off queue is full, then let the lag build up; return the status."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            self._check_producers()
            status = self.consumer.status()
            if _queue_full(self.scenario, status):
                time.sleep(STALL_SETTLE_S)
                return self.consumer.status()
            time.sleep(0.2)
        raise SandboxError(f"the {self.scenario} consumer did not stall within {timeout_s:.0f} s")

    def _check_producers(self) -> None:
        if self.producers.error is not None:
            raise SandboxError(f"the sandbox's producers stopped: {self.producers.error}")

    def connection_details(self) -> list[str]:
        lines = [
            f"ZooKeeper:  {self.zookeeper_connect}  (pid {self.zookeeper.pid})",
            f"Broker:     {self.broker.address}  (pid {self.broker.pid}), Apache Kafka {self.broker.version}",
            f"Consumer:   pid {self.pid}, group {self.group}, topics {', '.join(self.topics)}",
        ]
        lines += [f"            {key}: {value}" for key, value in self.consumer_details.items()]
        return lines


def _any_queue_full(scenario: str, status: dict[str, Any]) -> bool:
    if scenario == "old-consumer":
        return any(q["size"] >= q["capacity"] for q in status["queues"])
    return bool(status["queued"] >= status["capacity"])


def _queue_full(scenario: str, status: dict[str, Any]) -> bool:
    if scenario == "old-consumer":
        return any(q["topic"] == HUNG_TOPIC and q["size"] >= q["capacity"] for q in status["queues"])
    return bool(status["queued"] >= status["capacity"])


def prepare(scenario: str, step: Callable[[str], None]) -> None:
    """What the scenario needs on disk before anything starts: a JDK, Kafka's jars (fetched from
    Maven Central once), the order service's classes (compiled once). Fails before any process runs."""
    servers.java_tool("java")
    if scenario == "old-consumer":
        servers.java_tool("javac")
    for release in dict.fromkeys([servers.ZOOKEEPER_FROM, BROKER_RELEASE[scenario]]):
        kafka_release.release_jars(release, notify=step)
    if scenario == "old-consumer":
        order_service.compiled_classes(notify=step)


@contextlib.contextmanager
def running_sandbox(scenario: str, step: Callable[[str], None] = lambda _: None) -> Iterator[Sandbox]:
    """Start everything the scenario needs; stop every process by PID on the way out, whatever happens."""
    if scenario not in SCENARIOS:
        raise SandboxError(f"no scenario {scenario!r}", help_text=f"Choose one of: {', '.join(SCENARIOS)}.")
    prepare(scenario, step)
    release = BROKER_RELEASE[scenario]
    topics = ORDER_TOPICS if scenario == "old-consumer" else BILLING_TOPICS
    group = GROUP[scenario]
    stack = contextlib.ExitStack()
    # The directory goes last: the processes writing into it are stopped first.
    with tempfile.TemporaryDirectory(prefix="kafkadiag-demo-") as temporary, stack:
        workdir = Path(temporary)
        step(f"Starting ZooKeeper (from Apache Kafka {servers.ZOOKEEPER_FROM}'s jars)")
        zookeeper = servers.start_zookeeper(workdir / "zookeeper")
        stack.callback(_stop_said, step, f"ZooKeeper (pid {zookeeper.pid})", zookeeper.stop)
        step(f"ZooKeeper is up on {zookeeper.address} (pid {zookeeper.pid})")
        step(f"Starting the Apache Kafka {release} broker")
        broker = start_zookeeper_broker(release, workdir / "kafka", zookeeper.address)
        stack.callback(_stop_said, step, f"the broker (pid {broker.pid})", broker.stop)
        step(f"The Apache Kafka {release} broker is up on {broker.address} (pid {broker.pid})")
        step(f"Creating topics {', '.join(topics)}")
        traffic.create_topics(broker, workdir / "tools", topics)
        producers = traffic.Producers(broker, topics)
        producers.start()
        stack.callback(_stop_said, step, "the producers", producers.stop)
        if scenario == "old-consumer":
            step(f"Starting the order service (Kafka {release}'s old consumer: one connector, three topics)")
            assert broker.zookeeper is not None
            consumer = order_service.start_order_service(workdir, broker.zookeeper, group, list(topics))
            stack.callback(_stop_said, step, f"the {consumer.name} (pid {consumer.pid})", consumer.stop)
            details = {"consumer id": order_service.consumer_id(broker.zookeeper, group)}
        else:
            step("Starting the billing service (kafka-python group consumer with a worker pool)")
            consumer = _start_billing_service(workdir, broker, group, next(iter(topics)))
            stack.callback(_stop_said, step, f"the {consumer.name} (pid {consumer.pid})", consumer.stop)
            details = {"client id": "billing-service"}
        step(f"The {consumer.name} is up (pid {consumer.pid})")
        try:
            yield Sandbox(
                scenario, zookeeper, broker, producers, consumer, group, dict(topics), workdir, details
            )
        except KeyboardInterrupt:
            step("Interrupted: stopping every sandbox process")
            raise


def _stop_said(step: Callable[[str], None], what: str, stop: Callable[[], None]) -> None:
    """Stop one process, saying so first: a broker's clean shutdown takes seconds, and a silent
    wait after Ctrl-C looks like a hang."""
    step(f"Stopping {what}...")
    stop()


def _start_billing_service(workdir: Path, broker: KafkaBroker, group: str, topic: str) -> CommandedProcess:
    argv = [
        sys.executable, "-m", "kafkadiag.sandbox.billing_consumer",
        "--bootstrap-server", broker.address, "--group", group, "--topic", topic,
    ]  # fmt: skip
    return start_commanded("billing service", argv, workdir / "billing-service.log")
