"""Apache Kafka's own servers, started from its released jars (`kafka_release`).

- ZooKeeper comes from `servers.start_zookeeper` (Kafka 3.9's jars, ZooKeeper 3.8); it serves every
  ZooKeeper-mode broker from 0.8.2 on and the old consumer's nodes.
- A ZooKeeper-mode broker of any release up to 3.9 (`start_zookeeper_broker`), under a chroot of
  its own so that several brokers share one ZooKeeper.
- A KRaft broker (4.x, `start_kraft_broker`), its own controller, its storage formatted first.

The JVMs are started here rather than through Kafka's bin scripts: the scripts of 0.8 to 1.0 pass
GC options that Java 17 rejects (UseParNewGC, PrintGCDateStamps). Every server binds 127.0.0.1 on
free ports, logs into its work directory and is stopped by PID (`servers.ServerProcess`).
"""

from __future__ import annotations

import base64
import contextlib
import subprocess
import time
import uuid
from dataclasses import dataclass
from pathlib import Path

from kafkadiag.errors import SandboxError
from kafkadiag.sandbox import kafka_release
from kafkadiag.sandbox.servers import ServerProcess, free_port, java_tool, port_is_open, spawn, starting

# The first release whose broker takes `listeners` (0.8 has host.name and port).
LISTENERS_FROM = (0, 9)
KRAFT_FROM = (4, 0)
BROKER_HEAP = "-Xmx384m"

_LOG4J1 = """log4j.rootLogger=INFO, file
log4j.appender.file=org.apache.log4j.FileAppender
log4j.appender.file.File={log}
log4j.appender.file.layout=org.apache.log4j.PatternLayout
log4j.appender.file.layout.ConversionPattern=[%d] %p %m (%c)%n
"""
_LOG4J2 = """status = warn
appender.file.type = File
appender.file.name = file
appender.file.fileName = {log}
appender.file.layout.type = PatternLayout
appender.file.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = info
rootLogger.appenderRef.file.ref = file
"""


def version_tuple(version: str) -> tuple[int, ...]:
    return tuple(int(part) for part in version.split("."))


@dataclass
class KafkaBroker:
    """A running broker: its process, its release, and how clients and ZooKeeper tools reach it."""

    server: ServerProcess
    version: str
    # host:port/chroot of its ZooKeeper (None for KRaft).
    zookeeper: str | None
    broker_id: int = 0

    @property
    def address(self) -> str:
        return self.server.address

    @property
    def pid(self) -> int:
        return self.server.pid

    def stop(self) -> None:
        self.server.stop()


def start_zookeeper_broker(
    version: str,
    workdir: Path,
    zookeeper: str,
    *,
    auto_create_topics: bool = True,
    settings: dict[str, str] | None = None,
    jvm_options: tuple[str, ...] = (),
    ready_timeout_s: float = 60.0,
) -> KafkaBroker:
    """A broker of `version` (0.8.2 to 3.9) registered under a chroot of its own in `zookeeper`
    (`jvm_options` come after the defaults: an -Xmx there wins)."""
    if version_tuple(version) >= KRAFT_FROM:
        raise SandboxError(f"Kafka {version} has no ZooKeeper mode", help_text="Use start_kraft_broker.")
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    chroot = f"/kafka-{version.replace('.', '_')}-{uuid.uuid4().hex[:6]}"
    connect = f"{zookeeper}{chroot}"
    properties = {
        "broker.id": "0",
        "log.dirs": str(workdir / "data"),
        "zookeeper.connect": connect,
        "zookeeper.connection.timeout.ms": "15000",
        "num.partitions": "1",
        "auto.create.topics.enable": "true" if auto_create_topics else "false",
        # One broker: the offsets topic cannot have three replicas, and fifty partitions only
        # slow its creation.
        "offsets.topic.replication.factor": "1",
        "offsets.topic.num.partitions": "4",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "group.initial.rebalance.delay.ms": "0",
        "controlled.shutdown.enable": "false",
        "log.cleaner.dedupe.buffer.size": str(2 * 1024 * 1024),
    }
    if version_tuple(version) >= LISTENERS_FROM:
        properties["listeners"] = f"PLAINTEXT://127.0.0.1:{port}"
        properties["advertised.listeners"] = f"PLAINTEXT://127.0.0.1:{port}"
    else:
        properties.update(
            {
                "host.name": "127.0.0.1",
                "port": str(port),
                "advertised.host.name": "127.0.0.1",
                "advertised.port": str(port),
            }
        )
    properties.update(settings or {})
    config = _write_properties(workdir / "server.properties", properties)
    argv = _broker_argv(version, workdir, config, jvm_options)
    with starting(lambda: spawn("kafka", argv, workdir, port)) as server:
        _wait_for_registration(server, zookeeper, chroot, ready_timeout_s)
        _wait_for_port(server, ready_timeout_s)
    return KafkaBroker(server, version, connect)


