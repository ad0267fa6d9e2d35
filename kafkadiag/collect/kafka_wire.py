"""A minimal read-only Kafka client: one connection per broker, requests pipelined in rounds.

A round sends every request it was given at once (several on one connection when they go to
the same broker) and reads the answers as they arrive in one select loop, with no thread. This
is the shape of a lag scan: list groups, find coordinators, describe groups and fetch offsets,
read watermarks; each step needs the one before, and everything inside a step is independent.

Connections speak PLAINTEXT, SSL, and SASL PLAIN or SCRAM-SHA-256/512 (over either); the
client's settings are kafka-python's keys as `collect.config` produces them. Versions are
agreed per connection with ApiVersions. Only the requests in `kafka_protocol` exist here.
"""

from __future__ import annotations

import select
import selectors
import socket
import ssl
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kafkadiag.collect import kafka_sasl
from kafkadiag.collect.kafka_errors import error_name
from kafkadiag.collect.kafka_protocol import (
    ApiVersionsRequest,
    Broker,
    ClusterMetadata,
    MetadataRequest,
    SaslAuthenticateRequest,
    SaslHandshakeRequest,
    UnsupportedVersionError,
    correlation_id_of,
    decode_response,
    encode_request,
    pick_version,
)

NO_ANSWER = "no answer within --timeout"
_READ_CHUNK = 1 << 20
# Far above any answer to kafkadiag's requests, below a misread length: "HTTP" read as a
# Kafka frame's size is 1.2 GB (TLS records are recognised by their first bytes).
_MAX_FRAME = 1 << 30


