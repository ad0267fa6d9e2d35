"""The sandbox's old-consumer application: a JVM (sources in jvm/, shipped with the package) that
runs an order service on a replica of Kafka 0.8.2's ZookeeperConsumerConnector.

It fetches from the real broker, registers itself and its partition ownership in the real
ZooKeeper and auto-commits there, and publishes its metrics under Kafka's MBean names. The
driver talks to it over stdin/stdout: `hang TOPIC` makes that topic's handler stop returning.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
from pathlib import Path

from kafkadiag.errors import SandboxError
from kafkadiag.sandbox.child import CommandedProcess, start_commanded
from kafkadiag.sandbox.servers import java_tool, zookeeper_client_classpath

SOURCES = Path(__file__).parent / "jvm"
MAIN_CLASS = "com.example.orders.OrderPipeline"
# The consumer settings the diagnosis reads from the JVM's system properties.
CONSUMER_SETTINGS = {
    "queued.max.message.chunks": "2",
    "fetch.message.max.bytes": "1048576",
    # Offsets reach ZooKeeper every second, so the committed lag moves while one watches.
    "auto.commit.interval.ms": "1000",
}


def compiled_classes(cache_root: Path | None = None) -> Path:
    """The classes compiled from the shipped sources, cached by the sources' hash."""
    sources = sorted(SOURCES.rglob("*.java"))
    digest = hashlib.sha256()
    for source in sources:
        digest.update(str(source.relative_to(SOURCES)).encode())
        digest.update(source.read_bytes())
    root = cache_root or Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "kafkadiag"
    classes = root / f"sandbox-classes-{digest.hexdigest()[:16]}"
    if (classes / "COMPLETE").exists():
        return classes
    building = classes.with_name(classes.name + f".building-{os.getpid()}")
    building.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [
            java_tool("javac"),
            "--release",
            "17",
            "-nowarn",
            "-d",
            str(building),
            "-cp",
            zookeeper_client_classpath(),
            *map(str, sources),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    if done.returncode != 0:
        raise SandboxError(f"javac could not compile the sandbox's order service:\n{done.stderr[-3000:]}")
    (building / "COMPLETE").write_text("")
    try:
        building.rename(classes)
    except OSError:
        pass  # another run finished first: its classes are the same
    return classes


def start_order_service(
    workdir: Path, zookeeper: str, broker_id: int, broker_address: str, group: str, partitions: dict[str, int]
) -> CommandedProcess:
    """Started and ready: announced its consumer id (`CONSUMER <id>`), owns its partitions."""
    classes = compiled_classes()
    host, port = broker_address.rsplit(":", 1)
    argv = [
        java_tool("java"),
        "-Xmx128m",
        "-XX:+UseSerialGC",
        *(f"-D{name}={value}" for name, value in CONSUMER_SETTINGS.items()),
        "-cp",
        os.pathsep.join([str(classes), zookeeper_client_classpath()]),
        MAIN_CLASS,
        "--zookeeper",
        zookeeper,
        "--group",
        group,
        "--broker",
        f"{broker_id}:{host}:{port}",
    ]
    for topic, count in partitions.items():
        argv += ["--topic", f"{topic}:{count}"]
    return start_commanded("order service", argv, workdir / "order-service.log")


def consumer_id(service: CommandedProcess) -> str:
    return next(line.split(" ", 1)[1] for line in service.announcements if line.startswith("CONSUMER "))