def start_kraft_broker(
    version: str,
    workdir: Path,
    *,
    listener: str = "PLAINTEXT",
    settings: dict[str, str] | None = None,
    format_arguments: tuple[str, ...] = (),
    jvm_options: tuple[str, ...] = (),
    ready_timeout_s: float = 60.0,
) -> KafkaBroker:
    """A KRaft broker of `version` (4.x) that is its own controller, its client listener speaking
    `listener` (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL: their settings come in `settings`, a
    JAAS file in `jvm_options`). `format_arguments` go to the storage format (--add-scram ...)."""
    workdir.mkdir(parents=True, exist_ok=True)
    port, controller_port = free_port(), free_port()
    properties = {
        "process.roles": "broker,controller",
        "node.id": "1",
        "controller.quorum.voters": f"1@127.0.0.1:{controller_port}",
        "listeners": f"{listener}://127.0.0.1:{port},CONTROLLER://127.0.0.1:{controller_port}",
        "advertised.listeners": f"{listener}://127.0.0.1:{port}",
        "controller.listener.names": "CONTROLLER",
        "inter.broker.listener.name": listener,
        "listener.security.protocol.map": f"{listener}:{listener},CONTROLLER:PLAINTEXT",
        "log.dirs": str(workdir / "data"),
        "num.partitions": "1",
        "offsets.topic.replication.factor": "1",
        "offsets.topic.num.partitions": "4",
        "transaction.state.log.replication.factor": "1",
        "transaction.state.log.min.isr": "1",
        "share.coordinator.state.topic.replication.factor": "1",
        "share.coordinator.state.topic.min.isr": "1",
        "group.initial.rebalance.delay.ms": "0",
        "log.cleaner.dedupe.buffer.size": str(2 * 1024 * 1024),
    }
    properties.update(settings or {})
    config = _write_properties(workdir / "server.properties", properties)
    _format_storage(version, workdir, config, format_arguments)
    argv = _broker_argv(version, workdir, config, jvm_options)
    with starting(lambda: spawn("kafka", argv, workdir, port)) as server:
        _wait_for_port(server, ready_timeout_s)
        if listener == "PLAINTEXT":
            _wait_for_metadata(server, ready_timeout_s)
        else:
            _wait_for_log_line(server, "Kafka Server started", ready_timeout_s)
    return KafkaBroker(server, version, None, broker_id=1)


def java_argv(version: str, workdir: Path, name: str, main_class: str, *arguments: str) -> list[str]:
    """A JVM running one of the release's classes (a tool, a console consumer) with its log in
    workdir/<name>.log."""
    return [
        java_tool("java"),
        "-Xmx256m",
        "-XX:+UseSerialGC",
        *_log_config(workdir, name, version),
        "-cp",
        kafka_release.classpath(version),
        main_class,
        *arguments,
    ]


def _broker_argv(version: str, workdir: Path, config: Path, jvm_options: tuple[str, ...] = ()) -> list[str]:
    argv = java_argv(version, workdir, "kafka-server", "kafka.Kafka", str(config))
    argv[1] = BROKER_HEAP
    argv[2:2] = jvm_options
    return argv


def _log_config(workdir: Path, name: str, version: str) -> list[str]:
    """JVM options that send the release's logging to workdir/<name>-log4j.log."""
    log = workdir / f"{name}-log4j.log"
    if version_tuple(version) >= KRAFT_FROM:
        path = workdir / f"{name}-log4j2.properties"
        path.write_text(_LOG4J2.format(log=log))
        return [f"-Dlog4j2.configurationFile={path}"]
    path = workdir / f"{name}-log4j.properties"
    path.write_text(_LOG4J1.format(log=log))
    return [f"-Dlog4j.configuration=file:{path}"]


