"""A minimal read-only ZooKeeper client that pipelines whole waves of reads on one socket.

kazoo wakes its I/O thread once per request, so a read costs about 0.1-0.2 ms however many are
queued; 10,000 offset znodes then take a second or more. Here a wave of requests is written
in large chunks while the answers are read as they arrive (one select loop, no thread), which
reads 10,000 znodes in a fraction of that. Only three requests exist: GetData, GetChildren and
CloseSession; nothing can write, set a watch or create an ephemeral node.

Wire format (ZooKeeper's jute encoding, big-endian): every frame is a 4-byte length and a body.
    ConnectRequest   int protocolVersion, long lastZxidSeen, int timeOut, long sessionId,
                     buffer passwd, bool readOnly
    request          int xid, int type, then for GetData/GetChildren: ustring path, bool watch
    reply            int xid, long zxid, int err, then the body when err == 0
    GetData reply    buffer data, Stat (long czxid, mzxid, ctime, mtime; int version, cversion,
                     aversion; long ephemeralOwner; int dataLength, numChildren; long pzxid)
    GetChildren      vector<ustring> children
ACL-protected znodes answer NoAuth per node: this client does not authenticate.
"""

from __future__ import annotations

import random
import select
import socket
import struct
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

GET_DATA = 4
GET_CHILDREN = 8
CLOSE_SESSION = -11

_INT = struct.Struct(">i")
_REPLY_HEADER = struct.Struct(">iqi")
_REQUEST_HEADER = struct.Struct(">ii")
_STAT = struct.Struct(">qqqqiiiqiiq")
_CONNECT = struct.Struct(">iqiq")

# ZooKeeper's KeeperException codes that a read can meet.
ERRORS = {
    -4: "connection lost",
    -7: "operation timed out",
    -101: "NoNode",
    -102: "not allowed to read (ZooKeeper ACL)",
    -112: "session expired",
    -115: "authentication failed",
    -118: "session moved",
    -119: "not read-only",
}
NO_NODE = -101


class ZooKeeperWireError(Exception):
    """The connection failed; `reason` says how, in words for the user."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class Stat(NamedTuple):
    """A znode's Stat (a NamedTuple: 10,000 of them are built per scan, and tuples are cheap)."""

    czxid: int
    mzxid: int
    ctime: int
    mtime: int
    version: int
    cversion: int
    aversion: int
    ephemeral_owner: int
    data_length: int
    num_children: int
    pzxid: int


@dataclass(frozen=True)
class Failure:
    """A read that got an error code (NoNode, NoAuth ...) or no answer at all."""

    code: int | None
    reason: str


def parse_connect_string(connect: str) -> tuple[list[tuple[str, int]], str]:
    """ "h1:2181,[::1]:2182/chroot" -> ([("h1", 2181), ("::1", 2182)], "/chroot")."""
    hosts_part, slash, chroot = connect.partition("/")
    hosts: list[tuple[str, int]] = []
    for item in hosts_part.split(","):
        item = item.strip()
        if not item:
            continue
        if item.startswith("["):
            host, _, rest = item[1:].partition("]")
            port = rest.lstrip(":")
        elif item.count(":") == 1:
            host, port = item.split(":")
        else:
            host, port = item, ""
        hosts.append((host, int(port) if port.isdigit() else 2181))
    chroot_path = ("/" + chroot).rstrip("/") if slash else ""
    return hosts, chroot_path


def _ustring(text: str) -> bytes:
    encoded = text.encode("utf-8")
    return _INT.pack(len(encoded)) + encoded


