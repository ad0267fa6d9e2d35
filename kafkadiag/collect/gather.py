"""One snapshot from every source the user named: ZooKeeper groups, Kafka groups, watermarks.

`Collector` keeps its broker connections open between snapshots, so `--samples` and `--watch`
pay for bootstrapping once; a ZooKeeper session costs one round trip and is opened per snapshot.
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from kafkadiag.collect.errors import BrokerUnreachableError, ZooKeeperUnreachableError
from kafkadiag.collect.kafka import client as kafka_client
from kafkadiag.collect.kafka import scan as kafka_collector
from kafkadiag.collect.zookeeper.security import NO_SECURITY, ZooKeeperSecurity
from kafkadiag.errors import UsageError
from kafkadiag.lag.snapshot import (
    SOURCE_KAFKA,
    SOURCE_ZOOKEEPER,
    BrokerPartition,
    GroupSnapshot,
    Snapshot,
    TopicLayout,
)


@dataclass(frozen=True)
class LagTarget:
    """What to read and how to connect."""

    bootstrap_servers: str | None = None
    zookeeper: str | None = None
    zookeeper_security: ZooKeeperSecurity = NO_SECURITY
    client_config: dict[str, Any] = field(default_factory=dict)
    groups: tuple[str, ...] = ()
    all_groups: bool = False
    topics: tuple[str, ...] = ()
    timeout_s: float = 10.0

    def validate(self) -> None:
        if not self.bootstrap_servers and not self.zookeeper:
            raise UsageError(
                "name a cluster: --bootstrap-server (Kafka-stored offsets) and/or --zookeeper (old consumer)",
                help_text="Or set KAFKADIAG_BOOTSTRAP_SERVER / KAFKADIAG_ZOOKEEPER.",
            )
        if not self.groups and not self.all_groups:
            raise UsageError("name the groups with --group (repeatable) or ask for --all-groups")
        if self.groups and self.all_groups:
            raise UsageError("--group and --all-groups exclude each other")
        if self.timeout_s <= 0:
            raise UsageError("--timeout must be positive")
        if self.bootstrap_servers:
            from kafkadiag.collect.kafka.client import parse_bootstrap

            try:
                parse_bootstrap(self.bootstrap_servers)
            except ValueError as error:
                raise UsageError(
                    f"--bootstrap-server {self.bootstrap_servers}: {error}",
                    help_text="Give host:port[,host:port...], as Kafka's tools take it (e.g. broker1:9092).",
                ) from None

    def provenance(self) -> tuple[tuple[str, str], ...]:
        sources = []
        if self.zookeeper:
            sources.append(("zookeeper", self.zookeeper))
        if self.bootstrap_servers:
            sources.append(("bootstrap_servers", self.bootstrap_servers))
        return tuple(sources)


def build_lag_target(
    bootstrap_servers: str | None,
    zookeeper: str | None,
    command_config: str | None,
    groups: tuple[str, ...],
    all_groups: bool,
    topics: tuple[str, ...],
    timeout_s: float,
    zookeeper_security: ZooKeeperSecurity = NO_SECURITY,
) -> tuple[LagTarget, list[str]]:
    """The LagTarget the connection options name, not yet validated, and what reading the
    --command-config file noted (settings kafka-python takes differently or ignores)."""
    from kafkadiag.collect.config import kafka_python_config, read_command_config

    client_config: dict[str, Any] = {}
    notes: list[str] = []
    if command_config:
        client_config, notes = kafka_python_config(read_command_config(command_config))
    target = LagTarget(
        bootstrap_servers=bootstrap_servers or None,
        zookeeper=zookeeper or None,
        zookeeper_security=zookeeper_security,
        client_config=client_config,
        groups=groups,
        all_groups=all_groups,
        topics=topics,
        timeout_s=timeout_s,
    )
    return target, list(notes)


class Collector:
    def __init__(self, target: LagTarget) -> None:
        target.validate()
        self.target = target
        self._client: Any = None
        self._client_bootstrap: str | None = None

    def close(self) -> None:
        if self._client is not None:
            self._client.close()
            self._client = None

    def __enter__(self) -> Collector:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _kafka(self, bootstrap: str) -> Any:
        if self._client is None or self._client_bootstrap != bootstrap:
            if self._client is not None:
                self._client.close()
            self._client = kafka_client.open_client(
                bootstrap, self.target.client_config, self.target.timeout_s
            )
            self._client_bootstrap = bootstrap
        return self._client

    def snapshot(self) -> Snapshot:
        target = self.target
        taken_at_ms = int(time.time() * 1000)
        started = time.monotonic()
        reading = _Reading()
        wanted_groups = list(target.groups) if target.groups else None
        topic_filter = list(target.topics) or None
        zk_groups = self._read_zookeeper(reading, wanted_groups, topic_filter) if target.zookeeper else []
        needed = _needed_partitions(zk_groups, reading.topics, topic_filter)
        kafka_groups = self._read_brokers(reading, wanted_groups, topic_filter, needed)
        if target.zookeeper and zk_groups:
            reading.partitions = _with_zookeeper_states(target, reading.partitions, needed)
        unread = _unread_holders(target, reading.unreachable)
        groups = _merge_groups(wanted_groups, zk_groups, kafka_groups, unread)
        for topic in topic_filter or ():
            known = [layout for layout in reading.topics if layout.topic == topic]
            if known and all(layout.error is not None for layout in known):
                reading.errors.append(
                    f"topic {topic}: " + "; ".join(sorted({str(layout.error) for layout in known}))
                )
        return Snapshot(
            taken_at_ms=taken_at_ms,
            duration_ms=round((time.monotonic() - started) * 1000, 3),
            sources=target.provenance(),
            groups=tuple(groups),
            partitions=tuple(reading.partitions),
            topics=tuple(reading.topics),
            errors=tuple(reading.errors),
            unreachable=tuple(reading.unreachable),
            stats=tuple(sorted(reading.stats.items())),
        )

    def _read_zookeeper(
        self, reading: _Reading, wanted_groups: list[str] | None, topic_filter: list[str] | None
    ) -> list[GroupSnapshot]:
        """The old consumer's groups; the topic layouts and brokers registered go into `reading`."""
        target = self.target
        try:
            # A new session per snapshot: it is one round trip, and a session kept open
            # between samples would need pings to stay alive.
            scan = _zookeeper_scan().scan(
                target.zookeeper, wanted_groups, topic_filter, target.timeout_s, target.zookeeper_security
            )
        except ZooKeeperUnreachableError as error:
            # Not raised: the report must still say, per group, what could not be read,
            # and machine outputs must still be written (with the failure as data).
            reading.unreachable.append((SOURCE_ZOOKEEPER, error.message))
            reading.errors.append(f"{error.message}: old-consumer groups were not read")
            return []
        reading.topics += scan.topics
        reading.zk_brokers = scan.brokers
        reading.errors += scan.errors
        reading.stats["zookeeper_reads"] += scan.reads
        reading.stats["zookeeper_round_trips"] += scan.round_trips
        reading.stats["zookeeper_sessions"] += scan.sessions
        return list(scan.groups)

    def _read_brokers(
        self,
        reading: _Reading,
        wanted_groups: list[str] | None,
        topic_filter: list[str] | None,
        needed: dict[str, set[int]],
    ) -> list[GroupSnapshot]:
        """The Kafka-stored groups (when --bootstrap-server is named) and the watermarks of every
        partition read; without --bootstrap-server, the brokers ZooKeeper registered are asked."""
        target = self.target
        registered = ",".join(address for _, address in sorted(reading.zk_brokers.items()))
        bootstrap = target.bootstrap_servers or registered
        if not bootstrap:
            if needed:
                reading.errors.append(
                    "no broker to read high watermarks from: no --bootstrap-server and no broker registered "
                    "in ZooKeeper /brokers/ids; lags are unknown"
                )
            return []
        try:
            client = self._kafka(bootstrap)
            kafka_scan = kafka_collector.scan(
                client,
                wanted_groups,
                topic_filter,
                needed,
                target.timeout_s,
                include_groups=bool(target.bootstrap_servers),
            )
        except BrokerUnreachableError as error:
            reading.unreachable.append((SOURCE_KAFKA, error.message))
            read = "Kafka-stored groups and watermarks" if target.bootstrap_servers else "watermarks"
            reading.errors.append(f"{error.message}: {read} were not read; lags are unknown")
            return []
        reading.partitions = list(kafka_scan.partitions)
        reading.topics += kafka_scan.topics
        reading.errors += kafka_scan.errors
        reading.stats["kafka_requests"] += kafka_scan.requests
        reading.stats["kafka_round_trips"] += kafka_scan.round_trips
        return list(kafka_scan.groups)