def _write_properties(path: Path, properties: dict[str, str]) -> Path:
    path.write_text("".join(f"{key}={value}\n" for key, value in properties.items()))
    return path


def _cluster_id() -> str:
    """A random cluster id as Kafka's `random-uuid` writes it: base64url of 16 bytes, never
    starting with '-' (the storage tool would read such an id as an option)."""
    while True:
        cluster_id = base64.urlsafe_b64encode(uuid.uuid4().bytes).decode().rstrip("=")
        if not cluster_id.startswith("-"):
            return cluster_id


def _format_storage(version: str, workdir: Path, config: Path, extra: tuple[str, ...]) -> None:
    cluster_id = _cluster_id()
    arguments = ("format", "-t", cluster_id, "-c", str(config), *extra)
    argv = java_argv(version, workdir, "storage-format", "kafka.tools.StorageTool", *arguments)
    result = subprocess.run(argv, capture_output=True, text=True, timeout=120, stdin=subprocess.DEVNULL)
    if result.returncode != 0:
        output = (result.stdout + result.stderr)[-4000:]
        raise SandboxError(f"formatting the KRaft storage failed (exit {result.returncode}):\n{output}")


def _check_alive(server: ServerProcess) -> None:
    if server.process.poll() is not None:
        raise SandboxError(
            f"Kafka exited with {server.process.returncode}:\n{server.log_tail()}\n"
            + _tail(server.workdir / "kafka-server-log4j.log")
        )


def _tail(path: Path, characters: int = 4000) -> str:
    try:
        return path.read_text(errors="replace")[-characters:]
    except OSError:
        return ""


def _wait_for_registration(server: ServerProcess, zookeeper: str, chroot: str, timeout_s: float) -> None:
    """The broker registers /brokers/ids/<id> once it serves requests."""
    import logging

    from kazoo.client import KazooClient

    logging.getLogger("kazoo.client").setLevel(logging.CRITICAL)
    client = KazooClient(hosts=zookeeper, timeout=5.0, read_only=True)
    deadline = time.monotonic() + timeout_s
    try:
        client.start(timeout=10.0)
        while time.monotonic() < deadline:
            _check_alive(server)
            if client.exists(f"{chroot}/brokers/ids/0"):
                return
            time.sleep(0.1)
    finally:
        with contextlib.suppress(Exception):
            client.stop()
            client.close()
    raise SandboxError(f"the Kafka broker did not register within {timeout_s}s:\n{server.log_tail()}")


def _wait_for_port(server: ServerProcess, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        _check_alive(server)
        if port_is_open(server.port):
            return
        time.sleep(0.05)
    raise SandboxError(f"the Kafka broker did not listen on {server.port} within {timeout_s}s")


def _wait_for_log_line(server: ServerProcess, text: str, timeout_s: float) -> None:
    """For a listener that needs credentials to be asked: the broker logs when it serves."""
    deadline = time.monotonic() + timeout_s
    log = server.workdir / "kafka-server-log4j.log"
    while time.monotonic() < deadline:
        _check_alive(server)
        if text in _tail(log, 200_000):
            return
        time.sleep(0.1)
    raise SandboxError(f"the KRaft broker did not log {text!r} within {timeout_s}s:\n{_tail(log)}")


def _wait_for_metadata(server: ServerProcess, timeout_s: float) -> None:
    """A KRaft broker is ready when it lists itself in its metadata."""
    from kafka import KafkaAdminClient

    deadline = time.monotonic() + timeout_s
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        _check_alive(server)
        try:
            admin = KafkaAdminClient(bootstrap_servers=server.address, bootstrap_timeout_ms=3000)
            try:
                if admin.describe_cluster().get("brokers"):
                    return
            finally:
                admin.close()
        except Exception as error:  # noqa: BLE001 - retried until the deadline
            last_error = error
        time.sleep(0.2)
    raise SandboxError(
        f"the KRaft broker was not ready within {timeout_s}s ({last_error}):\n{server.log_tail()}"
    )
