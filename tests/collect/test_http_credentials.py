"""Credentials of the HTTP metrics sources (Jolokia, Prometheus exporters): taken from the
environment or the URL's user info, never shown, never sent to another origin on a redirect.

Real HTTP servers on 127.0.0.1 record what reaches them."""

from __future__ import annotations

import base64
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest

from kafkadiag.collect.jmx.errors import MetricsSourceError
from kafkadiag.collect.jmx.http import http_get, without_credentials
from kafkadiag.exitcodes import ExitCode
from tests.infra.cli import run
from tests.infra.servers import free_port

USER_ENV, PASSWORD_ENV = "KAFKADIAG_TEST_HTTP_USER", "KAFKADIAG_TEST_HTTP_PASSWORD"


class Recorder:
    """A server that records the Authorization header of every request, and answers by path:
    /redirect-to?URL redirects there, /private wants credentials, anything else is 200."""

    def __init__(self) -> None:
        self.authorizations: list[str | None] = []
        self.server: ThreadingHTTPServer | None = None

    @property
    def base(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    @contextmanager
    def serving(self) -> Iterator[Recorder]:
        recorder = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                recorder.authorizations.append(self.headers.get("Authorization"))
                if self.path.startswith("/redirect-to?"):
                    self.send_response(302)
                    self.send_header("Location", self.path.split("?", 1)[1])
                    self.send_header("Content-Length", "0")
                    self.end_headers()
                    return
                status = 401 if self.path == "/private" else 200
                self.send_response(status)
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"ok")

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.server.shutdown()
            self.server.server_close()
            thread.join(timeout=5)


def basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


@pytest.fixture
def first() -> Iterator[Recorder]:
    with Recorder().serving() as recorder:
        yield recorder


@pytest.fixture
def other() -> Iterator[Recorder]:
    with Recorder().serving() as recorder:
        yield recorder


def with_user_info(url: str, user: str = "reader", password: str = "s3cr%40t") -> str:
    return url.replace("http://", f"http://{user}:{password}@", 1)


def test_url_user_info_is_sent_as_basic_auth_and_never_shown(first: Recorder) -> None:
    status, body = http_get(with_user_info(first.base + "/metrics"), 5, "exporter", USER_ENV, PASSWORD_ENV)
    assert (status, body) == (200, b"ok")
    assert first.authorizations == [basic("reader", "s3cr@t")]  # percent-decoded as browsers do
    with pytest.raises(MetricsSourceError) as raised:
        http_get(
            with_user_info(first.base + "/private"),
            5,
            "exporter " + with_user_info(first.base),
            USER_ENV,
            PASSWORD_ENV,
        )
    assert "s3cr" not in raised.value.message and "reader" not in raised.value.message
    assert f"{first.base}/private" in raised.value.message


def test_environment_credentials_win_over_user_info(first: Recorder, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(USER_ENV, "env-user")
    monkeypatch.setenv(PASSWORD_ENV, "env-password")
    http_get(with_user_info(first.base + "/metrics"), 5, "exporter", USER_ENV, PASSWORD_ENV)
    assert first.authorizations == [basic("env-user", "env-password")]


def test_a_redirect_keeps_credentials_on_the_same_origin_only(first: Recorder, other: Recorder) -> None:
    # Same origin: the credentials follow (Jolokia redirects /jolokia to /jolokia/ behind proxies).
    http_get(with_user_info(f"{first.base}/redirect-to?{first.base}/metrics"), 5, "x", USER_ENV, PASSWORD_ENV)
    assert first.authorizations == [basic("reader", "s3cr@t")] * 2
    # Another port is another origin: the redirect is followed without them.
    http_get(with_user_info(f"{first.base}/redirect-to?{other.base}/metrics"), 5, "x", USER_ENV, PASSWORD_ENV)
    assert other.authorizations == [None]


def test_the_cli_never_echoes_url_credentials() -> None:
    dead = f"http://admin:hunter2@127.0.0.1:{free_port()}/metrics"
    for source in (["--prometheus", dead], ["--jolokia", dead.replace("/metrics", "/jolokia")]):
        code, out, err = run(["maxlag", *source, "--timeout", "2s", "--format", "json"])
        assert code == ExitCode.INPUT_UNREADABLE, err
        assert "hunter2" not in out + err and "admin" not in out + err
        assert "127.0.0.1" in err


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("http://u:p@host:8778/jolokia", "http://host:8778/jolokia"),
        ("https://u@host/metrics?x=1", "https://host/metrics?x=1"),
        ("http://host:9404/metrics", "http://host:9404/metrics"),
        ("http://u:p%40ss@[::1]:9404/m", "http://[::1]:9404/m"),
    ],
)
def test_without_credentials(url: str, shown: str) -> None:
    assert without_credentials(url) == shown
