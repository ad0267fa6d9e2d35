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

from kafka import KafkaAdminClient
from kafka.net.compat import KafkaNetClient

from kafkadiag.collect.errors import BrokerUnreachableError
from kafkadiag.collect.kafka import internals
from kafkadiag.digits import decimal

NO_ANSWER = "no answer within --timeout"
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


# How long a broker gets to answer the version probe (ApiVersions, Kafka 0.10+) before it is
# taken for a broker that predates it. Brokers before 0.10 never answer it: 0.8.2 closes the
# connection, 0.9 logs an ArrayIndexOutOfBoundsException and keeps the connection open.
VERSION_PROBE_S = 1.5
FIRST_PROBE_S = 0.25
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
    broker's ApiVersions answer decides; a broker that accepts the connection and never answers
    it predates 0.10, and is spoken to as 0.9, or as 0.8.2 when it does not know ListGroups.
    """
    started = time.monotonic()
    deadline = started + timeout_s
    if config.get("api_version") is not None:
        return _admin_unless_refused(server, config, started, deadline)
    # A short first look: a broker that drops the connection at the probe is old for certain;
    # one that only stays silent may be slow, and gets the rest of VERSION_PROBE_S.
    for window in (FIRST_PROBE_S, VERSION_PROBE_S):
        try:
            return _bootstrapped_admin(server, config, min(deadline, started + window) - time.monotonic())
        except _BootstrapFailed as failure:
            left = deadline - time.monotonic()
            if failure.final or left <= 0.05:
                raise
            if failure.refused:
                return _admin_unless_refused(server, config, started, deadline)
            if failure.probe_dropped:
                break
            if not failure.probe_unanswered:
                return _bootstrapped_admin(server, config, left)
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
    ) -> None:
        super().__init__(reason)
        self.reason = reason
        self.final = final
        # Every attempt's connection was refused: nothing listens at the address.
        self.refused = refused
        # The connection was made and the broker then dropped or ignored the version probe.
        self.probe_unanswered = probe_unanswered
        # ... and dropped it: no broker that knows ApiVersions does that.
        self.probe_dropped = probe_dropped


class _BootstrapLog(logging.Handler):
    """The causes kafka-python logs while bootstrapping (refused, closed, TLS or SASL errors):
    its bootstrap error itself only says that it gave up."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.causes: list[str] = []
        self.transport_connected = False
        self.versions_answered = False

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
        """The broker's refusal of the credentials, when it said so on any attempt: later attempts
        may only see the connection dropped after the broker's authentication delay."""
        return next((cause for cause in self.causes if "Authentication" in cause), None)

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        if ": connected to " in message:
            self.transport_connected = True
        elif "Broker version identified" in message or message.endswith(">: Connected"):
            self.versions_answered = True
        # "Connection failed: <cause>", "Bootstrap connection to X failed: <cause> (backoff ...)"
        if "failed: " in message and not message.startswith("Bootstrap failed"):
            self.causes.append(message.split("failed: ", 1)[1].split(" (backoff")[0])


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
    try:
        return KafkaAdminClient(**settings)
    except Exception as error:  # noqa: BLE001 - every bootstrap failure is reported the same way
        for client in network_clients:
            internals.stop_unfinished_client(client)
        reason = describe_error(error)
        refused = log.refused_credentials
        if refused is not None:
            raise _BootstrapFailed(refused, final=True) from None
        if type(error).__name__ == "KafkaTimeoutError":
            reason = log.causes[-1] if log.causes else f"no answer within {timeout_s:.3g}s"
        if log.refused:
            reason = f"connection refused for {REFUSED_RETRY_S:g}s"
        raise _BootstrapFailed(
            reason,
            final=_is_final(error),
            probe_unanswered=log.probe_unanswered,
            probe_dropped=log.probe_dropped,
            refused=log.refused,
        ) from None
    finally:
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
    import kafka.errors

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
