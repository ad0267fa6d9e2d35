"""Bootstrapping the scan's kafka-python admin client from --bootstrap-server.

Bootstrapping shares the deadline among the bootstrap servers in the order given: each is tried
alone with its share of what is left, so a server that accepts connections and never answers
cannot use up the time of a healthy one behind it. Each failed attempt is reported through
`notify`. Brokers that predate the version probe (ApiVersions, 0.10) are recognised from what
kafka-python logs while connecting, and spoken to with pinned versions.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Callable
from typing import Any

import kafka.errors
from kafka import KafkaAdminClient
from kafka.net.compat import KafkaNetClient

from kafkadiag.collect.errors import BrokerRefusedCredentialsError, BrokerUnreachableError
from kafkadiag.collect.kafka import internals
from kafkadiag.digits import decimal
from kafkadiag.lag.snapshot import REFUSED_CREDENTIALS

NO_ANSWER = "no answer within --timeout"
CLOSED_ON_CREDENTIALS = (
    "the broker closed the connection on receiving the SASL credentials, as Kafka does when it "
    "fails authentication"
)
# The largest answer accepted from a broker. kafkadiag's answers are small (a describe of
# thousands of groups is a few MB); anything near this is not a Kafka answer.
MAX_ANSWER_BYTES = 100 * 1024 * 1024
# Requests in flight on one connection (brokers answer them in order).
MAX_IN_FLIGHT = 500


def parse_bootstrap(servers: str) -> list[tuple[str, int]]:
    """host:port[,host:port...], with [v6]:port for IPv6 literals; ValueError naming the bad entry."""
    addresses = []
    for entry in servers.split(","):
        entry = entry.strip()
        if not entry:
            continue
        host, _, port_text = entry.rpartition(":")
        port = decimal(port_text)
        if not host or port is None or not 0 < port < 65536:
            raise ValueError(f"{entry!r} is not host:port")
        addresses.append((host.strip("[]"), port))
    if not addresses:
        raise ValueError("no host:port given")
    return addresses


def server_text(address: tuple[str, int]) -> str:
    """host:port, with an IPv6 literal in brackets."""
    host, port = address
    return f"[{host}]:{port}" if ":" in host else f"{host}:{port}"


def address_text(address: tuple[str, int] | None) -> str:
    return f" ({server_text(address)})" if address is not None else ""


def first_bootstrapped_admin(
    addresses: list[tuple[str, int]], config: dict[str, Any], timeout_s: float, notify: Callable[[str], None]
) -> Any:
    """The admin client of the first server, in order, that bootstraps within its share of what
    is left of timeout_s; BrokerUnreachableError naming every server's cause otherwise."""
    deadline = time.monotonic() + timeout_s
    failures: list[str] = []
    refused = 0
    for index, address in enumerate(addresses):
        share = (deadline - time.monotonic()) / (len(addresses) - index)
        try:
            return _negotiated_admin(server_text(address), config, max(share, 0.05))
        except _BootstrapFailed as failure:
            if failure.credentials:
                raise BrokerRefusedCredentialsError(
                    f"the Kafka broker at {server_text(address)} {REFUSED_CREDENTIALS} ({failure.reason})"
                ) from None
            failures.append(f"{server_text(address)}: {failure.reason}")
            refused += failure.refused
            if failure.final:
                break
            if index + 1 < len(addresses):
                notify(
                    f"kafkadiag: broker {server_text(address)}: {failure.reason}; "
                    f"trying {server_text(addresses[index + 1])}"
                )
    servers = ",".join(server_text(address) for address in addresses)
    if refused == len(addresses):
        raise BrokerUnreachableError(
            f"cannot reach a Kafka broker at {servers} ({'; '.join(failures)}; nothing listens there: "
            "check that the broker runs and that this is its listener's host and port)"
        )
    raise BrokerUnreachableError(
        f"cannot reach a Kafka broker at {servers} within {timeout_s:g}s ({'; '.join(failures)})"
    )