class ConnectError(Exception):
    """A connection could not be set up. `final` errors (authentication, TLS verification, an
    unsupported mechanism) fail the same way on every attempt; the others may pass on retry."""

    def __init__(self, reason: str, final: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.final = final


@dataclass
class _Waiting:
    index: int
    request: Any
    version: int


@dataclass(eq=False)  # compared and hashed by identity: one object per socket
class _Connection:
    address: tuple[str, int]
    sock: Any
    accepted: dict[int, tuple[int, int]]
    outgoing: bytearray = field(default_factory=bytearray)
    incoming: bytearray = field(default_factory=bytearray)
    waiting: dict[int, _Waiting] = field(default_factory=dict)

    def close(self) -> None:
        try:
            self.sock.close()
        except OSError:
            pass


def parse_bootstrap(servers: str) -> list[tuple[str, int]]:
    """host:port[,host:port...], with [v6]:port for IPv6 literals."""
    addresses = []
    for entry in servers.split(","):
        entry = entry.strip()
        if not entry:
            continue
        host, _, port = entry.rpartition(":")
        if not host or not port.isdigit():
            raise ValueError(f"{entry!r} is not host:port")
        addresses.append((host.strip("[]"), int(port)))
    if not addresses:
        raise ValueError("no host:port given")
    return addresses


def tls_context(config: dict[str, Any]) -> ssl.SSLContext:
    """Verify the broker's certificate against ssl_cafile (or the system's CAs), check its name
    unless ssl.endpoint.identification.algorithm is empty, and present a client certificate
    when one is configured."""
    context = ssl.create_default_context(cafile=config.get("ssl_cafile"))
    context.check_hostname = bool(config.get("ssl_check_hostname", True))
    if config.get("ssl_certfile"):
        context.load_cert_chain(config["ssl_certfile"], config.get("ssl_keyfile"), config.get("ssl_password"))
    if config.get("ssl_crlfile"):
        context.load_verify_locations(config["ssl_crlfile"])
        context.verify_flags |= ssl.VERIFY_CRL_CHECK_LEAF
    return context


class WireClient:
    """Bootstrapped from `bootstrap_servers` within timeout_s, or ConnectError."""

    def __init__(self, bootstrap_servers: str, config: dict[str, Any], timeout_s: float) -> None:
        self.config = config
        self.client_id = str(config.get("client_id", "kafkadiag"))
        # request.timeout.ms bounds each round too (--timeout bounds the whole scan)
        self.request_timeout_s = float(config.get("request_timeout_ms", 0)) / 1000 or None
        protocol = str(config.get("security_protocol", "PLAINTEXT")).upper()
        self.sasl_mechanism = config.get("sasl_mechanism") if protocol.startswith("SASL_") else None
        self.tls = tls_context(config) if protocol in ("SSL", "SASL_SSL") else None
        self.brokers: dict[int, tuple[str, int]] = {}
        self.requests = 0
        self.round_trips = 0
        self._connections: dict[int, _Connection] = {}
        self._correlation_id = 0
        self._any: _Connection | None = None
        self._bootstrap(parse_bootstrap(bootstrap_servers), time.monotonic() + timeout_s)

    # -- set-up ----------------------------------------------------------------------------

    def _bootstrap(self, addresses: list[tuple[str, int]], deadline: float) -> None:
        last_error = "no attempt finished"
        backoff = 0.05
        while True:
            for address in addresses:
                connection = None
                try:
                    connection = self._open(address, deadline)
                    metadata = self._exchange(connection, MetadataRequest(), deadline)
                except ConnectError as error:
                    if connection is not None:
                        connection.close()
                    last_error = f"{address[0]}:{address[1]}: {error.reason}"
                    if error.final:
                        raise ConnectError(last_error, final=True) from None
                    continue
                self._learn(metadata)
                self._any = connection
                for node_id, broker_address in self.brokers.items():
                    if broker_address == address:
                        self._connections[node_id] = connection
                return
            if time.monotonic() + backoff >= deadline:
                raise ConnectError(last_error)
            time.sleep(backoff)
            backoff = min(backoff * 2, 1.0)

    def _learn(self, metadata: ClusterMetadata) -> None:
        for broker in metadata.brokers:
            self.brokers[broker.node_id] = (broker.host, broker.port)

    def add_broker(self, broker: Broker) -> None:
        """A broker met outside the metadata (a coordinator's address)."""
        self.brokers.setdefault(broker.node_id, (broker.host, broker.port))

    def _open(self, address: tuple[str, int], deadline: float) -> _Connection:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            raise ConnectError(NO_ANSWER)
        try:
            sock = socket.create_connection(address, timeout=remaining)
        except socket.timeout:
            raise ConnectError("connection timed out") from None
        except OSError as error:
            raise ConnectError(error.strerror or str(error)) from None
        sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.tls is not None:
            try:
                sock = self.tls.wrap_socket(sock, server_hostname=address[0])
            except ssl.SSLCertVerificationError as error:
                sock.close()
                raise ConnectError(f"TLS handshake failed: {_os_reason(error)}", final=True) from None
            except (OSError, ssl.SSLError) as error:
                sock.close()
                raise ConnectError(f"TLS handshake failed: {_os_reason(error)}") from None
        connection = _Connection(address, sock, {})
        try:
            error_code, accepted = self._exchange(connection, ApiVersionsRequest(), deadline)
            if error_code:
                raise ConnectError(f"ApiVersions answered {error_name(error_code)}")
            connection.accepted = accepted
            if self.sasl_mechanism:
                self._authenticate(connection, deadline)
        except ConnectError:
            connection.close()
            raise
        return connection

    def _authenticate(self, connection: _Connection, deadline: float) -> None:
        mechanism = str(self.sasl_mechanism)
        error_code, enabled = self._exchange(connection, SaslHandshakeRequest(mechanism), deadline)
        if error_code:
            raise ConnectError(
                f"the broker does not accept SASL {mechanism} (it accepts {', '.join(enabled) or 'none'})",
                final=True,
            )
        conversation = kafka_sasl.conversation(
            mechanism,
            self.config.get("sasl_plain_username") or "",
            self.config.get("sasl_plain_password") or "",
        )
        message = next(conversation)
        while message is not None:
            answer = self._exchange(connection, SaslAuthenticateRequest(message), deadline)
            if answer.error_code:
                reason = answer.error_message or error_name(answer.error_code)
                raise ConnectError(f"SASL {mechanism} authentication failed: {reason}", final=True)
            try:
                message = conversation.send(answer.auth_bytes)
            except StopIteration:
                return
            except kafka_sasl.SaslError as error:
                raise ConnectError(f"SASL {mechanism} authentication failed: {error}", final=True) from None

    def _exchange(self, connection: _Connection, request: Any, deadline: float) -> Any:
        """One request and its answer, blocking (connection set-up only)."""
        try:
            version = pick_version(request, connection.accepted) if connection.accepted else 0
        except UnsupportedVersionError as error:
            raise ConnectError(str(error), final=True) from None
        self._correlation_id += 1
        sock = connection.sock
        try:
            sock.settimeout(max(deadline - time.monotonic(), 0.001))
            sock.sendall(encode_request(request, version, self._correlation_id, self.client_id))
            size = frame_size(_receive(sock, 4))
            payload = _receive(sock, size)
        except socket.timeout:
            raise ConnectError(NO_ANSWER) from None
        except (OSError, ssl.SSLError) as error:
            raise ConnectError(_os_reason(error)) from None
        try:
            return decode_response(request, version, payload)
        except ValueError as error:
            raise ConnectError(str(error)) from None

    def _connection(self, node_id: int | None, deadline: float) -> _Connection:
        if node_id is None:
            if self._any is None:
                node_id = next(iter(self.brokers), None)
                if node_id is None:
                    raise ConnectError("no broker is known")
            else:
                return self._any
        connection = self._connections.get(node_id)
        if connection is None:
            address = self.brokers.get(node_id)
            if address is None:
                raise ConnectError(f"broker {node_id} is not in the cluster metadata")
            connection = self._open(address, deadline)
            self._connections[node_id] = connection
            if self._any is None:
                self._any = connection
        return connection

    def _open_all(self, node_ids: set[int | None], deadline: float) -> dict[int | None, str]:
        """Open the connections a round needs, in parallel when there are several; the reason
        for each that could not be opened."""
        missing = [node for node in node_ids if node is not None and node not in self._connections]
        failures: dict[int | None, str] = {}
        if len(missing) > 1:
            from concurrent.futures import ThreadPoolExecutor

            def attempt(node: int) -> tuple[int, _Connection | str]:
                try:
                    return node, self._open(self.brokers[node], deadline)
                except ConnectError as error:
                    return node, error.reason
                except KeyError:
                    return node, f"broker {node} is not in the cluster metadata"

            with ThreadPoolExecutor(max_workers=min(len(missing), 16)) as pool:
                for opened, outcome in pool.map(attempt, missing):
                    if isinstance(outcome, _Connection):
                        self._connections[opened] = outcome
                    else:
                        failures[opened] = outcome
        for node in node_ids:
            if node in failures:
                continue
            try:
                self._connection(node, deadline)
            except ConnectError as error:
                failures[node] = error.reason
        return failures

    def accepts(self, request: Any) -> bool:
        """Whether the brokers accept a version of `request` (as the first connection says:
        a cluster's brokers normally run one version)."""
        if self._any is None:
            return False
        try:
            pick_version(request, self._any.accepted)
        except UnsupportedVersionError:
            return False
        return True

    # -- rounds ----------------------------------------------------------------------------

    def round(self, calls: Sequence[tuple[int | None, Any]], deadline: float) -> list[tuple[Any, str | None]]:
        """Send every (node id or None for any broker, request) at once; (answer, None) or
        (None, reason) for each, in order, by the deadline."""
        outcomes: list[tuple[Any, str | None]] = [(None, NO_ANSWER)] * len(calls)
        if not calls:
            return outcomes
        if self.request_timeout_s is not None:
            deadline = min(deadline, time.monotonic() + self.request_timeout_s)
        self.requests += len(calls)
        self.round_trips += 1
        self._drop_stale()
        failures = self._open_all({node for node, _ in calls}, deadline)
        active: list[_Connection] = []
        for index, (node, request) in enumerate(calls):
            if node in failures:
                where = (
                    f"broker {node}" + address_text(self.brokers.get(node))
                    if node is not None
                    else "any broker"
                )
                outcomes[index] = (None, f"cannot connect to {where}: {failures[node]}")
                continue
            connection = self._connection(node, deadline)
            try:
                version = pick_version(request, connection.accepted)
            except UnsupportedVersionError as error:
                outcomes[index] = (None, str(error))
                continue
            self._correlation_id += 1
            connection.outgoing += encode_request(request, version, self._correlation_id, self.client_id)
            connection.waiting[self._correlation_id] = _Waiting(index, request, version)
            if connection not in active:
                active.append(connection)
        self._pump(active, outcomes, deadline)
        return outcomes

    def _drop_stale(self) -> None:
        """Close connections that became readable while idle between rounds: the broker closed
        them (connections.max.idle.ms, a restart), so they are opened afresh instead of failing
        the requests of a later sample."""
        idle = self._open_connections()
        if not idle:
            return
        readable, _, _ = select.select([c.sock for c in idle], [], [], 0)
        for connection in idle:
            if connection.sock in readable and _closed_or_out_of_step(connection):
                self._fail(connection, [], "closed while idle")

    def _pump(
        self, active: list[_Connection], outcomes: list[tuple[Any, str | None]], deadline: float
    ) -> None:
        selector = selectors.DefaultSelector()
        try:
            for connection in active:
                connection.sock.setblocking(False)
                selector.register(connection.sock, selectors.EVENT_READ | selectors.EVENT_WRITE, connection)
            pending = [connection for connection in active if connection.waiting]
            while pending:
                remaining = deadline - time.monotonic()
                if remaining <= 0:
                    break
                # TLS may hold decrypted bytes the socket no longer signals.
                ready = [(c, selectors.EVENT_READ) for c in pending if _tls_pending(c)]
                if not ready:
                    ready = [(key.data, events) for key, events in selector.select(remaining)]
                for connection, events in ready:
                    try:
                        if events & selectors.EVENT_WRITE and connection.outgoing:
                            self._write(connection)
                        if events & selectors.EVENT_READ:
                            self._read(connection, outcomes)
                    except (OSError, ssl.SSLError, ConnectionError) as error:
                        self._fail(
                            connection,
                            outcomes,
                            f"connection to{address_text(connection.address)} lost: {_os_reason(error)}",
                        )
                    if not connection.outgoing and connection.sock.fileno() >= 0:
                        selector.modify(connection.sock, selectors.EVENT_READ, connection)
                pending = [connection for connection in pending if connection.waiting]
        finally:
            selector.close()
        for connection in active:
            if connection.waiting:
                # Its answers may still come, out of step with the next round: start afresh.
                self._fail(connection, outcomes, NO_ANSWER)

    @staticmethod
    def _write(connection: _Connection) -> None:
        try:
            sent = connection.sock.send(connection.outgoing[:_READ_CHUNK])
        except (BlockingIOError, ssl.SSLWantWriteError, ssl.SSLWantReadError):
            return
        del connection.outgoing[:sent]

    @staticmethod
    def _read(connection: _Connection, outcomes: list[tuple[Any, str | None]]) -> None:
        try:
            data = connection.sock.recv(_READ_CHUNK)
        except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
            return
        if not data:
            raise ConnectionResetError("closed by the broker")
        incoming = connection.incoming
        incoming += data
        start = 0
        while len(incoming) - start >= 4:
            size = frame_size(incoming[start : start + 4])
            if len(incoming) - start - 4 < size:
                break
            payload = memoryview(incoming)[start + 4 : start + 4 + size]
            waiting = connection.waiting.pop(correlation_id_of(payload), None)
            if waiting is not None:
                try:
                    outcomes[waiting.index] = (
                        decode_response(waiting.request, waiting.version, payload),
                        None,
                    )
                except ValueError as error:
                    outcomes[waiting.index] = (None, str(error))
            payload.release()
            start += 4 + size
        del incoming[:start]

    def _fail(self, connection: _Connection, outcomes: list[tuple[Any, str | None]], reason: str) -> None:
        for waiting in connection.waiting.values():
            outcomes[waiting.index] = (None, reason)
        connection.waiting.clear()
        connection.close()
        for node, known in list(self._connections.items()):
            if known is connection:
                del self._connections[node]
        if self._any is connection:
            self._any = next(iter(self._connections.values()), None)

    def _open_connections(self) -> set[_Connection]:
        """Every open connection once: the bootstrap one may serve no broker id, or several."""
        return {*self._connections.values(), *([self._any] if self._any is not None else [])}

    def close(self) -> None:
        for connection in self._open_connections():
            connection.close()
        self._connections.clear()
        self._any = None


def frame_size(header: bytes | bytearray) -> int:
    """The size a frame's first 4 bytes announce, or ConnectionAbortedError when they cannot be
    the start of a Kafka answer: a TLS record (a TLS listener answering a plaintext client) or
    a length beyond any answer."""
    if header[0] in (0x15, 0x16) and header[1] == 0x03:
        raise ConnectionAbortedError(
            "the server answered in TLS: set security.protocol=SSL in --command-config"
        )
    size = int.from_bytes(header, "big", signed=True)
    if not 4 <= size <= _MAX_FRAME:
        raise ConnectionAbortedError(f"the server announced a {size}-byte answer: it does not speak Kafka")
    return size


def _receive(sock: Any, size: int) -> bytes:
    chunks = bytearray()
    while len(chunks) < size:
        chunk = sock.recv(min(size - len(chunks), _READ_CHUNK))
        if not chunk:
            raise ConnectionResetError("connection closed by the broker")
        chunks += chunk
    return bytes(chunks)


def _closed_or_out_of_step(connection: _Connection) -> bool:
    """Whether a readable idle connection is unusable: closed, or holding bytes no request asked
    for. TLS 1.3 brokers may send session tickets after the handshake; those are consumed here
    and leave the connection usable."""
    connection.sock.setblocking(False)
    try:
        connection.sock.recv(1)  # b"": closed; anything else: an answer nobody asked for
    except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
        return False
    except OSError:
        return True
    return True


def _tls_pending(connection: _Connection) -> bool:
    pending = getattr(connection.sock, "pending", None)
    return bool(pending and pending())


def address_text(address: tuple[str, int] | None) -> str:
    """The ' (host:port)' appended to a broker's id in messages; '' when the address is unknown."""
    return f" ({address[0]}:{address[1]})" if address else ""


def _os_reason(error: BaseException) -> str:
    if isinstance(error, ssl.SSLError):
        return str(error).split(" (_ssl.c:")[0]
    if isinstance(error, OSError) and error.strerror:
        return error.strerror
    return str(error) or type(error).__name__
