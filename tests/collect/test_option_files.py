"""Files named by options that are not what the option expects: GIVEN --command-config,
--zk-tls-config-file, --zk-jaas-file, --consumer-config, `check --config` or `maxlag --prometheus`
naming a binary file, a Latin-1 file, /dev/zero, a FIFO, a directory or a symlink loop, WHEN
kafkadiag runs as a process, THEN it answers in seconds with exit 2 or 3 and the cause, never a
traceback (a Latin-1 file was a UnicodeDecodeError, exit 4), never a hang (a FIFO nobody writes
into waited forever), never all the memory (/dev/zero was read until the kernel killed it)."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from kafkadiag.exitcodes import ExitCode

EXPOSITION = 'kafka_consumer_ConsumerFetcherManager_Value{name="MaxLag",clientId="c1"} 5\n'
# Nothing listens on port 1: whatever reads the file must fail before any connection is tried.
NOBODY = "127.0.0.1:1"


def _latin1(directory: Path) -> str:
    path = directory / "client.properties"
    path.write_bytes(b"sasl.password=sch\xf6n\n")
    return str(path)


def _binary(directory: Path) -> str:
    path = directory / "truststore.jks"
    path.write_bytes(b"\xfe\xed\xfe\xed\x00\x00\x00\x02" + bytes(range(256)) * 4)
    return str(path)


def _fifo(directory: Path) -> str:
    path = directory / "fifo"
    os.mkfifo(path)
    return str(path)


def _directory(directory: Path) -> str:
    return str(directory)


def _symlink_loop(directory: Path) -> str:
    (directory / "a").symlink_to(directory / "b")
    (directory / "b").symlink_to(directory / "a")
    return str(directory / "a")


def _sparse_2_gb(directory: Path) -> str:
    path = directory / "sparse"
    with open(path, "wb") as handle:
        handle.truncate(2 << 30)
    return str(path)


HOSTILE: dict[str, tuple[Callable[[Path], str], str]] = {
    "latin-1": (_latin1, "not UTF-8 text (byte 0xf6 at offset 17)"),
    "binary": (_binary, "NUL bytes: a binary file"),
    "dev-zero": (lambda _: "/dev/zero", "larger than"),
    "sparse-2-gb": (_sparse_2_gb, "larger than"),
    "fifo-without-writer": (_fifo, "nothing arrived from it"),
    "directory": (_directory, "a directory, not a file"),
    "symlink-loop": (_symlink_loop, "Too many levels of symbolic links"),
}

# Each option that reads a file, the command it is given to, and its exit code for a file it
# cannot read: 2 for the connection settings (a usage error), 3 for the other inputs.
OPTIONS: dict[str, tuple[Callable[[str, Path], list[str]], int]] = {
    "--command-config": (
        lambda path, _: ["lag", "--bootstrap-server", NOBODY, "--group", "g", "--command-config", path],
        ExitCode.USAGE,
    ),
    "--zk-tls-config-file": (
        lambda path, _: ["lag", "--zookeeper", NOBODY, "--group", "g", "--zk-tls-config-file", path],
        ExitCode.USAGE,
    ),
    "--zk-jaas-file": (
        lambda path, _: ["lag", "--zookeeper", NOBODY, "--group", "g", "--zk-jaas-file", path],
        ExitCode.USAGE,
    ),
    "--consumer-config": (
        lambda path, exposition: (
            ["maxlag", "--prometheus", str(exposition), "--zookeeper", NOBODY]
            + ["--group", "g", "--consumer-config", path]
        ),
        ExitCode.INPUT_UNREADABLE,
    ),
    "check --config": (
        lambda path, _: ["check", "--zookeeper", NOBODY, "--group", "g", "--config", path],
        ExitCode.INPUT_UNREADABLE,
    ),
}


def kafkadiag(args: list[str], timeout_s: float = 60) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "kafkadiag", *args, "--timeout", "1s"],
        capture_output=True,
        text=True,
        timeout=timeout_s,
        env={**os.environ, "KAFKADIAG_PROGRESS": "never"},
    )


@pytest.mark.parametrize("kind", HOSTILE)
@pytest.mark.parametrize("option", OPTIONS)
def test_an_option_file_that_is_not_text_is_named_in_seconds(option: str, kind: str, tmp_path: Path) -> None:
    # GIVEN a hostile file for the option
    make, cause = HOSTILE[kind]
    hostile = tmp_path / "hostile"
    hostile.mkdir()
    path = make(hostile)
    exposition = tmp_path / "metrics.prom"
    exposition.write_text(EXPOSITION, encoding="utf-8")
    command, expected = OPTIONS[option]
    # WHEN kafkadiag is given it
    started = time.monotonic()
    process = kafkadiag(command(path, exposition))
    # THEN it says which file and why, with its exit code, without a traceback, in seconds
    assert process.returncode == expected, process.stderr
    assert f"cannot read {option.split()[-1]} {path}: " in process.stderr or (
        option == "--zk-jaas-file" and f"cannot read the JAAS file {path}: " in process.stderr
    ), process.stderr
    assert cause in process.stderr and "Traceback" not in process.stderr, process.stderr
    assert time.monotonic() - started < 30


@pytest.mark.parametrize("kind", ["latin-1", "dev-zero", "fifo-without-writer", "directory", "symlink-loop"])
def test_a_prometheus_file_that_is_not_an_exposition_is_named_in_seconds(kind: str, tmp_path: Path) -> None:
    make, _ = HOSTILE[kind]
    path = make(tmp_path)
    process = kafkadiag(["maxlag", "--prometheus", path, "--zookeeper", NOBODY, "--group", "g"])
    assert process.returncode == ExitCode.INPUT_UNREADABLE, process.stderr
    assert f"{path}" in process.stderr and "Traceback" not in process.stderr, process.stderr


def test_a_fifo_whose_writer_sends_nothing_is_given_up_after_a_bounded_wait(tmp_path: Path) -> None:
    # GIVEN a FIFO held open by a writer that never writes (a stuck `<(vault read ...)`)
    fifo = _fifo(tmp_path)
    writer = subprocess.Popen(["sh", "-c", f"exec sleep 120 > {fifo}"])
    try:
        # WHEN it is the --command-config
        started = time.monotonic()
        process = kafkadiag(["lag", "--bootstrap-server", NOBODY, "--group", "g", "--command-config", fifo])
        # THEN kafkadiag gives up on it after a bounded wait, naming it
        assert process.returncode == ExitCode.USAGE, process.stderr
        assert "nothing more arrived from it in 10 s" in process.stderr, process.stderr
        assert time.monotonic() - started < 30
    finally:
        writer.kill()
        writer.wait()


def test_a_pipe_of_settings_is_still_read(tmp_path: Path) -> None:
    # GIVEN the settings arriving through a pipe (bash's `<(...)`), a setting kafkadiag refuses
    # WHEN read THEN the setting was read: the refusal names it
    reader, writer = os.pipe()
    os.write(writer, b"security.protocol=CARRIER_PIGEON\n")
    os.close(writer)
    process = subprocess.run(
        [sys.executable, "-m", "kafkadiag", "lag", "--bootstrap-server", NOBODY, "--group", "g",
         "--command-config", f"/dev/fd/{reader}", "--timeout", "1s"],
        capture_output=True, text=True, timeout=60, pass_fds=(reader,),
    )  # fmt: skip
    os.close(reader)
    assert process.returncode == ExitCode.USAGE, process.stderr
    assert "security.protocol=CARRIER_PIGEON is not one of" in process.stderr, process.stderr


def test_a_check_policy_nested_100000_levels_is_a_usage_error_not_a_recursion_error(tmp_path: Path) -> None:
    policy = tmp_path / "policy.toml"
    policy.write_text("[defaults]\nmax_lag = " + "[" * 100_000 + "\n", encoding="utf-8")
    process = kafkadiag(["check", "--zookeeper", NOBODY, "--group", "g", "--config", str(policy)])
    assert process.returncode == ExitCode.USAGE, process.stderr
    assert "nested too deeply" in process.stderr and "Traceback" not in process.stderr, process.stderr


@pytest.mark.parametrize(
    ("content", "cause"),
    [
        (b"0\x82\x03\x1f0\x82\x02\x07\xa0\x03\x02\x01\x02\x02\x14", "it is binary, not PEM text"),  # DER
        (b"ca certificate goes here\n", "it holds no PEM block (-----BEGIN ...)"),
    ],
    ids=["der", "not-pem"],
)
@pytest.mark.parametrize(
    ("option", "settings", "setting"),
    [
        ("--command-config", "security.protocol=SSL\nssl.truststore.type=PEM\n", "ssl.truststore.location"),
        ("--zk-tls-config-file", "zookeeper.ssl.truststore.type=PEM\n", "zookeeper.ssl.truststore.location"),
    ],
    ids=["command-config", "zk-tls-config-file"],
)
def test_a_truststore_that_is_not_pem_is_named_before_connecting(
    option: str, settings: str, setting: str, content: bytes, cause: str, tmp_path: Path
) -> None:
    # GIVEN TLS settings naming a truststore that OpenSSL cannot read as PEM: its error came as
    # "ZooKeeper unreachable" (check the network) once the connection was tried
    truststore = tmp_path / "ca.pem"
    truststore.write_bytes(content)
    properties = tmp_path / "tls.properties"
    properties.write_text(f"{settings}{setting}={truststore}\n", encoding="utf-8")
    where = "--bootstrap-server" if option == "--command-config" else "--zookeeper"
    # WHEN kafkadiag reads them THEN the setting and the cause are named, as a usage error
    process = kafkadiag(["lag", where, NOBODY, "--group", "g", option, str(properties)])
    assert process.returncode == ExitCode.USAGE, process.stderr
    assert f"cannot use {setting}={truststore}: {cause}" in process.stderr, process.stderr