@dataclass
class _Reading:
    """What one snapshot has read so far from either source, besides the groups."""

    errors: list[str] = field(default_factory=list)
    unreachable: list[tuple[str, str]] = field(default_factory=list)
    stats: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    topics: list[TopicLayout] = field(default_factory=list)
    partitions: list[BrokerPartition] = field(default_factory=list)
    zk_brokers: dict[int, str] = field(default_factory=dict)


def _needed_partitions(
    zk_groups: list[GroupSnapshot], topics: list[TopicLayout], topic_filter: list[str] | None
) -> dict[str, set[int]]:
    """Partitions the old consumer's groups need watermarks for: committed or owned ones, and
    every registered partition of a subscribed topic."""
    needed: dict[str, set[int]] = defaultdict(set)
    layouts = {layout.topic: layout for layout in topics}
    for group in zk_groups:
        for offset in group.offsets:
            needed[offset.topic].add(offset.partition)
    for topic in _zookeeper_scan().topics_of(zk_groups) if zk_groups else ():
        if topic_filter is None or topic in topic_filter:
            layout = layouts.get(topic)
            needed[topic].update(layout.partitions if layout is not None else ())
    return needed


# Quoting ZooKeeper's view of leaderless partitions is evidence, not a scan: bounded.
STATE_EVIDENCE_LIMIT = 1000


