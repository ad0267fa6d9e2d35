"""HTTP GET for the Jolokia and Prometheus sources: bounded, with a timeout and clear errors.

Credentials come from environment variables or from the URL's user info
(http://user:password@host/...). Either way they are never shown (every URL in a message or a
report is `without_credentials`) and never sent to another origin: a redirect to another
scheme, host or port drops the Authorization header.
"""

from __future__ import annotations

import base64
import http.client
import os
import re
import socket
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from typing import Any

from kafkadiag.collect.jmx.errors import HttpMetricsUnreachableError, MetricsSourceError

# An exporter page of a busy JVM is a few MB; anything far larger is not what kafkadiag expects.
MAX_BYTES = 64 * 1024 * 1024
_CHUNK = 1024 * 1024


# The user info of a URL: what follows "scheme://" up to the last "@" before the host.
_USER_INFO = re.compile(r"(?i)\b(https?://)[^/?#\s]*@")


def without_credentials(text: str) -> str:
    """`text` (a URL, or a message quoting URLs) with the user info of every URL removed."""
    return _USER_INFO.sub(r"\1", text)


def _url_credentials(url: str) -> tuple[str, str] | None:
    parts = urllib.parse.urlsplit(url)
    if parts.username is None:
        return None
    return urllib.parse.unquote(parts.username), urllib.parse.unquote(parts.password or "")


def _origin(url: str) -> tuple[str, str, int | None]:
    parts = urllib.parse.urlsplit(url)
    default_port = {"http": 80, "https": 443}.get(parts.scheme)
    return parts.scheme, (parts.hostname or "").lower(), parts.port or default_port


class _SameOriginAuthRedirects(urllib.request.HTTPRedirectHandler):
    """Follows redirects as urllib does, but keeps the credentials only on the same origin."""

    def redirect_request(self, req: Any, fp: Any, code: int, msg: str, headers: Any, newurl: str) -> Any:
        follow = super().redirect_request(req, fp, code, msg, headers, newurl)
        if follow is not None and _origin(newurl) != _origin(req.full_url):
            for name in [name for name in follow.headers if name.lower() == "authorization"]:
                del follow.headers[name]
        return follow


class _Deadline:
    """Shuts down every connection the request opens once its deadline passes. http.client
    reads the status line and the headers bounded each read by the socket's timeout only: a
    server trickling a header byte at a time held kafkadiag for as long as it cared to send."""

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self._timers: list[threading.Timer] = []
        self.fired = False  # a connection was shut down: what was read of it may be cut

    def connection_class(self, base: type[http.client.HTTPConnection]) -> Any:
        watch = self

        class DeadlineConnection(base):  # type: ignore[valid-type, misc]
            def connect(self) -> None:
                super().connect()
                watch.guard(self.sock)

        return DeadlineConnection

    def guard(self, sock: socket.socket) -> None:
        timer = threading.Timer(max(self.deadline - time.monotonic(), 0.0), self._shut_down, (sock,))
        timer.daemon = True
        timer.start()
        self._timers.append(timer)

    def cancel(self) -> None:
        for timer in self._timers:
            timer.cancel()

    def _shut_down(self, sock: socket.socket) -> None:
        self.fired = True
        try:
            sock.shutdown(socket.SHUT_RDWR)
        except OSError:  # already closed: the answer came in time
            pass


def _opener(deadline: _Deadline) -> urllib.request.OpenerDirector:
    class HTTPHandler(urllib.request.HTTPHandler):
        def http_open(self, req: Any) -> Any:
            return self.do_open(deadline.connection_class(http.client.HTTPConnection), req)

    class HTTPSHandler(urllib.request.HTTPSHandler):
        def https_open(self, req: Any) -> Any:
            connection = deadline.connection_class(http.client.HTTPSConnection)
            return self.do_open(connection, req, context=self._context)  # type: ignore[attr-defined]

    return urllib.request.build_opener(_SameOriginAuthRedirects, HTTPHandler, HTTPSHandler)


def _too_slow(describe: str, timeout_s: float) -> HttpMetricsUnreachableError:
    return HttpMetricsUnreachableError(
        f"{describe}: the answer was still arriving after {timeout_s:g} s (--timeout)"
    )


def _body(response: Any, deadline: float, timeout_s: float, describe: str) -> bytes:
    """At most MAX_BYTES + 1 of the answer, all of it within `timeout_s` of the request. The
    socket's timeout bounds each read only: an agent sending a byte every second kept kafkadiag
    reading for as long as it cared to."""
    chunks: list[bytes] = []
    size = 0
    while size <= MAX_BYTES:
        if time.monotonic() > deadline:
            raise _too_slow(describe, timeout_s)
        chunk = response.read1(min(_CHUNK, MAX_BYTES + 1 - size))  # what one read brings
        if not chunk:
            break
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def http_get(
    url: str, timeout_s: float, describe: str, user_env: str, password_env: str
) -> tuple[int, bytes]:
    """(HTTP status, body). Basic credentials come from the two environment variables, else
    from the URL's user info; `describe` and every message show the URL without them."""
    credentials = _url_credentials(url)
    url = without_credentials(url)
    describe = without_credentials(describe)
    request = urllib.request.Request(url, headers={"Accept": "application/json, text/plain;q=0.9, */*;q=0.1"})
    user = os.environ.get(user_env)
    if user:
        credentials = (user, os.environ.get(password_env, ""))
    if credentials is not None:
        token = base64.b64encode(f"{credentials[0]}:{credentials[1]}".encode()).decode()
        request.add_header("Authorization", f"Basic {token}")
    deadline = time.monotonic() + timeout_s
    watch = _Deadline(deadline)
    try:
        with _opener(watch).open(request, timeout=timeout_s) as response:
            status, body = int(response.status), _body(response, deadline, timeout_s, describe)
        if watch.fired:  # the end of the body may be where the deadline cut it
            raise _too_slow(describe, timeout_s)
        return status, body
    except urllib.error.HTTPError as error:
        body = _body(error, deadline, timeout_s, describe) if error.fp is not None else b""
        if watch.fired:
            raise _too_slow(describe, timeout_s) from None
        if error.code in (401, 403):
            raise MetricsSourceError(
                f"{describe}: HTTP {error.code} {error.reason} for {url}",
                help_text=f"The endpoint wants credentials kafkadiag may use: set {user_env} and "
                f"{password_env} (environment, so they do not show in `ps`) to a read-only user.",
            ) from None
        return int(error.code), body
    except (urllib.error.URLError, OSError, ValueError, http.client.HTTPException) as error:
        if watch.fired:
            raise _too_slow(describe, timeout_s) from None
        reason = getattr(error, "reason", error)
        raise HttpMetricsUnreachableError(f"{describe}: cannot GET {url}: {reason}") from None
    finally:
        watch.cancel()
