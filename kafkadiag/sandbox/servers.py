"""A ZooKeeper server from Apache Kafka's own jars (Kafka 3.9 carries ZooKeeper 3.8), and how the
sandbox starts and stops processes.

Servers bind to 127.0.0.1 on free ports, log into their own work directory and are stopped by PID
(SIGTERM, then SIGKILL after a grace period). A server is ready when a real client session works,
not when its port opens.
"""

from __future__ import annotations

import atexit
import contextlib
import fnmatch
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, TypeVar

from kafkadiag.errors import SandboxError
from kafkadiag.sandbox import kafka_release

# The release whose jars carry the ZooKeeper server (3.8.4) and client the sandbox runs.
ZOOKEEPER_FROM = "3.9.1"
# ZooKeeperServerMain needs these jars: without metrics-core (4.x, dropwizard) it fails at start,
# without snappy-java `ruok` answers but every session dies.
ZOOKEEPER_JAR_PATTERNS = (
    "zookeeper-[0-9]*.jar",
    "zookeeper-jute-*.jar",
    "slf4j-api-*.jar",
    "metrics-core-*.jar",
    "snappy-java-*.jar",
)


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def port_is_open(port: int, host: str = "127.0.0.1") -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.settimeout(0.2)
        return sock.connect_ex((host, port)) == 0


@dataclass
class ServerProcess:
    """A started process, known by its PID; `stop` ends exactly that process."""

    name: str
    process: subprocess.Popen[bytes]
    port: int
    log_path: Path
    workdir: Path
    stopped: bool = field(default=False)

    @property
    def pid(self) -> int:
        return self.process.pid

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def log_tail(self, characters: int = 4000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-characters:]
        except OSError:
            return ""

    def pause(self) -> None:
        """Freeze the server (SIGSTOP): connections stay open but nothing answers. Returns once
        the process is stopped: the signal is delivered when the kernel next schedules it, and
        on a loaded machine a thread already running could answer one more request."""
        import psutil

        os.kill(self.pid, signal.SIGSTOP)
        deadline = time.monotonic() + 5.0
        while time.monotonic() < deadline:
            try:
                threads = psutil.Process(self.pid).threads()
                states = {_thread_state(self.pid, thread.id) for thread in threads}
            except psutil.Error:
                return  # gone: nothing will answer either
            if states <= {"T", "t", "Z", "X", ""}:
                return
            time.sleep(0.005)

    def resume(self) -> None:
        os.kill(self.pid, signal.SIGCONT)

    def stop(self, grace_s: float = 10.0) -> None:
        if self.stopped:
            return
        self.stopped = True
        stop_process(self.process, grace_s)


def stop_process(process: subprocess.Popen[bytes] | subprocess.Popen[str], grace_s: float) -> None:
    """SIGTERM (after SIGCONT, in case it was frozen), then SIGKILL once the grace period is over."""
    if process.poll() is not None:
        return
    with contextlib.suppress(ProcessLookupError):
        os.kill(process.pid, signal.SIGCONT)
        os.kill(process.pid, signal.SIGTERM)
    try:
        process.wait(timeout=grace_s)
    except subprocess.TimeoutExpired:
        _kill(process)
    except KeyboardInterrupt:
        # Interrupted again while waiting for it to stop: whoever pressed Ctrl-C wants out now.
        _kill(process)
        raise


def _kill(process: subprocess.Popen[bytes] | subprocess.Popen[str]) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.kill(process.pid, signal.SIGKILL)
    process.wait(timeout=10)


_started: list[ServerProcess] = []


@atexit.register
def _stop_leftovers() -> None:
    # A library caller that exits without stopping its servers must not leave them behind (the
    # CLI ends with os._exit, which skips this: it stops what it started itself).
    for server in _started:
        server.stop(grace_s=3.0)


Started = TypeVar("Started", bound="Stoppable")


class Stoppable(Protocol):
    def stop(self) -> None: ...


@contextlib.contextmanager
def starting(start: Callable[[], Started]) -> Iterator[Started]:
    """Start a process, and stop it when what follows (waiting for it to be ready) fails or is
    interrupted: its caller learns of it only once it is ready, so nothing else would stop it.

    A Ctrl-C or SIGTERM that arrives while the process is being spawned is held back and delivered
    once the process is guarded, so no instant is left in which it could be lost.
    """
    held = _HeldSignals()
    try:
        held.hold()
        started = start()
    except BaseException:
        held.release()
        raise
    try:
        held.release(before_exit=started.stop)
        yield started
    except BaseException:
        started.stop()
        raise


class _HeldSignals:
    """SIGINT and SIGTERM recorded instead of handled until `release`, which restores the handlers
    and hands a recorded signal to its handler. Python handles signals in the main thread only:
    elsewhere nothing is held."""

    SIGNALS = (signal.SIGINT, signal.SIGTERM)

    def __init__(self) -> None:
        self.arrived: list[int] = []
        self.previous: dict[int, Any] = {}

    def hold(self) -> None:
        if threading.current_thread() is not threading.main_thread():
            return
        for sig in self.SIGNALS:
            # One at a time: a handler that raises for the second signal meanwhile leaves the
            # first one's restorable.
            self.previous[sig] = signal.signal(sig, self._record)

    def _record(self, signum: int, frame: object) -> None:
        self.arrived.append(signum)

    def release(self, before_exit: Callable[[], None] | None = None) -> None:
        """`before_exit` runs before a held signal whose handling is to end the process."""
        while self.previous:
            sig, handler = self.previous.popitem()
            # None: a handler installed outside Python, which cannot be put back from here.
            signal.signal(sig, signal.SIG_DFL if handler is None else handler)
        # In order of arrival. A handler that raises (SIGINT's KeyboardInterrupt) ends the delivery:
        # the process is stopping, and a later SIGTERM's default action would only cut its cleanup.
        for signum in dict.fromkeys(self.arrived):
            handler = signal.getsignal(signum)
            if callable(handler):
                handler(signum, None)
            elif handler == signal.SIG_DFL:
                if before_exit is not None:
                    before_exit()
                os.kill(os.getpid(), signum)


