"""Session fixtures: one real ZooKeeper (Kafka 3.9's own jars) and real Apache Kafka brokers of
several release lines for the whole test session; the default `broker` is a KRaft Kafka 4.1 one.

Registered for every test directory through `pytest_plugins` in tests/conftest.py. Tests share
the servers and keep out of each other's way with unique group, topic and chroot names
(`workload.unique`). Every server is stopped by PID when the session ends. A test that pauses,
freezes or stops a server takes a private one of its own (`own_zookeeper`, `own_broker`).
Tansu, a Kafka-protocol broker that is not Apache Kafka, stays as `tansu_broker` for the tests
that check kafkadiag against another implementation of the protocol.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.infra.real_kafka import RealKafka, start_kraft, start_zookeeper_mode
from tests.infra.servers import ServerProcess, start_tansu, start_zookeeper
from tests.infra.workload import Cluster


def _stopped_at_the_end(server: ServerProcess) -> Iterator[ServerProcess]:
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="session")
def zookeeper(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    yield from _stopped_at_the_end(start_zookeeper(tmp_path_factory.mktemp("zookeeper")))


@pytest.fixture(scope="session")
def broker(kafka_41: RealKafka) -> ServerProcess:
    """The default broker: the session's real KRaft Kafka 4.1 broker."""
    return kafka_41.broker.server


@pytest.fixture(scope="session")
def tansu_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    yield from _stopped_at_the_end(start_tansu(tmp_path_factory.mktemp("tansu")))


@pytest.fixture
def own_zookeeper(tmp_path: Path) -> Iterator[ServerProcess]:
    yield from _stopped_at_the_end(start_zookeeper(tmp_path / "zookeeper"))


@pytest.fixture
def own_broker(tmp_path: Path) -> Iterator[ServerProcess]:
    """A private real broker, for a test that freezes or stops it."""
    real = start_kraft("4.1.1", tmp_path)
    yield from _stopped_at_the_end(real.broker.server)


@pytest.fixture
def cluster(zookeeper: ServerProcess, broker: ServerProcess) -> Iterator[Cluster]:
    """A per-test ZooKeeper chroot with the broker registered in it, over the session servers."""
    instance = Cluster(zookeeper.address, broker.address)
    try:
        yield instance
    finally:
        instance.close()


# ---- real Apache Kafka, one broker per release line, shared by the session -------------------
# Each starts on first use; the release's jars come from the cache `.ci/run` filled.


def _stopped_broker_at_the_end(real: RealKafka) -> Iterator[RealKafka]:
    try:
        yield real
    finally:
        real.broker.stop()


def _zookeeper_mode(
    version: str, factory: pytest.TempPathFactory, zookeeper: ServerProcess
) -> Iterator[RealKafka]:
    workdir = factory.mktemp(f"kafka-{version.replace('.', '')}")
    yield from _stopped_broker_at_the_end(start_zookeeper_mode(version, workdir, zookeeper))


@pytest.fixture(scope="session")
def kafka_0822(tmp_path_factory: pytest.TempPathFactory, zookeeper: ServerProcess) -> Iterator[RealKafka]:
    """The seeds' release: a 0.8.2.2 broker (no ApiVersions, auto-creation on) and its old consumer."""
    yield from _zookeeper_mode("0.8.2.2", tmp_path_factory, zookeeper)


@pytest.fixture(scope="session")
def kafka_09(tmp_path_factory: pytest.TempPathFactory, zookeeper: ServerProcess) -> Iterator[RealKafka]:
    """The last broker before ApiVersions (0.9.0.1): it leaves the probe unanswered, connection open."""
    yield from _zookeeper_mode("0.9.0.1", tmp_path_factory, zookeeper)


@pytest.fixture(scope="session")
def kafka_11(tmp_path_factory: pytest.TempPathFactory, zookeeper: ServerProcess) -> Iterator[RealKafka]:
    """The last release with the old consumer (1.1.1), as a broker."""
    yield from _zookeeper_mode("1.1.1", tmp_path_factory, zookeeper)


@pytest.fixture(scope="session")
def kafka_39(tmp_path_factory: pytest.TempPathFactory, zookeeper: ServerProcess) -> Iterator[RealKafka]:
    """The last ZooKeeper-mode broker (3.9), which still serves the old consumer's requests."""
    yield from _zookeeper_mode("3.9.1", tmp_path_factory, zookeeper)


@pytest.fixture(scope="session")
def kafka_41(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealKafka]:
    """A KRaft 4.1 broker with the current clients (KIP-848 groups)."""
    yield from _stopped_broker_at_the_end(start_kraft("4.1.1", tmp_path_factory.mktemp("kafka-41")))
