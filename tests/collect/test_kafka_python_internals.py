"""kafkadiag's only reach into kafka-python beyond its public API (`collect/kafka/internals.py`),
checked against the installed kafka-python with a real broker: a release that renames or changes
any of it fails here, by name, instead of failing in a user's lag scan."""

from __future__ import annotations

import inspect
import time

from kafka import KafkaAdminClient
from kafka.net.compat import KafkaNetClient
from kafka.protocol.admin import ListGroupsRequest

from kafkadiag.collect.kafka import internals
from tests.infra.servers import ServerProcess


def test_every_private_call_works_on_the_installed_kafka_python(broker: ServerProcess) -> None:
    network_clients = []

    def network_client(**settings: object) -> KafkaNetClient:
        network_clients.append(KafkaNetClient(**settings))
        return network_clients[-1]

    admin = KafkaAdminClient(
        bootstrap_servers=broker.address, client_id="kafkadiag", kafka_client=network_client
    )
    try:
        manager = internals.connection_manager(admin)
        accepted = internals.accepted_versions(manager)
        assert accepted[16][1] >= 0 and accepted[3][1] >= 4  # ListGroups, Metadata
        brokers = internals.known_brokers(manager)
        node = next(iter(brokers))
        assert brokers[node][0] == "127.0.0.1"
        internals.learn_broker(manager, 9977, "127.0.0.1", 1)
        learned = manager.cluster.broker_metadata(9977)
        assert (learned.host, learned.port) == ("127.0.0.1", 1)
        internals.set_request_timeout(manager, 1234)
        assert manager.config["request_timeout_ms"] == 1234

        async def ask() -> object:
            future = internals.send(manager, ListGroupsRequest(min_version=0, max_version=0), node)
            return await internals.wait_for(manager, future, 5000)

        response = internals.run_on_loop(manager, ask)
        assert response.error_code == 0
        assert network_clients, "the admin client no longer builds its network client with kafka_client"
    finally:
        admin.close()


def test_an_unfinished_client_can_be_stopped() -> None:
    client = KafkaNetClient(bootstrap_servers="127.0.0.1:1", client_id="kafkadiag")
    client._net.start()
    started = time.monotonic()
    internals.stop_unfinished_client(client)
    assert time.monotonic() - started < 5


def test_the_wait_and_send_signatures_are_the_ones_used() -> None:
    from kafka.net.manager import KafkaConnectionManager

    assert list(inspect.signature(KafkaConnectionManager.send).parameters)[:3] == [
        "self",
        "request",
        "node_id",
    ]
    assert list(inspect.signature(KafkaConnectionManager.wait_for).parameters) == [
        "self",
        "future",
        "timeout_ms",
    ]