def spawn(
    name: str, argv: list[str], workdir: Path, port: int, env: dict[str, str] | None = None
) -> ServerProcess:
    log_path = workdir / f"{name}.log"
    log = open(log_path, "wb")  # noqa: SIM115 - the child keeps writing to it
    process = subprocess.Popen(
        argv,
        stdout=log,
        stderr=subprocess.STDOUT,
        stdin=subprocess.DEVNULL,
        cwd=workdir,
        env=env,
        # Its own session: a Ctrl-C in the terminal reaches kafkadiag, which stops it by PID.
        start_new_session=True,
    )
    log.close()
    server = ServerProcess(name, process, port, log_path, workdir)
    _started.append(server)
    return server


def java_tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise SandboxError(
            f"{name} is not on PATH", help_text="Install a JDK (17 or later) and put its bin/ on PATH."
        )
    return found


def kafka_jars(patterns: tuple[str, ...]) -> list[str]:
    """The newest jar of each pattern among Kafka 3.9's (ZooKeeper 3.8 and its Netty), fetched
    from Maven Central on first use (`kafka_release`)."""
    release_jars = kafka_release.release_jars(ZOOKEEPER_FROM)
    jars = []
    for pattern in patterns:
        found = sorted(str(jar) for jar in release_jars if fnmatch.fnmatch(jar.name, pattern))
        if not found:
            raise SandboxError(
                f"no {pattern} among the jars in {kafka_release.libs_dir(ZOOKEEPER_FROM)}",
                help_text=f"Fetch it again: python -m kafkadiag.sandbox.kafka_release fetch {ZOOKEEPER_FROM}",
            )
        jars.append(found[-1])
    return jars


def _thread_state(pid: int, tid: int) -> str:
    """The kernel's state letter of one thread ("T" once a SIGSTOP stopped it), "" when gone."""
    try:
        with open(f"/proc/{pid}/task/{tid}/stat", encoding="ascii", errors="replace") as stat:
            return stat.read().rpartition(")")[2].split()[0]
    except (OSError, IndexError):
        return ""


def zookeeper_classpath() -> str:
    return os.pathsep.join(kafka_jars(ZOOKEEPER_JAR_PATTERNS))


def start_zookeeper(
    workdir: Path, ready_timeout_s: float = 30.0, jvm_options: tuple[str, ...] = ()
) -> ServerProcess:
    """A real ZooKeeper on a free 127.0.0.1 port (`jvm_options` come after the defaults: an
    -Xmx there wins)."""
    java = java_tool("java")
    workdir.mkdir(parents=True, exist_ok=True)
    data_dir = workdir / "data"
    data_dir.mkdir(exist_ok=True)
    port = free_port()
    config = workdir / "zoo.cfg"
    config.write_text(
        "tickTime=2000\n"
        f"dataDir={data_dir}\n"
        f"clientPort={port}\n"
        "clientPortAddress=127.0.0.1\n"
        # Else Jetty binds :8080 on every interface.
        "admin.enableServer=false\n"
        "4lw.commands.whitelist=ruok,srvr,stat,mntr\n"
        "maxClientCnxns=0\n"
    )
    argv = [
        java,
        "-Xmx256m",
        "-XX:+UseSerialGC",
        *jvm_options,
        "-cp",
        zookeeper_classpath(),
        "org.apache.zookeeper.server.ZooKeeperServerMain",
        str(config),
    ]
    with starting(lambda: spawn("zookeeper", argv, workdir, port)) as server:
        wait_for_zookeeper_session(server, ready_timeout_s)
    return server


def wait_for_zookeeper_session(server: ServerProcess, timeout_s: float) -> None:
    """Ready means a real session can create a node, not that `ruok` answers."""
    import logging

    from kazoo.client import KazooClient

    # A server still starting drops connections; kazoo would log each drop on stderr.
    logging.getLogger("kazoo.client").setLevel(logging.CRITICAL)
    deadline = time.monotonic() + timeout_s
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise SandboxError(f"ZooKeeper exited with {server.process.returncode}:\n{server.log_tail()}")
        if not port_is_open(server.port):
            time.sleep(0.05)
            continue
        # Short timeouts: a server still starting accepts the TCP connection but does not answer.
        client = KazooClient(hosts=server.address, timeout=2.0)
        try:
            client.start(timeout=1.0)
            client.ensure_path("/kafkadiag-sandbox-ready")
            client.delete("/kafkadiag-sandbox-ready")
            return
        except Exception as error:  # noqa: BLE001 - retried until the deadline
            last_error = error
            time.sleep(0.1)
        finally:
            with contextlib.suppress(Exception):
                client.stop()
                client.close()
    server.stop()
    raise SandboxError(f"ZooKeeper not ready after {timeout_s}s ({last_error}):\n{server.log_tail()}")
