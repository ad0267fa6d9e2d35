"""Servers that are not ZooKeeper, on free 127.0.0.1 ports, for `--zookeeper` to be pointed at.

A plain HTTP server (http.server), a TLS server (a self-signed certificate, tests/infra/tls.py),
and a socket server that speaks just enough of ZooKeeper's framing to go wrong in one chosen way:
a negative frame length, a huge one, a frame cut short, each either in answer to the session's
connect request or to the first read after a good connect. Each runs in a daemon thread for the
length of a `with` block.
"""

from __future__ import annotations

import http.server
import socket
import socketserver
import ssl
import struct
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.infra.tls import self_signed_certificate

# A connect response kazoo accepts: protocol version, negotiated timeout (ms), session id, a
# 16-byte password, read-only flag.
GOOD_CONNECT = struct.pack(">iiq", 0, 10_000, 0x1234) + struct.pack(">i", 16) + b"\0" * 16 + b"\0"
# Each way of going wrong: (answer to the connect request, answer to the first read after it);
# None where a good connect response is sent.
MISBEHAVIOURS = {
    "negative length": (struct.pack(">i", -5), None),
    "huge length": (struct.pack(">i", 0x7FFF_FFF0) + b"\0" * 64, None),
    "connect reply cut in its frame": (struct.pack(">i", len(GOOD_CONNECT)) + GOOD_CONNECT[:9], None),
    "connect reply too short for its fields": (struct.pack(">i", 6) + GOOD_CONNECT[:6], None),
    "negative length after connect": (None, struct.pack(">i", -16)),
    "huge length after connect": (None, struct.pack(">i", 0x6000_0000) + b"\0" * 64),
    # A reply header for the read, then a child count of 5 and no children.
    "read reply cut in its frame": (
        None,
        struct.pack(">i", 20) + struct.pack(">iqi", 1, 0, 0) + struct.pack(">i", 5),
    ),
    # What a web server (nginx, a proxy) answers bytes it cannot parse: "HTTP" read as a length.
    "answers in HTTP": (b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\nConnection: close\r\n\r\n", None),
    # What a TLS server answers a plain connection with: an alert record.
    "answers with a TLS alert": (b"\x15\x03\x03\x00\x02\x02\x46", None),
}


# Misbehaviours that keep sending after their length, as a server streaming a page or a proxy
# relaying garbage would: read as the frame they announce, they filled kazoo's memory.
STREAMING = frozenset({"huge length", "huge length after connect"})
STREAM_LIMIT = 512 << 20


def _read_frame(connection: socket.socket) -> bytes | None:
    head = _read_exactly(connection, 4)
    if head is None:
        return None
    return _read_exactly(connection, struct.unpack(">i", head)[0])


def _read_exactly(connection: socket.socket, count: int) -> bytes | None:
    data = b""
    while len(data) < count:
        chunk = connection.recv(count - len(data))
        if not chunk:
            return None
        data += chunk
    return data


class _Misbehaving(socketserver.BaseRequestHandler):
    misbehaviour = "negative length"

    def handle(self) -> None:
        on_connect, on_read = MISBEHAVIOURS[self.server.misbehaviour]  # type: ignore[attr-defined]
        connection = self.request
        if _read_frame(connection) is None:
            return
        if on_connect is None:
            connection.sendall(struct.pack(">i", len(GOOD_CONNECT)) + GOOD_CONNECT)
            if _read_frame(connection) is None:
                return
        connection.sendall(on_connect if on_connect is not None else on_read)
        if self.server.misbehaviour in STREAMING:  # type: ignore[attr-defined]
            _stream(connection)
        else:
            _linger(connection)


def _stream(connection: socket.socket) -> None:
    """Send zeros until the client leaves (or STREAM_LIMIT is sent)."""
    block = b"\0" * (1 << 20)
    try:
        for _ in range(STREAM_LIMIT // len(block)):
            connection.sendall(block)
    except OSError:
        pass


def _linger(connection: socket.socket) -> None:
    """Keep the connection open a moment, as a proxy would, then close it."""
    connection.settimeout(2)
    try:
        while connection.recv(65536):
            pass
    except OSError:
        pass


class _Server(socketserver.ThreadingTCPServer):
    daemon_threads = True
    allow_reuse_address = True


@contextmanager
def _serving(server: socketserver.BaseServer) -> Iterator[str]:
    thread = threading.Thread(target=server.serve_forever, name="not-zookeeper", daemon=True)
    thread.start()
    try:
        host, port = server.server_address[:2]
        yield f"{host}:{port}"
    finally:
        server.shutdown()
        server.server_close()


@contextmanager
def misbehaving_server(misbehaviour: str) -> Iterator[str]:
    """host:port of a socket server that goes wrong as MISBEHAVIOURS[misbehaviour] says."""
    server = _Server(("127.0.0.1", 0), _Misbehaving)
    server.misbehaviour = misbehaviour  # type: ignore[attr-defined]
    with _serving(server) as address:
        yield address


@contextmanager
def http_server() -> Iterator[str]:
    """host:port of Python's own HTTP server, answering as it answers anything it cannot parse."""
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
    with _serving(server) as address:
        yield address


@contextmanager
def tls_server(directory: Path) -> Iterator[str]:
    """host:port of a TLS server (a self-signed certificate) that answers what it can decrypt."""
    certificate, key = self_signed_certificate(directory, "not-zookeeper")
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(certificate, key)

    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            try:
                with context.wrap_socket(self.request, server_side=True) as wrapped:
                    wrapped.recv(65536)
            except (OSError, ssl.SSLError):
                return

    server = _Server(("127.0.0.1", 0), Handler)
    with _serving(server) as address:
        yield address
