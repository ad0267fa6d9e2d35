"""Session fixtures: one real ZooKeeper and one real Tansu broker for the whole test session.

Registered for every test directory through `pytest_plugins` in tests/conftest.py. Tests share
the servers and keep out of each other's way with unique group, topic and chroot names
(`workload.unique`). Both servers are stopped by PID when the session ends. A test that pauses,
freezes or stops a server takes a private one of its own (`own_zookeeper`, `own_broker`).
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
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    yield from _stopped_at_the_end(start_tansu(tmp_path_factory.mktemp("tansu")))


@pytest.fixture
def own_zookeeper(tmp_path: Path) -> Iterator[ServerProcess]:
    yield from _stopped_at_the_end(start_zookeeper(tmp_path / "zookeeper"))


@pytest.fixture
def own_broker(tmp_path: Path) -> Iterator[ServerProcess]:
    yield from _stopped_at_the_end(start_tansu(tmp_path / "tansu"))


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


@pytest.fixture(scope="session")
def kafka_0822(tmp_path_factory: pytest.TempPathFactory, zookeeper: ServerProcess) -> Iterator[RealKafka]:
    """The seeds' release: a 0.8.2.2 broker (no ApiVersions, auto-creation on) and its old consumer."""
    real = start_zookeeper_mode("0.8.2.2", tmp_path_factory.mktemp("kafka-0822"), zookeeper)
    try:
        yield real
    finally:
        real.broker.stop()


@pytest.fixture(scope="session")
def kafka_39(tmp_path_factory: pytest.TempPathFactory, zookeeper: ServerProcess) -> Iterator[RealKafka]:
    """The last ZooKeeper-mode broker (3.9), which still serves the old consumer's requests."""
    real = start_zookeeper_mode("3.9.1", tmp_path_factory.mktemp("kafka-39"), zookeeper)
    try:
        yield real
    finally:
        real.broker.stop()


@pytest.fixture(scope="session")
def kafka_41(tmp_path_factory: pytest.TempPathFactory) -> Iterator[RealKafka]:
    """A KRaft 4.1 broker with the current clients (KIP-848 groups)."""
    real = start_kraft("4.1.1", tmp_path_factory.mktemp("kafka-41"))
    try:
        yield real
    finally:
        real.broker.stop()


@pytest.fixture(scope="session")
def kafka_09(tmp_path_factory: pytest.TempPathFactory, zookeeper: ServerProcess) -> Iterator[RealKafka]:
    """The last broker before ApiVersions (0.9.0.1): it leaves the probe unanswered, connection open."""
    real = start_zookeeper_mode("0.9.0.1", tmp_path_factory.mktemp("kafka-09"), zookeeper)
    try:
        yield real
    finally:
        real.broker.stop()


@pytest.fixture(scope="session")
def kafka_11(tmp_path_factory: pytest.TempPathFactory, zookeeper: ServerProcess) -> Iterator[RealKafka]:
    """The last release with the old consumer (1.1.1), as a broker."""
    real = start_zookeeper_mode("1.1.1", tmp_path_factory.mktemp("kafka-11"), zookeeper)
    try:
        yield real
    finally:
        real.broker.stop()
