"""Real servers for the tests: the sandbox's ZooKeeper (from Apache Kafka 3.9's jars) and a Tansu
broker (tests/infra/tansu.py), bound to 127.0.0.1 on free ports and stopped by PID
(kafkadiag/sandbox/servers.py)."""

from __future__ import annotations

from kafkadiag.sandbox.servers import (
    ServerProcess,
    free_port,
    port_is_open,
    spawn,
    start_zookeeper,
    zookeeper_classpath,
)
from tests.infra.tansu import start_tansu, tansu_binary

__all__ = [
    "ServerProcess",
    "free_port",
    "port_is_open",
    "spawn",
    "start_tansu",
    "start_zookeeper",
    "tansu_binary",
    "zookeeper_classpath",
]
