"""An agent that answers without end: GIVEN an HTTP server that sends its headers and then one
byte every half second, or one byte of a header every half second, WHEN `maxlag --prometheus
URL` or `--jolokia URL` reads it with --timeout 2s, THEN kafkadiag gives up after about that long
with exit 3, naming the source and the option. The socket's timeout bounded each read only, so
such an agent held kafkadiag for as long as it cared to send, its headers included."""

from __future__ import annotations

import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest

from kafkadiag.exitcodes import ExitCode

NOBODY = "127.0.0.1:1"


def _serve(listener: socket.socket, stop: threading.Event, status: bytes) -> None:
    listener.settimeout(0.2)  # closing a listening socket does not wake accept()
    while not stop.is_set():
        try:
            connection, _ = listener.accept()
        except TimeoutError:
            continue
        except OSError:
            return
        threading.Thread(target=_trickle, args=(connection, stop, status), daemon=True).start()


def _trickle(connection: socket.socket, stop: threading.Event, status: bytes) -> None:
    """The status line, then (for a status ending in "headers") a header a byte at a time, or
    the headers whole and the body a byte at a time."""
    with connection:
        try:
            connection.recv(65536)
            if status.endswith(b" headers"):
                connection.sendall(b"HTTP/1.1 200 OK\r\nX-Slow: ")
            else:
                connection.sendall(
                    status + b"\r\nContent-Type: text/plain\r\nContent-Length: 1000000\r\n\r\n"
                )
            while not stop.wait(0.5):
                connection.sendall(b"#")
        except OSError:  # kafkadiag hung up: what the test waits for
            return


@pytest.fixture(
    params=[b"HTTP/1.1 200 OK", b"HTTP/1.1 500 Internal Server Error", b"trickled headers"],
    ids=["200", "500", "headers"],
)
def trickling_agent(request: pytest.FixtureRequest) -> Iterator[str]:
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()
    server = threading.Thread(target=_serve, args=(listener, stop, request.param), daemon=True)
    server.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        listener.close()
        server.join(timeout=10)


@pytest.mark.parametrize("source", [("--prometheus", "/metrics"), ("--jolokia", "/jolokia")], ids=str)
def test_an_answer_that_never_ends_is_given_up_at_the_timeout(
    trickling_agent: str, source: tuple[str, str]
) -> None:
    option, path = source
    started = time.monotonic()
    process = subprocess.run(
        [sys.executable, "-m", "kafkadiag", "maxlag", option, trickling_agent + path,
         "--zookeeper", NOBODY, "--group", "g", "--timeout", "2s"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    assert process.returncode == ExitCode.INPUT_UNREADABLE, process.stderr
    assert "the answer was still arriving after 2 s (--timeout)" in process.stderr, process.stderr
    assert time.monotonic() - started < 30