class WireConnection:
    """One ZooKeeper session used for waves of reads, then closed."""

    def __init__(self, connect: str, timeout_s: float) -> None:
        self.hosts, self.chroot = parse_connect_string(connect)
        if not self.hosts:
            raise ZooKeeperWireError(f"no ZooKeeper host in {connect!r}")
        self.timeout_s = timeout_s
        self.sock: socket.socket | None = None
        self.session_timeout_ms = 0
        self.read_only = False
        self._xid = 0
        self.lost: str | None = None

    # -- session -------------------------------------------------------------------------------

    def open(self) -> WireConnection:
        deadline = time.monotonic() + self.timeout_s
        hosts = list(self.hosts)
        random.shuffle(hosts)  # as ZooKeeper's own clients do, to spread sessions over servers
        failures = []
        for index, (host, port) in enumerate(hosts):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                break
            # Leave time for the hosts after this one, but at least a second per try.
            budget = max(remaining / (len(hosts) - index), min(remaining, 1.0))
            try:
                self._open_one(host, port, time.monotonic() + budget)
                return self
            except (OSError, ZooKeeperWireError) as error:
                failures.append(f"{host}:{port}: {_describe(error)}")
                self.close()
        raise ZooKeeperWireError("; ".join(failures) or "no time left to connect")

    def _open_one(self, host: str, port: int, deadline: float) -> None:
        sock = socket.create_connection((host, port), timeout=max(deadline - time.monotonic(), 0.001))
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.sock = sock
        timeout_ms = max(int(self.timeout_s * 1000), 4000)
        body = _CONNECT.pack(0, 0, timeout_ms, 0) + _INT.pack(16) + b"\0" * 16 + b"\x01"
        self._send_all(_INT.pack(len(body)) + body, deadline)
        frame = self._read_frame(deadline)
        if len(frame) < 16:
            raise ZooKeeperWireError("the server closed the session at once (is it a ZooKeeper server?)")
        _, negotiated, session_id, _ = _CONNECT.unpack_from(frame, 0)
        if negotiated <= 0 or session_id == 0:
            raise ZooKeeperWireError("the server refused the session")
        self.session_timeout_ms = negotiated
        self.read_only = len(frame) > 36 and frame[-1] == 1

    def close(self) -> None:
        if self.sock is None:
            return
        try:
            if self.lost is None:
                self.sock.settimeout(0.2)
                self._xid += 1
                header = _REQUEST_HEADER.pack(self._xid, CLOSE_SESSION)
                self.sock.sendall(_INT.pack(len(header)) + header)
        except OSError:
            pass
        finally:
            try:
                self.sock.close()
            finally:
                self.sock = None

    def server_path(self, path: str) -> str:
        """The chroot-prefixed path the server knows ("/" is the chroot itself)."""
        if not self.chroot:
            return path
        return self.chroot if path == "/" else self.chroot + path

    # -- framing -------------------------------------------------------------------------------

    def _send_all(self, data: bytes, deadline: float) -> None:
        assert self.sock is not None
        view = memoryview(data)
        while view:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ZooKeeperWireError("no answer from ZooKeeper within --timeout")
            self.sock.settimeout(remaining)
            sent = self.sock.send(view)
            view = view[sent:]

    def _read_frame(self, deadline: float) -> bytes:
        assert self.sock is not None
        data = b""
        while True:
            if len(data) >= 4:
                (length,) = _INT.unpack_from(data, 0)
                if len(data) >= 4 + length:
                    return data[4 : 4 + length]
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise ZooKeeperWireError("no answer from ZooKeeper within --timeout")
            self.sock.settimeout(remaining)
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ZooKeeperWireError("ZooKeeper closed the connection")
            data += chunk

    # -- waves ---------------------------------------------------------------------------------

    def wave(self, kind: int, paths: Sequence[str], deadline: float) -> list[object]:
        """Send one request per path, all pipelined; answers in path order.

        Each answer is a list of child names (GetChildren), a (bytes, Stat) pair (GetData), or
        a Failure. Once the connection fails, every request still unanswered fails with why.
        """
        results: list[object] = [None] * len(paths)
        if not paths:
            return results
        if self.lost is not None or self.sock is None:
            failure = Failure(None, self.lost or "not connected")
            return [failure] * len(paths)
        first_xid = self._xid + 1
        chunks = []
        for offset, path in enumerate(paths):
            body = _REQUEST_HEADER.pack(first_xid + offset, kind) + _ustring(self.server_path(path)) + b"\0"
            chunks.append(_INT.pack(len(body)) + body)
        self._xid += len(paths)
        outgoing = memoryview(b"".join(chunks))
        answered = 0
        incoming = bytearray()
        sock = self.sock
        sock.setblocking(False)
        try:
            while answered < len(paths):
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    raise ZooKeeperWireError("no answer from ZooKeeper within --timeout")
                readable, writable, _ = select.select([sock], [sock] if outgoing else [], [], remaining)
                if writable:
                    try:
                        sent = sock.send(outgoing[:262144])
                        outgoing = outgoing[sent:]
                    except BlockingIOError:
                        pass
                if not readable:
                    continue
                try:
                    chunk = sock.recv(1 << 20)
                except BlockingIOError:
                    continue
                if not chunk:
                    raise ZooKeeperWireError("ZooKeeper closed the connection while reading")
                incoming += chunk
                position = 0
                size = len(incoming)
                while size - position >= 4:
                    (length,) = _INT.unpack_from(incoming, position)
                    end = position + 4 + length
                    if end > size:
                        break
                    xid, _zxid, error = _REPLY_HEADER.unpack_from(incoming, position + 4)
                    index = xid - first_xid
                    if 0 <= index < len(paths):
                        results[index] = _decode(
                            kind, error, incoming, position + 4 + _REPLY_HEADER.size, end
                        )
                        answered += 1
                    elif error in (-112, -118):
                        raise ZooKeeperWireError(ERRORS[error])
                    # Anything else (a ping reply, xid -2) is not ours: skip it.
                    position = end
                del incoming[:position]
        except (OSError, ZooKeeperWireError) as error:
            self.lost = f"ZooKeeper connection lost while reading ({_describe(error)})"
            failure = Failure(None, self.lost)
            results = [failure if result is None else result for result in results]
        finally:
            if self.sock is not None:
                self.sock.setblocking(True)
        return results


def _decode(kind: int, error: int, data: bytearray, start: int, end: int) -> object:
    if error != 0:
        return Failure(error, ERRORS.get(error, f"ZooKeeper error {error}"))
    if kind == GET_DATA:
        (length,) = _INT.unpack_from(data, start)
        start += 4
        value = b"" if length < 0 else bytes(data[start : start + length])
        start += max(length, 0)
        return value, Stat._make(_STAT.unpack_from(data, start))
    (count,) = _INT.unpack_from(data, start)
    start += 4
    children = []
    for _ in range(max(count, 0)):
        (length,) = _INT.unpack_from(data, start)
        start += 4
        children.append(data[start : start + length].decode("utf-8", errors="replace"))
        start += length
    return children


def _describe(error: BaseException) -> str:
    if isinstance(error, ZooKeeperWireError):
        return error.reason
    if isinstance(error, socket.timeout):
        return "no answer from ZooKeeper within --timeout"
    if isinstance(error, ConnectionRefusedError):
        return "connection refused"
    if isinstance(error, socket.gaierror):
        return f"cannot resolve the host name ({error.strerror})"
    return getattr(error, "strerror", None) or str(error) or type(error).__name__