# How long a broker gets to answer the version probe (ApiVersions, Kafka 0.10+), counted from
# the moment its transport is up (TCP connected, TLS handshake done), before it is taken for a
# broker that predates it. Brokers before 0.10 never answer it: 0.8.2 closes the connection, 0.9
# logs an ArrayIndexOutOfBoundsException and keeps the connection open. A short first look, then
# a longer one for a broker that was only slow.
PROBE_SPANS_S = (0.25, 1.5)
# SASL mechanisms that need a broker that answers the probe: PLAIN came with 0.10.0, SCRAM with
# 0.10.2, OAUTHBEARER with 2.0 (0.9 had GSSAPI alone). With one of these, a silent broker is slow,
# never old, and gets the whole --timeout.
MECHANISMS_AFTER_PROBE = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "OAUTHBEARER")
# Pinned versions for brokers without ApiVersions: 0.9 added the group APIs (ListGroups,
# DescribeGroups, FindCoordinator for Kafka-stored groups); 0.8.2 has OffsetFetch v1 and
# ConsumerMetadata (FindCoordinator v0).
BEFORE_VERSION_PROBE = ((0, 9), (0, 8, 2))
# A refused connection is known at once. It is asked again for this long from the first attempt
# (a broker being restarted opens its port within moments), then reported: the rest of --timeout
# would only hear the same refusal.
REFUSED_RETRY_S = 1.0


def _negotiated_admin(server: str, config: dict[str, Any], timeout_s: float) -> Any:
    """An admin client speaking the versions the broker understands, within timeout_s.

    A pinned `api_version` (api.version in --command-config) is used as given. Otherwise the
    broker's ApiVersions answer decides; a broker that lets its transport come up and then never
    answers it, for a whole probe span, predates 0.10, and is spoken to as 0.9, or as 0.8.2 when
    it does not know ListGroups. A slow link (a TLS handshake over a long round trip) is not
    taken for an old broker: each span is counted from when the transport was up.
    """
    started = time.monotonic()
    deadline = started + timeout_s
    if config.get("api_version") is not None:
        return _admin_unless_refused(server, config, started, deadline)
    if str(config.get("sasl_mechanism") or "").upper() in MECHANISMS_AFTER_PROBE:
        return _admin_unless_refused(server, config, started, deadline)
    spans = list(PROBE_SPANS_S)
    transport_s = 0.0  # how long the last attempt took to bring its transport up
    slow_retries = len(spans)
    while spans:
        span = spans[0]
        try:
            window = min(deadline, time.monotonic() + transport_s + span) - time.monotonic()
            return _bootstrapped_admin(server, config, window)
        except _BootstrapFailed as failure:
            left = deadline - time.monotonic()
            if failure.final or left <= 0.05:
                raise
            if failure.refused:
                return _admin_unless_refused(server, config, started, deadline)
            if not failure.probe_unanswered:
                return _bootstrapped_admin(server, config, left)
            if failure.probe_dropped:
                break
            transport_s = failure.transport_s or 0.0
            if (failure.unanswered_s or 0.0) < span * 0.9 and slow_retries > 0:
                slow_retries -= 1  # the transport came up late: the broker had no whole span
                continue
            spans.pop(0)
    newest_old, oldest = BEFORE_VERSION_PROBE
    admin = _bootstrapped_admin(server, {**config, "api_version": newest_old}, deadline - time.monotonic())
    if _answers_list_groups(admin, deadline):
        return admin
    admin.close()
    return _bootstrapped_admin(
        server, {**config, "api_version": oldest}, max(deadline - time.monotonic(), 0.05)
    )


def _admin_unless_refused(server: str, config: dict[str, Any], started: float, deadline: float) -> Any:
    """An admin client, tried until REFUSED_RETRY_S after `started`: refused all that time, the
    refusal is the answer (_BootstrapFailed); any other failure gets the rest of the deadline."""
    try:
        return _bootstrapped_admin(
            server, config, min(deadline, started + REFUSED_RETRY_S) - time.monotonic()
        )
    except _BootstrapFailed as failure:
        left = deadline - time.monotonic()
        if failure.final or failure.refused or left <= 0.05:
            raise
        return _bootstrapped_admin(server, config, left)


