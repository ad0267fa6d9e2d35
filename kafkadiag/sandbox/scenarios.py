"""The two stories the sandbox tells, each a running system plus the incident it can trigger.

* old-consumer: an order service on the old (ZooKeeper-based) consumer, one connector over three
  topics. The incident: the payments handler hangs, its stream queue fills, the shared fetcher
  blocks in put() holding its partition-map lock, and orders and shipments starve.
* python: a billing service on a kafka-python group consumer handing records to workers through
  a bounded queue. The incident: the workers hang, the queue fills, the poll loop blocks in put().
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
from kafkadiag.sandbox import servers, traffic
from kafkadiag.sandbox.child import CommandedProcess, start_commanded
from kafkadiag.sandbox.order_service import consumer_id, start_order_service

SCENARIOS = ("old-consumer", "python")
ORDER_TOPICS = {"orders": 2, "payments": 2, "shipments": 2}
HUNG_TOPIC = "payments"
BILLING_TOPICS = {"invoices": 2}
# After the queue fills, long enough for several auto-commits to show the starving topics' lag.
STALL_SETTLE_S = 4.0


@dataclass
class Sandbox:
    """What is running, and what kafkadiag needs to look at it."""

    scenario: str
    zookeeper: servers.ServerProcess
    broker: servers.ServerProcess
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
    def incident(self) -> str:
        if self.scenario == "old-consumer":
            return f"the {HUNG_TOPIC} handler stops returning (its downstream call hangs)"
        return "the payment gateway the billing workers call stops answering"

    def diagnose_arguments(self) -> list[str]:
        """What `kafkadiag diagnose` needs to look at this sandbox, as a user would type it."""
        arguments = ["--bootstrap-server", self.broker.address, "--group", self.group, "--pid", str(self.pid)]
        if self.scenario == "old-consumer":
            arguments = ["--zookeeper", self.zookeeper.address, *arguments]
        return arguments

    def commands_to_try(self) -> list[str]:
        diagnose = " ".join(["kafkadiag diagnose", *self.diagnose_arguments()])
        if self.scenario == "old-consumer":
            source = f"--zookeeper {self.zookeeper.address} --group {self.group}"
            return [
                diagnose,
                f"kafkadiag lag {source}",
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

    def wait_until_consuming(self, timeout_s: float = 30.0) -> dict[str, Any]:
        """Wait until every partition has been consumed from and committed once: the healthy state."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            status = self.consumer.status()
            if _consuming(self.scenario, status, self.topics):
                # One more commit interval, so the committed offsets are recent.
                time.sleep(1.2)
                return self.consumer.status()
            time.sleep(0.2)
        raise SandboxError(f"the {self.scenario} consumer did not start consuming within {timeout_s:.0f} s")

    def wait_until_stalled(self, timeout_s: float = 30.0) -> dict[str, Any]:
        """Wait until the hand-off queue is full, then let the lag build up; return the status."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            status = self.consumer.status()
            if _queue_full(self.scenario, status):
                time.sleep(STALL_SETTLE_S)
                return self.consumer.status()
            time.sleep(0.2)
        raise SandboxError(f"the {self.scenario} consumer did not stall within {timeout_s:.0f} s")

    def connection_details(self) -> list[str]:
        lines = [
            f"ZooKeeper:  {self.zookeeper.address}  (pid {self.zookeeper.pid})",
            f"Broker:     {self.broker.address}  (pid {self.broker.pid})",
            f"Consumer:   pid {self.pid}, group {self.group}, topics {', '.join(self.topics)}",
        ]
        lines += [f"            {key}: {value}" for key, value in self.consumer_details.items()]
        return lines


def _consuming(scenario: str, status: dict[str, Any], topics: dict[str, int]) -> bool:
    if scenario == "old-consumer":
        return all(partition["consumed_offset"] > 0 for partition in status["partitions"])
    return len(status["done"]) == sum(topics.values())


def _queue_full(scenario: str, status: dict[str, Any]) -> bool:
    if scenario == "old-consumer":
        return any(q["topic"] == HUNG_TOPIC and q["size"] >= q["capacity"] for q in status["queues"])
    return bool(status["queued"] >= status["capacity"])


@contextlib.contextmanager
def running_sandbox(scenario: str, step: Callable[[str], None] = lambda _: None) -> Iterator[Sandbox]:
    """Start everything the scenario needs; stop every process by PID on the way out, whatever happens."""
    if scenario not in SCENARIOS:
        raise SandboxError(f"no scenario {scenario!r}", help_text=f"Choose one of: {', '.join(SCENARIOS)}.")
    servers.java_tool("java")  # fail before starting anything when there is no JDK
    stack = contextlib.ExitStack()
    # The directory goes last: the processes writing into it are stopped first.
    with tempfile.TemporaryDirectory(prefix="kafkadiag-demo-") as temporary, stack:
        workdir = Path(temporary)
        step("Starting ZooKeeper")
        zookeeper = servers.start_zookeeper(workdir / "zookeeper")
        stack.callback(zookeeper.stop)
        step(f"ZooKeeper is up on {zookeeper.address} (pid {zookeeper.pid})")
        step("Starting the Kafka-protocol broker")
        broker = servers.start_tansu(workdir / "broker")
        stack.callback(broker.stop)
        step(f"The broker is up on {broker.address} (pid {broker.pid})")
        topics = ORDER_TOPICS if scenario == "old-consumer" else BILLING_TOPICS
        step(f"Creating topics {', '.join(topics)}")
        broker_id = traffic.create_topics(broker.address, topics)
        producers = traffic.Producers(broker.address, topics)
        producers.start()
        stack.callback(producers.stop)
        if scenario == "old-consumer":
            group = "orders-service"
            step("Starting the order service (old consumer, one connector over three topics)")
            consumer = start_order_service(
                workdir, zookeeper.address, broker_id, broker.address, group, topics
            )
            details = {"consumer id": consumer_id(consumer)}
        else:
            group = "billing-service"
            step("Starting the billing service (kafka-python group consumer with a worker pool)")
            consumer = start_commanded(
                "billing service",
                [
                    sys.executable,
                    "-m",
                    "kafkadiag.sandbox.billing_consumer",
                    "--bootstrap-server",
                    broker.address,
                    "--group",
                    group,
                    "--topic",
                    next(iter(topics)),
                ],
                workdir / "billing-service.log",
            )
            details = {"client id": "billing-service"}
        stack.callback(consumer.stop)
        step(f"The {consumer.name} is up (pid {consumer.pid})")
        yield Sandbox(scenario, zookeeper, broker, producers, consumer, group, dict(topics), workdir, details)
