"""Reading a real JVM over remote JMX (-Dcom.sun.management.jmxremote.port), with and without
authentication, and the ways a remote endpoint fails: refused, silent, wrong credentials."""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafkadiag.collect.jmx import jvm as jmx
from kafkadiag.collect.jmx.errors import (
    JmxAuthenticationError,
    JmxUnreachableError,
    JvmGoneError,
    MetricsSourceUsageError,
)
from kafkadiag.exitcodes import ExitCode
from tests.infra.servers import free_port
from tests.infra.workload import unique

SETTINGS = {
    "queued.max.message.chunks": "2",
    "fetch.message.max.bytes": "1000",
    "auto.commit.interval.ms": "200",
}


def remote_jmx_options(port: int, authenticate: bool = False, password_file: Path | None = None) -> list[str]:
    options = [
        f"-Dcom.sun.management.jmxremote.port={port}",
        f"-Dcom.sun.management.jmxremote.rmi.port={port}",
        "-Dcom.sun.management.jmxremote.host=127.0.0.1",
        "-Djava.rmi.server.hostname=127.0.0.1",
        "-Dcom.sun.management.jmxremote.ssl=false",
        f"-Dcom.sun.management.jmxremote.authenticate={'true' if authenticate else 'false'}",
    ]
    if password_file is not None:
        options += [
            f"-Dcom.sun.management.jmxremote.password.file={password_file}",
            f"-Dcom.sun.management.jmxremote.access.file={password_file.with_suffix('.access')}",
        ]
    return options


def test_service_urls_from_host_and_port() -> None:
    assert jmx.jmx_service_url("broker1:9999") == "service:jmx:rmi:///jndi/rmi://broker1:9999/jmxrmi"
    assert jmx.jmx_service_url("[::1]:9999") == "service:jmx:rmi:///jndi/rmi://[::1]:9999/jmxrmi"
    url = "service:jmx:rmi://127.0.0.1:1/jndi/rmi://127.0.0.1:2/jmxrmi"
    assert jmx.jmx_service_url(url) == url
    with pytest.raises(MetricsSourceUsageError):
        jmx.jmx_service_url("no-port")


def test_reads_the_mbeans_over_remote_jmx_by_host_port_and_by_url(start) -> None:
    # GIVEN a consumer replica with the JDK's remote JMX agent on a free port, no authentication
    group = unique("remote")
    port = free_port()
    consumer = start(
        group, ["orders:2:2"], SETTINGS, ["--hw", "orders:0:12"], jvm_options=remote_jmx_options(port)
    )
    consumer.wait_for(lambda s: s["partitions"][0]["committed_offset"] == 12, "committed")
    for target in (f"127.0.0.1:{port}", f"service:jmx:rmi:///jndi/rmi://127.0.0.1:{port}/jmxrmi"):
        # WHEN kafkadiag reads it remotely
        reading = jmx.read_remote_jmx(target, timeout_s=20)
        # THEN it sees the same MBeans and settings a local read sees, and no attach happened
        assert reading.source_kind == "jmx" and reading.source.endswith(f":{port}/jmxrmi")
        names = {bean.name for bean in reading.beans}
        assert f"kafka.consumer:type=ConsumerFetcherManager,name=MaxLag,clientId={group}" in names
        assert (
            f"kafka.server:type=FetcherLagMetrics,name=ConsumerLag,clientId={group},topic=orders,partition=0"
            in names
        )
        assert dict(reading.system_properties)["queued.max.message.chunks"] == "2"
        assert reading.timing("attach_ms") is None and reading.notes == ()


def test_a_closed_port_is_unreachable_quickly() -> None:
    # GIVEN a port nothing listens on
    port = free_port()
    started = time.monotonic()
    # WHEN kafkadiag reads JMX there
    with pytest.raises(JmxUnreachableError) as raised:
        jmx.read_remote_jmx(f"127.0.0.1:{port}", timeout_s=5)
    # THEN it fails at once with the address and what to check; exit code 3
    assert time.monotonic() - started < 15
    assert f"127.0.0.1:{port}" in raised.value.message and "Connection refused" in raised.value.message
    assert "java.rmi.server.hostname" in raised.value.help_text
    assert raised.value.exit_code == ExitCode.INPUT_UNREADABLE


@pytest.fixture
def silent_port() -> Iterator[int]:
    """A listener that accepts connections and never answers (a firewall's black hole, a hung agent)."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(16)
    accepted: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        server.settimeout(0.2)
        while not stop.is_set():
            try:
                connection, _ = server.accept()
                accepted.append(connection)
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield server.getsockname()[1]
    finally:
        stop.set()
        thread.join(timeout=5)
        for connection in accepted:
            connection.close()
        server.close()


def test_an_endpoint_that_never_answers_times_out(silent_port: int) -> None:
    started = time.monotonic()
    with pytest.raises(JmxUnreachableError) as raised:
        jmx.read_remote_jmx(f"127.0.0.1:{silent_port}", timeout_s=2)
    assert time.monotonic() - started < 20
    assert f"127.0.0.1:{silent_port}" in raised.value.message


def test_authentication_is_refused_without_credentials_and_accepted_with_them(
    start, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a JVM whose remote JMX agent requires a password (read-only role "monitor")
    password_file = tmp_path / "jmxremote.password"
    password_file.write_text("monitor s3cret\n")
    password_file.chmod(0o600)  # the JDK refuses a password file others can read
    password_file.with_suffix(".access").write_text("monitor readonly\n")
    port = free_port()
    group = unique("auth")
    start(group, ["orders:1:1"], SETTINGS, jvm_options=remote_jmx_options(port, True, password_file))
    # WHEN kafkadiag reads it without credentials
    monkeypatch.delenv("KAFKADIAG_JMX_USER", raising=False)
    with pytest.raises(JmxAuthenticationError) as raised:
        jmx.read_remote_jmx(f"127.0.0.1:{port}", timeout_s=20)
    # THEN authentication is refused and the error says how to pass credentials
    assert "authentication refused" in raised.value.message
    assert "KAFKADIAG_JMX_USER" in raised.value.help_text
    # WHEN the read-only credentials are in the environment
    monkeypatch.setenv("KAFKADIAG_JMX_USER", "monitor")
    monkeypatch.setenv("KAFKADIAG_JMX_PASSWORD", "s3cret")
    reading = jmx.read_remote_jmx(f"127.0.0.1:{port}", timeout_s=20)
    # THEN the MBeans are read with a read-only role; only the thread names (an operation) are not
    assert any(bean.property("name") == "MaxLag" for bean in reading.beans)
    assert reading.threads == ()
    assert any("thread names not read" in note and "Access denied" in note for note in reading.notes)


def test_a_remote_jvm_that_dies_mid_read_is_reported_gone(start) -> None:
    port = free_port()
    consumer = start(unique("remote-dies"), ["orders:1:1"], SETTINGS, jvm_options=remote_jmx_options(port))
    consumer.command("die-on-read")
    with pytest.raises(JvmGoneError) as raised:
        jmx.read_remote_jmx(f"127.0.0.1:{port}", timeout_s=10)
    assert "broke during the read" in raised.value.message
    assert consumer.process.wait(timeout=10) == 99
