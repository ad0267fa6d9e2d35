"""The sandbox's old-consumer application: an order service (Java sources in jvm/, shipped with the
package) written against Apache Kafka 0.8.2.2's public consumer API, compiled on first use against
the release's real jars and run with them.

One connector reads orders, payments and shipments, one stream per topic, each on a worker thread
of the service's pool (`order-worker-<topic>`). It registers in ZooKeeper, owns its partitions and
auto-commits there, and publishes the consumer's metrics through metrics-core's JmxReporter, all by
Kafka's own code. The driver talks to it over stdin/stdout (child.py): `hang payments` makes the
payment gateway stop answering; `status` gives the offsets handled and each stream queue's fill.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

from kafkadiag.errors import SandboxError
from kafkadiag.sandbox import kafka_release
from kafkadiag.sandbox.child import CommandedProcess, start_commanded
from kafkadiag.sandbox.kafka_servers import java_argv
from kafkadiag.sandbox.servers import java_tool

# The seeds' release: its broker, its old consumer and the jars the service compiles against.
RELEASE = "0.8.2.2"
SOURCES = Path(__file__).parent / "jvm"
MAIN_CLASS = "com.example.orders.OrderService"
# Passed as -D system properties, which the service hands to the consumer and kafkadiag reads from
# the JVM (`diagnose --pid` bounds what the consumer buffers with them).
CONSUMER_SETTINGS = {
    "queued.max.message.chunks": "2",
    "fetch.message.max.bytes": "1048576",
    # Offsets reach ZooKeeper every second, so the committed lag moves while one watches.
    "auto.commit.interval.ms": "1000",
}


def compiled_classes(notify: Callable[[str], None] | None = None) -> Path:
    """The service's classes, compiled once per source and release into kafkadiag's cache."""
    sources = sorted(SOURCES.rglob("*.java"))
    classpath = kafka_release.classpath(RELEASE, notify)
    digest = hashlib.sha256(RELEASE.encode())
    for source in sources:
        digest.update(str(source.relative_to(SOURCES)).encode())
        digest.update(source.read_bytes())
    classes = kafka_release.cache_root() / "sandbox" / f"order-service-{digest.hexdigest()[:16]}"
    if (classes / "COMPLETE").exists():
        return classes
    if notify is not None:
        notify(f"Compiling the order service against Apache Kafka {RELEASE}'s jars (once)")
    building = classes.with_name(classes.name + f".building-{os.getpid()}")
    building.mkdir(parents=True, exist_ok=True)
    argv = [java_tool("javac"), "--release", "17", "-nowarn", "-d", str(building), "-cp", classpath]
    done = subprocess.run(
        [*argv, *map(str, sources)], capture_output=True, text=True, timeout=300, stdin=subprocess.DEVNULL
    )
    if done.returncode != 0:
        shutil.rmtree(building, ignore_errors=True)
        raise SandboxError(f"javac could not compile the sandbox's order service:\n{done.stderr[-3000:]}")
    (building / "COMPLETE").write_text("")
    try:
        building.rename(classes)
    except OSError:
        pass  # another run finished first: its classes are the same
    return classes


def start_order_service(workdir: Path, zookeeper: str, group: str, topics: list[str]) -> CommandedProcess:
    """Started and ready: its streams are created, so it is registered and owns its partitions.
    `zookeeper` is the broker's connect string (with its chroot)."""
    argv = java_argv(
        RELEASE, workdir, "order-service", MAIN_CLASS,
        "--zookeeper", zookeeper, "--group", group, "--topics", ",".join(topics),
    )  # fmt: skip
    classpath = argv.index("-cp")
    argv[classpath + 1] += os.pathsep + str(compiled_classes())
    argv[classpath:classpath] = [f"-D{name}={value}" for name, value in CONSUMER_SETTINGS.items()]
    return start_commanded("order service", argv, workdir / "order-service.log")


def consumer_id(zookeeper: str, group: str) -> str:
    """The id the connector registered under /consumers/<group>/ids (it names the fetcher thread)."""
    import logging

    from kazoo.client import KazooClient

    logging.getLogger("kazoo.client").setLevel(logging.CRITICAL)
    client = KazooClient(hosts=zookeeper, timeout=10.0, read_only=True)
    client.start(timeout=10.0)
    try:
        ids = client.get_children(f"/consumers/{group}/ids")
    finally:
        client.stop()
        client.close()
    if len(ids) != 1:
        raise SandboxError(f"expected one consumer registered in group {group}, ZooKeeper lists {ids}")
    return str(ids[0])
