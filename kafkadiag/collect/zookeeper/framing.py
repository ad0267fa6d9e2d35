"""ZooKeeper's framing, guarded: a port that is not ZooKeeper is named, not read into memory.

kazoo reads each reply as a 4-byte length and then that many bytes, and trusts both. Pointed at
another service (`--zookeeper` given an HTTP or TLS port, or a proxy that misbehaves) it reads
"HTTP" as a frame of 1,213,486,160 bytes and calls recv() for all of them (1.5 GB of memory), a
TLS alert as one of 352 MB; a negative length leaves it an empty frame whose decoding fails on
its connection thread (a traceback on stderr), and a read reply cut inside its frame reaches the
caller as struct.error (exit 4). ZooKeeper's own Java client refuses any frame longer than
jute.maxbuffer ("Packet len ... is out of range!"); `ProtocolGuard` does the same for kazoo, and
turns what cannot be decoded into one error naming the server: "127.0.0.1:8080 does not speak
the ZooKeeper protocol".

The guard wraps methods of kazoo's connection handler (kazoo.protocol.connection, 2.9 to 2.11):
`_connect`, to know the server; `_read`, to bound every frame; `_read_header`, where a reply's
header is decoded on the connection thread. A reply's body is decoded there too, but kazoo hands
that error to the waiting caller, which names it with `undecodable_reply`.
"""

from __future__ import annotations

import ssl
import struct
from collections.abc import Callable
from typing import Any

from kazoo.exceptions import ConnectionDropped

# ZooKeeper refuses to send more than jute.maxbuffer (1 MiB by default; raised by some sites to
# tens of MB for large znodes or child lists). Far above both, far below what a wrong port claims.
MAX_FRAME_BYTES = 64 << 20
# What decoding bytes that are not ZooKeeper's raises in kazoo's serialization.
DECODING_ERRORS = (struct.error, ValueError, IndexError, UnicodeDecodeError, OverflowError)
# kazoo's ConnectionDropped when it cannot decode the answer to the connect request (2.10+).
_INVALID_CONNECT_ANSWER = "invalid server response"


class ProtocolGuard:
    """Installed on a KazooClient before it starts; calls `on_violation(message)` once a server
    is seen not to speak ZooKeeper's protocol, and drops that connection."""

    def __init__(
        self, client: Any, on_violation: Callable[[str], None], max_frame_bytes: int = MAX_FRAME_BYTES
    ) -> None:
        self._max_frame_bytes = max_frame_bytes
        self._connection = client._connection
        self._timeout_error = client.handler.timeout_exception
        self._on_violation = on_violation
        self._server = "the server"
        self._length_bytes = b""  # the last frame length read, to tell what the server speaks
        self._answered = False  # the server sent anything on this connection
        self._connecting = False  # the session's connect request is being answered
        # Why the last connection attempt failed, in words, when the server's silence or hang-up
        # says something (kazoo's own words are "socket time-out during read").
        self.cause: str | None = None
        self._connect = self._connection._connect
        self._read = self._connection._read
        self._read_header = self._connection._read_header
        self._connection._connect = self.connect
        self._connection._read = self.read
        self._connection._read_header = self.read_header

    def connect(self, host: str, hostip: str, port: int) -> Any:
        self._server = f"{host}:{port}"
        self._answered = False
        self._connecting = True
        try:
            return self._connect(host, hostip, port)
        except ConnectionDropped as error:
            if str(error) == _INVALID_CONNECT_ANSWER:
                raise self.violation(
                    "its answer to the session's connect request is not ZooKeeper's"
                ) from None
            raise
        except DECODING_ERRORS as error:  # kazoo before 2.10 let these through
            raise self.violation(f"its answer to the connect request could not be read: {error}") from None
        finally:
            self._connecting = False

    def read(self, length: int, timeout: float) -> bytes:
        if length < 0 or length > self._max_frame_bytes:
            speaks = self._speaks()
            if length > 0 and not speaks:
                speaks = (
                    f", past the {self._max_frame_bytes:,} bytes read from ZooKeeper: an ensemble whose "
                    "jute.maxbuffer is larger needs it set as large in a --zk-tls-config-file "
                    "(a file of `jute.maxbuffer=BYTES` alone keeps a plaintext port plaintext)"
                )
            raise self.violation(f"it announced a reply of {length:,} bytes{speaks}")
        try:
            data: bytes = self._read(length, timeout)
        except ConnectionDropped:
            if self._connecting:
                self.cause = self._hung_up()
            raise
        except Exception as error:
            if isinstance(error, self._timeout_error) and self._connecting and not self._answered:
                self.cause = (
                    f"{self._server} took the connection but did not answer the session's connect "
                    "request in time: ZooKeeper answers at once, an HTTP port waits for a request "
                    "line (is this ZooKeeper's client port, 2181 by default?)"
                )
            raise
        self._answered = True
        if length == 4:
            self._length_bytes = data
        return data

    def _hung_up(self) -> str:
        """What a server that closed the connection while the session was being set up did."""
        if self._answered:
            return f"{self._server} closed the connection inside its answer to the connect request"
        return (
            f"{self._server} closed the connection without answering the session's connect request: "
            "ZooKeeper does so while it is not serving (no quorum, too many connections from this "
            "host), a TLS port (secureClientPort: --zk-tls-config-file) always does"
        )

    def read_header(self, timeout: float) -> Any:
        try:
            return self._read_header(timeout)
        except DECODING_ERRORS as error:
            raise self.violation(f"a reply's header could not be read: {error}") from None

    def violation(self, detail: str) -> ConnectionDropped:
        """The error to raise on the connection thread (kazoo drops the connection on it), after
        telling the session why."""
        message = (
            f"{self._server} does not speak the ZooKeeper protocol ({detail}); --zookeeper takes "
            "ZooKeeper's client port (2181 by default, or its secureClientPort with --zk-tls-config-file)"
        )
        self._on_violation(message)
        return ConnectionDropped(message)

    def undecodable_reply(self, error: Exception) -> str:
        """What to say of a reply kazoo could not decode for the caller."""
        return (
            f"{self._server} does not speak the ZooKeeper protocol (a reply could not be read: "
            f"{type(error).__name__}: {error})"
        )

    def _speaks(self) -> str:
        """What the first bytes of the server's answer say it speaks, if they tell."""
        head = self._length_bytes + self._more_bytes()
        if head[:1] in (b"\x15", b"\x16") and head[1:2] == b"\x03":
            return ": it answers in TLS (a TLS port needs --zk-tls-config-file)"
        text = head.split(b"\r", 1)[0].split(b"\n", 1)[0]
        if text.startswith(b"HTTP/"):
            return f": it answers in HTTP ({text[:60].decode('ascii', 'replace')!r})"
        return ""

    def _more_bytes(self) -> bytes:
        """Up to 80 bytes already waiting after the length, without waiting for more."""
        try:
            data: bytes = self._connection._socket.recv(80)
        except (OSError, ssl.SSLError, AttributeError):
            return b""
        return data
