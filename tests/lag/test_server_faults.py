"""Servers that misbehave at the protocol level, run against the installed `kafkadiag` command:
replies with a length of -4, a huge length, truncated replies, silent and slow servers, refused
connections, and a hung first bootstrap server before a healthy one. Every case ends within
--timeout plus a small margin, in bounded memory, with exit 3, the failing source named and no
traceback."""

from __future__ import annotations

import subprocess
import sys
import time

import psutil
import pytest

from kafkadiag.exitcodes import ExitCode
from tests.infra import workload
from tests.infra.fake_servers import FakeServer, length_prefixed
from tests.infra.servers import ServerProcess, free_port

TIMEOUT_S = 2.0
MARGIN_S = 2.5
MAX_RSS_BYTES = 300 * 1024 * 1024

# What a misbehaving server answers to the first request of a connection.
REPLIES = {
    "length -4": length_prefixed(-4),
    "huge length": length_prefixed(0x7FFFFFF0, b"\x00" * 64),
    "truncated reply": length_prefixed(200, b"\x00\x00\x00\x01\x00\x00"),
    "garbage": b"HTTP/1.1 400 Bad Request\r\n\r\n",
}
# The size of the reply a trickling server sends, a byte at a time: for ZooKeeper, that of a
# connect response (protocol version, timeout, session id, 16-byte password).
SLOW_REPLY_SIZES = {"--bootstrap-server": 40, "--zookeeper": 36}


def run_measured(args: list[str]) -> tuple[int, str, str, float, int]:
    """(exit code, stdout, stderr, seconds, peak RSS in bytes) of `python -m kafkadiag ARGS`."""
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-m", "kafkadiag", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    peak = 0
    watched = psutil.Process(process.pid)
    while process.poll() is None:
        try:
            peak = max(peak, watched.memory_info().rss)
        except psutil.Error:
            break
        time.sleep(0.02)
    out, err = process.communicate()
    return process.returncode, out, err, time.monotonic() - started, peak


def assert_bounded_failure(code: int, err: str, seconds: float, peak: int, source: str) -> None:
    assert code == ExitCode.INPUT_UNREADABLE, err
    assert seconds < TIMEOUT_S + MARGIN_S + 2, seconds  # + interpreter start-up
    assert peak < MAX_RSS_BYTES, peak
    assert "Traceback" not in err, err
    assert source in err, err


@pytest.mark.parametrize("option", sorted(SLOW_REPLY_SIZES))
@pytest.mark.parametrize("reply", sorted(REPLIES))
def test_a_server_answering_nonsense_is_bounded(option: str, reply: str) -> None:
    with FakeServer("reply", REPLIES[reply]) as server:
        code, _, err, seconds, peak = run_measured(
            ["lag", option, server.address, "--group", "g", "--timeout", str(TIMEOUT_S)]
        )
    assert_bounded_failure(code, err, seconds, peak, server.address)
    assert f"Check {option}" in err


@pytest.mark.parametrize("option", sorted(SLOW_REPLY_SIZES))
@pytest.mark.parametrize("behaviour", ["silent", "close", "slow"])
def test_a_server_that_hangs_closes_or_trickles_is_bounded(option: str, behaviour: str) -> None:
    size = SLOW_REPLY_SIZES[option]
    with FakeServer(behaviour, length_prefixed(size, b"\x00" * size), byte_delay_s=0.4) as server:
        code, _, err, seconds, peak = run_measured(
            ["lag", option, server.address, "--group", "g", "--timeout", str(TIMEOUT_S)]
        )
    assert_bounded_failure(code, err, seconds, peak, server.address)


def test_a_refused_connection_is_bounded_and_named() -> None:
    address = f"127.0.0.1:{free_port()}"
    code, _, err, seconds, peak = run_measured(
        ["lag", "--bootstrap-server", address, "--group", "g", "--timeout", str(TIMEOUT_S)]
    )
    assert_bounded_failure(code, err, seconds, peak, address)
    assert "ECONNREFUSED" in err or "refused" in err.lower()
    code, _, err, seconds, peak = run_measured(
        ["lag", "--zookeeper", address, "--group", "g", "--timeout", str(TIMEOUT_S)]
    )
    assert_bounded_failure(code, err, seconds, peak, address)
    assert "refused" in err.lower(), err


def test_a_hung_first_bootstrap_server_does_not_starve_a_live_second(broker: ServerProcess) -> None:
    topic, group = workload.unique("fair"), workload.unique("fair")
    workload.create_topic(broker.address, topic, 1)
    workload.produce(broker.address, topic, {0: 3})
    workload.commit_offsets_without_joining(broker.address, group, {(topic, 0): 1})
    with FakeServer("silent") as hung:
        code, out, err, seconds, _ = run_measured(
            ["lag", "--bootstrap-server", f"{hung.address},{broker.address}", "--group", group,
             "--timeout", "4", "--format", "json"]
        )  # fmt: skip
    # THEN the group is read from the live server, the hung one is named on stderr
    assert code in (ExitCode.OK, ExitCode.FINDINGS), err
    assert f'"group":"{group}"' in out.replace(" ", "")
    assert hung.address in err and "trying" in err
    assert seconds < 4 + MARGIN_S + 2


def test_every_bootstrap_server_failing_names_each_with_its_cause() -> None:
    refused = f"127.0.0.1:{free_port()}"
    with FakeServer("silent") as hung:
        code, _, err, seconds, _ = run_measured(
            ["lag", "--bootstrap-server", f"{hung.address},{refused}", "--group", "g", "--timeout", "2"]
        )
    assert code == ExitCode.INPUT_UNREADABLE
    assert hung.address in err and refused in err
    assert seconds < 2 + MARGIN_S + 2
