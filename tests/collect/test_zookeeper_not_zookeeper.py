"""`--zookeeper` pointed at something that is not ZooKeeper: named, bounded, exit 3.

Real servers on free 127.0.0.1 ports (tests/collect/not_zookeeper.py): Python's HTTP server, a
TLS server, and a socket server that answers a negative frame length, a huge one, a frame cut
short, an HTTP status line or a TLS alert, at the connect request or at the first read after a
good connect. Before the guard (kafkadiag.collect.zookeeper.framing), kazoo printed a traceback
for a negative length, read a huge one until 1.5 GB of memory, and a read reply cut inside its
frame ended in struct.error, exit 4. Each case runs `kafkadiag lag` in a child process, whose
peak memory is measured alone (as tests/dumps/test_hostile_input.py does).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from kafkadiag.collect.zookeeper.session import KazooSession, NotZooKeeperError

from ..dumps.test_hostile_input import _run_cli
from .not_zookeeper import MISBEHAVIOURS, http_server, misbehaving_server, tls_server

MIB = 1 << 20
TIMEOUT_S = 5


def _lag(address: str) -> tuple[int, str, int, float]:
    started = time.monotonic()
    code, stderr, peak_rss = _run_cli(
        ["lag", "--zookeeper", address, "--all-groups", "--timeout", f"{TIMEOUT_S}s"]
    )
    return code, stderr, peak_rss, time.monotonic() - started


# Where the server hangs up inside a frame of the connect answer, it may be ZooKeeper failing:
# that is said as what happened, not as another protocol.
_HUNG_UP = {"connect reply cut in its frame"}


@pytest.mark.parametrize("misbehaviour", list(MISBEHAVIOURS))
def test_a_server_that_breaks_zookeepers_framing_is_named_and_bounded(misbehaviour: str) -> None:
    # GIVEN a server that goes wrong in one way
    with misbehaving_server(misbehaviour) as address:
        # WHEN kafkadiag lag reads old-consumer groups from it
        code, stderr, peak_rss, elapsed = _lag(address)
    # THEN it exits 3 naming the server, without a traceback, in little memory and time
    assert code == 3, stderr
    assert "Traceback" not in stderr, stderr
    if misbehaviour in _HUNG_UP:
        assert f"{address} closed the connection inside its answer to the connect request" in stderr, stderr
    else:
        assert f"{address} does not speak the ZooKeeper protocol" in stderr, stderr
        assert elapsed < TIMEOUT_S + 5, f"{elapsed:.1f} s: a wrong port is named at once, not waited out"
    assert peak_rss < 200 * MIB, f"peak RSS {peak_rss / MIB:.0f} MiB"


def test_what_the_wrong_port_speaks_is_said_when_its_answer_tells() -> None:
    with misbehaving_server("answers in HTTP") as address:
        _, stderr, _, _ = _lag(address)
    assert "it answers in HTTP ('HTTP/1.1 400 Bad Request')" in stderr, stderr
    with misbehaving_server("answers with a TLS alert") as address:
        _, stderr, _, _ = _lag(address)
    assert "it answers in TLS (a TLS port needs --zk-tls-config-file)" in stderr, stderr


def test_pythons_http_server_as_zookeeper_is_exit_3_with_what_to_check() -> None:
    # GIVEN http.server, which waits for a request line the connect request never ends
    with http_server() as address:
        code, stderr, _, elapsed = _lag(address)
    # THEN exit 3, saying the port took the connection and never answered, within --timeout
    assert code == 3, stderr
    assert "Traceback" not in stderr, stderr
    assert f"{address} took the connection but did not answer the session's connect request" in stderr
    assert "2181" in stderr, stderr
    assert elapsed < TIMEOUT_S + 10, f"{elapsed:.1f} s"


def test_a_tls_port_as_zookeeper_is_exit_3_naming_the_tls_option(tmp_path: Path) -> None:
    # GIVEN a TLS server, which hangs up on a plain connection's first bytes
    with tls_server(tmp_path) as address:
        code, stderr, _, elapsed = _lag(address)
    # THEN exit 3, and the message names the option a TLS port needs
    assert code == 3, stderr
    assert "Traceback" not in stderr, stderr
    assert f"{address} closed the connection without answering" in stderr, stderr
    assert "--zk-tls-config-file" in stderr, stderr
    assert elapsed < TIMEOUT_S + 10, f"{elapsed:.1f} s"


def test_the_session_raises_not_zookeeper_at_once() -> None:
    # GIVEN a port that answers the connect request in HTTP
    with misbehaving_server("answers in HTTP") as address:
        started = time.monotonic()
        # WHEN a session is opened with a long timeout THEN it fails at once, naming the server
        with pytest.raises(NotZooKeeperError, match=f"{address} does not speak the ZooKeeper protocol"):
            KazooSession(address, 30.0)
        assert time.monotonic() - started < 5
