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