def _answers_list_groups(admin: Any, deadline: float) -> bool:
    """Whether a broker that predates ApiVersions knows ListGroups (0.9): 0.8.2 closes the
    connection on an API key it does not know."""
    from kafka.protocol.admin import ListGroupsRequest

    manager = internals.connection_manager(admin)
    brokers = sorted(internals.known_brokers(manager))
    if not brokers:
        return True

    async def probe() -> bool:
        future = internals.send(manager, ListGroupsRequest(min_version=0, max_version=0), brokers[0])
        try:
            await internals.wait_for(manager, future, max((deadline - time.monotonic()) * 1000, 1))
        except Exception:  # noqa: BLE001 - no answer is the answer
            return False
        return True

    return bool(internals.run_on_loop(manager, probe))


class _BootstrapFailed(Exception):
    def __init__(
        self,
        reason: str,
        final: bool,
        probe_unanswered: bool = False,
        probe_dropped: bool = False,
        refused: bool = False,
        credentials: bool = False,
        transport_s: float | None = None,
        unanswered_s: float | None = None,
    ) -> None:
        super().__init__(reason)
        # How long the transport took to come up, and how long the broker then left the version
        # probe unanswered before the attempt ended (None: the transport never came up).
        self.transport_s = transport_s
        self.unanswered_s = unanswered_s
        self.reason = reason
        self.final = final
        # Every attempt's connection was refused: nothing listens at the address.
        self.refused = refused
        # The broker refused the SASL credentials: every server would.
        self.credentials = credentials
        # The connection was made and the broker then dropped or ignored the version probe.
        self.probe_unanswered = probe_unanswered
        # ... and dropped it: no broker that knows ApiVersions does that.
        self.probe_dropped = probe_dropped


class _BootstrapLog(logging.Handler):
    """The causes kafka-python logs while bootstrapping (refused, closed, TLS or SASL errors):
    its bootstrap error itself only says that it gave up."""

    def __init__(self) -> None:
        super().__init__(logging.DEBUG)  # DEBUG reaches it from kafka.net.connection alone
        self.causes: list[str] = []
        # A SaslAuthenticate request sent and not answered: a connection lost then was closed by
        # the broker on receiving the credentials.
        self.credentials_unanswered = False
        self.transport_connected = False
        self.versions_answered = False
        self.started = time.monotonic()
        self.transport_up_at: float | None = None  # the last connection's, TLS handshake done

    @property
    def probe_unanswered(self) -> bool:
        """Connected, the version probe never answered, and the connection lost to a drop or a
        timeout (not to TLS or SASL, which fail with their own errors)."""
        return (
            self.transport_connected
            and not self.versions_answered
            and all(_is_drop_or_timeout(cause) for cause in self.causes)
        )

    @property
    def refused(self) -> bool:
        """Every connection attempt was refused (ECONNREFUSED), none connected."""
        return (
            not self.transport_connected
            and bool(self.causes)
            and all("ECONNREFUSED" in cause for cause in self.causes)
        )

    @property
    def probe_dropped(self) -> bool:
        return self.probe_unanswered and any("socket disconnected" in cause for cause in self.causes)

    @property
    def refused_credentials(self) -> str | None:
        """The broker's refusal of the credentials, when it said so on any attempt, or the
        connection it closed on receiving them.

        A broker that refuses credentials sends its error and closes the connection in one go
        (after connection.failed.authentication.delay.ms). When both reach kafka-python in one
        read (a loaded host, a long link), kafka-python 3.0.12 reports the closed connection and
        drops the error with it, so the close itself is the evidence."""
        said = next((cause for cause in self.causes if "Authentication" in cause), None)
        return said or next((cause for cause in self.causes if cause == CLOSED_ON_CREDENTIALS), None)

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if ": connected to " in message:  # logged once TLS, where used, has done its handshake
            self.transport_connected = True
            self.transport_up_at = time.monotonic()
        elif "Broker version identified" in message or message.endswith(">: Connected"):
            self.versions_answered = True
        if " Request " in message and ": SaslAuthenticateRequest(" in message:
            self.credentials_unanswered = True
        elif ": SaslAuthenticateResponse(" in message:
            self.credentials_unanswered = False
        if record.levelno < logging.INFO:
            return
        # "Connection failed: <cause>", "Bootstrap connection to X failed: <cause> (backoff ...)"
        if "failed: " in message and not message.startswith("Bootstrap failed"):
            cause = message.split("failed: ", 1)[1].split(" (backoff")[0]
            if self.credentials_unanswered and "socket disconnected" in cause:  # closed by the broker
                cause, self.credentials_unanswered = CLOSED_ON_CREDENTIALS, False
            self.causes.append(cause)


