"""The scan's Kafka client: kafka-python's admin client, requests sent in rounds.

A round sends every request it is given at once and waits for all the answers under one
deadline; the scan's steps (list groups, find coordinators, describe groups and fetch offsets,
read watermarks) each need the one before, and everything inside a step is independent. Every
security protocol and SASL mechanism kafka-python speaks works, with the settings `collect.config`
makes from a Kafka-style --command-config. Bootstrapping, and the versions spoken to brokers
that predate ApiVersions, are `bootstrap`'s.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

from kafkadiag.collect.collections_paused import few_collections
from kafkadiag.collect.errors import BrokerUnreachableError
from kafkadiag.collect.kafka import internals
from kafkadiag.collect.kafka import requests as wire
from kafkadiag.collect.kafka.bootstrap import (
    MAX_IN_FLIGHT,
    NO_ANSWER,
    address_text,
    describe_error,
    first_bootstrapped_admin,
    parse_bootstrap,
)
from kafkadiag.collect.kafka.translate import to_answer, to_kafka_python

# Re-exported: callers name the client module for addresses and the no-answer reason.
__all__ = ["NO_ANSWER", "KafkaClient", "address_text", "describe_error", "open_client", "parse_bootstrap"]


class KafkaClient:
    """A bootstrapped kafka-python admin client; BrokerUnreachableError within about timeout_s."""

    def __init__(
        self,
        bootstrap_servers: str,
        config: dict[str, Any],
        timeout_s: float,
        notify: Callable[[str], None] | None = None,
    ) -> None:
        self.admin = first_bootstrapped_admin(
            parse_bootstrap(bootstrap_servers), config, timeout_s, notify or _to_stderr
        )
        self.manager = internals.connection_manager(self.admin)
        # Each request may take what is left of --timeout (or request.timeout.ms when set).
        request_timeout_ms = config.get("request_timeout_ms") or max(int(timeout_s * 1000), 50)
        internals.set_request_timeout(self.manager, int(request_timeout_ms))
        self.requests = 0
        self.round_trips = 0

    @property
    def brokers(self) -> dict[int, tuple[str, int]]:
        return internals.known_brokers(self.manager)

    def accepts(self, request: Any) -> bool:
        try:
            wire.pick_version(request, internals.accepted_versions(self.manager))
        except wire.UnsupportedVersionError:
            return False
        return True

    def add_broker(self, broker: wire.Broker) -> None:
        internals.learn_broker(self.manager, broker.node_id, broker.host, broker.port)

    def round(self, calls: Sequence[tuple[int | None, Any]], deadline: float) -> list[tuple[Any, str | None]]:
        """(node id or None, request) -> (answer, None) or (None, reason), all within deadline."""
        if not calls:
            return []
        self.requests += len(calls)
        self.round_trips += 1
        accepted = internals.accepted_versions(self.manager)
        return list(internals.run_on_loop(self.manager, self._round, calls, accepted, deadline))

    async def _round(
        self, calls: Sequence[tuple[int | None, Any]], accepted: dict[int, tuple[int, int]], deadline: float
    ) -> list[tuple[Any, str | None]]:
        outcomes: list[tuple[Any, str | None]] = [(None, NO_ANSWER)] * len(calls)
        # kafka-python holds at most MAX_IN_FLIGHT requests per connection: a larger round is
        # sent in waves, each wave waiting for the one before.
        waves: list[list[int]] = []
        per_node: dict[int | None, int] = {}
        for index, (node, _) in enumerate(calls):
            wave_number = per_node.get(node, 0) // MAX_IN_FLIGHT
            per_node[node] = per_node.get(node, 0) + 1
            if wave_number == len(waves):
                waves.append([])
            waves[wave_number].append(index)
        for wave in waves:
            sent: list[tuple[int, Any, int, Any]] = []
            for index in wave:
                node, request = calls[index]
                try:
                    version = wire.pick_version(request, accepted)
                except wire.UnsupportedVersionError as error:
                    outcomes[index] = (None, str(error))
                    continue
                future = internals.send(self.manager, to_kafka_python(request, version), node)
                sent.append((index, request, version, future))
            for index, request, version, future in sent:
                try:
                    remaining_ms = max((deadline - time.monotonic()) * 1000, 1)
                    response = await internals.wait_for(self.manager, future, remaining_ms)
                    outcomes[index] = (to_answer(request, version, response), None)
                except Exception as error:  # noqa: BLE001 - kept with the request it concerns
                    outcomes[index] = (None, describe_error(error))
        return outcomes

    def close(self) -> None:
        try:
            self.admin.close()
        except Exception:  # noqa: BLE001 - nothing useful to do when closing fails
            pass


def _to_stderr(message: str) -> None:
    print(message, file=sys.stderr)


def open_client(bootstrap_servers: str, client_config: dict[str, Any], timeout_s: float) -> KafkaClient:
    """A bootstrapped client, or BrokerUnreachableError within about timeout_s."""
    try:
        with few_collections():  # bootstrapping decodes the whole cluster's metadata
            return KafkaClient(bootstrap_servers, client_config, timeout_s)
    except ValueError as error:
        raise BrokerUnreachableError(f"--bootstrap-server {bootstrap_servers}: {error}") from None