def _with_zookeeper_states(
    target: LagTarget, partitions: list[BrokerPartition], needed: dict[str, set[int]]
) -> list[BrokerPartition]:
    """Add ZooKeeper's partition state to old-consumer partitions whose watermarks are unknown."""
    import dataclasses

    missing = [
        (partition.topic, partition.partition)
        for partition in partitions
        if partition.error is not None and partition.partition in needed.get(partition.topic, ())
    ][:STATE_EVIDENCE_LIMIT]
    states = (
        _zookeeper_scan().partition_states(
            target.zookeeper or "", missing, target.timeout_s, target.zookeeper_security
        )
        if missing
        else {}
    )
    if not states:
        return partitions
    return [
        dataclasses.replace(
            partition, error=f"{partition.error}; {states[(partition.topic, partition.partition)]}"
        )
        if (partition.topic, partition.partition) in states
        else partition
        for partition in partitions
    ]


def _zookeeper_scan() -> Any:
    """The ZooKeeper scan, imported when a ZooKeeper is named: kazoo costs a broker-only run
    a few tens of milliseconds it does not use."""
    from kafkadiag.collect.zookeeper import scan

    return scan


def _unread_holders(target: LagTarget, unreachable: list[tuple[str, str]]) -> dict[str, str]:
    """Group stores that were not read: source -> why. The brokers hold groups only when named
    with --bootstrap-server (brokers found in ZooKeeper are asked for watermarks alone)."""
    holders = {SOURCE_ZOOKEEPER: bool(target.zookeeper), SOURCE_KAFKA: bool(target.bootstrap_servers)}
    return {source: why for source, why in unreachable if holders[source]}


def _merge_groups(
    wanted: list[str] | None,
    zk_groups: list[GroupSnapshot],
    kafka_groups: list[GroupSnapshot],
    unread: dict[str, str],
) -> list[GroupSnapshot]:
    """Every group that exists in some source; a named group found nowhere, once, flagged: as not
    found when every store was read, as unknown (exists None) when a store was unreachable."""
    if wanted is None:
        return sorted(
            [group for group in zk_groups + kafka_groups if group.exists],
            key=lambda group: (group.group, group.source),
        )
    by_name: dict[str, list[GroupSnapshot]] = defaultdict(list)
    for group in zk_groups + kafka_groups:
        by_name[group.group].append(group)
    merged: list[GroupSnapshot] = []
    for name in dict.fromkeys(wanted):
        found = by_name.get(name, [])
        existing = [group for group in found if group.exists]
        if existing:
            merged += existing
            continue
        not_read = tuple(f"not read from {source}: {why}" for source, why in sorted(unread.items()))
        errors = tuple(error for group in found for error in group.errors)
        if not errors and not not_read:
            errors = ("not found",)
        # The label of a group that is nowhere: the one store it could still be in, if only one.
        sources = set(unread) if len(unread) == 1 else {group.source for group in found} | set(unread)
        source = SOURCE_ZOOKEEPER if sources == {SOURCE_ZOOKEEPER} else SOURCE_KAFKA
        merged.append(
            GroupSnapshot(
                group=name, source=source, exists=None if not_read else False, errors=not_read + errors
            )
        )
    return merged
