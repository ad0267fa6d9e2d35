"""The only place kafkadiag reaches into kafka-python beyond its public API.

kafka-python's public admin calls each wait for one answer, raise on the first error and ask one
coordinator about one group at a time. A lag scan needs many requests in flight at once and every
error kept with the group or partition it concerns, so the scan sends kafka-python's own request
classes through the admin client's connection manager, which is not public. Everything that
touches it is here; `tests/collect/test_kafka_python_internals.py` fails on a kafka-python
release that changes any of it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any


def connection_manager(admin: Any) -> Any:
    """The admin client's connection manager: connections, cluster metadata and the event loop."""
    return admin._manager


def accepted_versions(manager: Any) -> dict[int, tuple[int, int]]:
    """API key -> (lowest, highest) version the bootstrap broker accepts (or kafka-python probed)."""
    return dict(manager.broker_version_data.api_versions)


def known_brokers(manager: Any) -> dict[int, tuple[str, int]]:
    return {broker.node_id: (broker.host, broker.port) for broker in manager.cluster.brokers()}


def learn_broker(manager: Any, node_id: int, host: str, port: int) -> None:
    """Make a broker that metadata did not list (a coordinator on another listener) addressable."""
    from kafka.protocol.metadata import CoordinatorType

    cluster = manager.cluster
    if cluster.broker_metadata(node_id) is None:
        answer = _CoordinatorAnswer(str(node_id), node_id, host, port)
        cluster.add_coordinator(answer, CoordinatorType.GROUP, answer.key, synthesize_node_id=False)


def run_on_loop(manager: Any, coroutine: Callable[..., Any], *args: Any) -> Any:
    """Run `coroutine(*args)` on the client's I/O loop and return its result."""
    return manager.run(coroutine, *args)


def send(manager: Any, request: Any, node_id: int | None) -> Any:
    """A future for `request` sent to `node_id` (None: the least loaded broker)."""
    return manager.send(request, node_id=node_id)


async def wait_for(manager: Any, future: Any, timeout_ms: float) -> Any:
    """The future's response, or kafka-python's KafkaTimeoutError after timeout_ms."""
    return await manager.wait_for(future, timeout_ms)


def set_request_timeout(manager: Any, timeout_ms: int) -> None:
    """The timeout of requests on connections opened from now on (bootstrapping used a share)."""
    manager.config["request_timeout_ms"] = timeout_ms


def stop_unfinished_client(client: Any) -> None:
    """Stop the I/O thread of a client whose admin never finished bootstrapping (the admin is
    not returned then, so it cannot be closed)."""
    client.close()
    client._net.stop()


class _CoordinatorAnswer:
    """The fields of a FindCoordinator answer that `ClusterMetadata.add_coordinator` reads."""

    def __init__(self, key: str, node_id: int, host: str, port: int) -> None:
        self.key, self.node_id, self.host, self.port = key, node_id, host, port
        self.error_code = 0


def consumer_group_describe_classes() -> tuple[Any, Any]:
    """kafka-python message classes for ConsumerGroupDescribe (API 69, KIP-848), which kafka-python
    3.0 does not define, built by its own schema machinery from Apache Kafka's schema files
    (`schemas/`). Defining the response registers it for decoding by its API key."""
    global _CONSUMER_GROUP_DESCRIBE
    if _CONSUMER_GROUP_DESCRIBE is None:
        from kafka.protocol.api_message import ApiMessage

        from kafkadiag.collect.kafka import schemas

        class ConsumerGroupDescribeRequest(ApiMessage, load_json=schemas):  # type: ignore[call-arg]
            pass

        class ConsumerGroupDescribeResponse(ApiMessage, load_json=schemas):  # type: ignore[call-arg]
            pass

        # Module-level references: the response registry holds only a weak proxy.
        _CONSUMER_GROUP_DESCRIBE = (ConsumerGroupDescribeRequest, ConsumerGroupDescribeResponse)
    return _CONSUMER_GROUP_DESCRIBE


_CONSUMER_GROUP_DESCRIBE: tuple[Any, Any] | None = None