def _bootstrapped_admin(server: str, config: dict[str, Any], timeout_s: float) -> Any:
    timeout_ms = max(int(timeout_s * 1000), 50)
    network_clients: list[Any] = []

    def network_client(**settings: Any) -> Any:
        network_clients.append(KafkaNetClient(**settings))
        return network_clients[-1]

    settings = {
        "client_id": "kafkadiag",
        "reconnect_backoff_max_ms": 1000,
        # a round puts many requests on one connection at once; brokers answer them in order
        "max_in_flight_requests_per_connection": MAX_IN_FLIGHT,
        "metadata_max_age_ms": 24 * 3600 * 1000,  # one scan: no background refresh
        **config,
        # bootstrapping from this server gets its share of --timeout, and no more
        "request_timeout_ms": min(int(config.get("request_timeout_ms") or timeout_ms), timeout_ms),
        "receive_message_max_bytes": MAX_ANSWER_BYTES,
        "bootstrap_timeout_ms": timeout_ms,
        "bootstrap_servers": server,
        "kafka_client": network_client,
    }
    kafka_log = logging.getLogger("kafka")
    log = _BootstrapLog()
    kafka_log.addHandler(log)
    kafka_log.setLevel(logging.INFO)
    kafka_log.propagate = False
    # The requests a connection sends (a few while bootstrapping), to know when it was lost
    connection_log = logging.getLogger("kafka.net.connection")
    connection_log.setLevel(logging.DEBUG)
    try:
        return KafkaAdminClient(**settings)
    except Exception as error:  # noqa: BLE001 - every bootstrap failure is reported the same way
        for client in network_clients:
            internals.stop_unfinished_client(client)
        reason = describe_error(error)
        refused = log.refused_credentials
        if refused is None and isinstance(error, kafka.errors.SaslAuthenticationFailedError):
            refused = reason
        if refused is not None:
            raise _BootstrapFailed(refused, final=True, credentials=True) from None
        if type(error).__name__ == "KafkaTimeoutError":
            reason = log.causes[-1] if log.causes else f"no answer within {timeout_s:.3g}s"
        if log.refused:
            reason = f"connection refused for {REFUSED_RETRY_S:g}s"
        up_at = log.transport_up_at
        raise _BootstrapFailed(
            reason,
            final=_is_final(error),
            probe_unanswered=log.probe_unanswered,
            probe_dropped=log.probe_dropped,
            refused=log.refused,
            transport_s=None if up_at is None else up_at - log.started,
            unanswered_s=None if up_at is None else time.monotonic() - up_at,
        ) from None
    finally:
        connection_log.setLevel(logging.NOTSET)
        kafka_log.removeHandler(log)
        # kafka-python logs every later failed request too: kafkadiag reports each one itself.
        kafka_log.setLevel(logging.CRITICAL)


def _is_drop_or_timeout(cause: str) -> bool:
    return any(
        symptom in cause
        for symptom in ("socket disconnected", "Timeout during ApiVersions", "Request timed out", NO_ANSWER)
    )


def _is_final(error: Exception) -> bool:
    """Failures that the next bootstrap server would meet too (settings, credentials)."""
    return isinstance(
        error,
        (
            kafka.errors.KafkaConfigurationError,
            kafka.errors.SaslAuthenticationFailedError,
            ValueError,
            TypeError,
        ),
    )


def describe_error(error: BaseException) -> str:
    name = type(error).__name__
    if name == "KafkaTimeoutError":
        return NO_ANSWER
    text = str(error)
    if not text or text == name:
        return name
    return text if text.startswith(name) else f"{name}: {text}"
