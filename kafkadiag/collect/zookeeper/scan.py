"""Read the old (ZooKeeper-based) consumer's nodes, the way ConsumerOffsetChecker did, pipelined.

Layout written by kafka.consumer.ZookeeperConsumerConnector (Kafka 0.8-2.x):

    /consumers/<group>/ids/<consumerId>              ephemeral JSON registration (subscription)
    /consumers/<group>/owners/<topic>/<partition>    ephemeral "<consumerId>-<threadNo>"
    /consumers/<group>/offsets/<topic>/<partition>   persistent decimal offset; mtime = last change
    /brokers/ids/<id>                                ephemeral JSON (host, port, endpoints)
    /brokers/topics/<topic>                          {"version":1,"partitions":{"0":[0,1]}}

Reads go out in waves: every znode of one level is requested asynchronously before any answer
is awaited, so 10,000 offsets cost a handful of round trips instead of 10,000. Only reads are
issued (get_children, get); the client never creates, sets or deletes anything.
"""

from __future__ import annotations

import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kafkadiag.collect.collections_paused import few_collections
from kafkadiag.collect.errors import ZooKeeperUnreachableError
from kafkadiag.collect.zookeeper.security import NO_SECURITY, ZooKeeperSecurity
from kafkadiag.collect.zookeeper.session import (
    GET_CHILDREN,
    GET_DATA,
    Failure,
    KazooSession,
    NotZooKeeperError,
    RefusedError,
    ZooKeeperSessionError,
    parse_hosts,
)
from kafkadiag.collect.zookeeper.znodes import (
    CONSUMERS,
    MISSING,
    Failed,
    broker_address,
    group_snapshot,
    json_or_none,
    parse_registration,
    topic_layout,
    znode_text,
)
from kafkadiag.digits import is_decimal
from kafkadiag.lag.snapshot import GroupMember, GroupSnapshot, TopicLayout


@dataclass
class ZooKeeperScan:
    """What one scan read: groups, topic layouts, broker endpoints, problems and request counts."""

    groups: list[GroupSnapshot] = field(default_factory=list)
    topics: list[TopicLayout] = field(default_factory=list)
    # Broker id -> "host:port" from /brokers/ids, to bootstrap when --bootstrap-server is absent.
    brokers: dict[int, str] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    reads: int = 0
    round_trips: int = 0
    sessions: int = 0


class _WaveReader:
    """One wave = every read of one level, pipelined on one session, answered within the deadline.

    One session reads every wave: with kazoo (one I/O thread per session, all under one GIL)
    splitting a wave over more sessions was slower, 2.28 s over four against 1.33 s over one for
    10,000 offsets (bench/lag_bench.py, 2 cores).
    """

    def __init__(self, connection: KazooSession, deadline: float) -> None:
        self.connection = connection
        self.deadline = deadline
        self.reads = 0
        self.round_trips = 0
        self.sessions = 1

    @property
    def lost(self) -> str | None:
        return self.connection.lost

    def close(self) -> None:
        self.connection.close()

    def _wave(self, paths: Sequence[str], method: str) -> dict[str, Any]:
        if not paths:
            return {}
        self.round_trips += 1
        self.reads += len(paths)
        kind = GET_CHILDREN if method == "children" else GET_DATA
        answers = self.connection.wave(kind, paths, self.deadline)
        results: dict[str, Any] = {}
        for path, answer in zip(paths, answers):
            if isinstance(answer, Failure):
                results[path] = MISSING if answer.missing else Failed(answer.reason)
            else:
                results[path] = answer
        return results

    def children(self, paths: Sequence[str]) -> dict[str, Any]:
        return self._wave(paths, "children")

    def data(self, paths: Sequence[str]) -> dict[str, Any]:
        return self._wave(paths, "data")


def connect(zookeeper: str, timeout_s: float, security: ZooKeeperSecurity = NO_SECURITY) -> KazooSession:
    """An open read-only session, or ZooKeeperUnreachableError within about timeout_s."""
    hosts, _ = parse_hosts(zookeeper)
    if not hosts:
        raise ZooKeeperUnreachableError(f"no ZooKeeper host in --zookeeper {zookeeper!r}")
    try:
        return KazooSession(zookeeper, timeout_s, security)
    except NotZooKeeperError as error:
        raise ZooKeeperUnreachableError(f"cannot connect to ZooKeeper at {hosts}: {error.reason}") from None
    except RefusedError as error:
        raise ZooKeeperUnreachableError(
            f"cannot connect to ZooKeeper at {hosts}: {error.reason} (nothing listens there: check "
            "that ZooKeeper runs and that this is its client port)"
        ) from None
    except ZooKeeperSessionError as error:
        raise ZooKeeperUnreachableError(
            f"cannot connect to ZooKeeper at {hosts} within {timeout_s:g}s ({error.reason})"
        ) from None


def scan(
    zookeeper: str,
    groups: Sequence[str] | None,
    topics: Sequence[str] | None,
    timeout_s: float,
    security: ZooKeeperSecurity = NO_SECURITY,
) -> ZooKeeperScan:
    """Read the given groups (None: every group under /consumers), optionally only some topics.

    Raises ZooKeeperUnreachableError when no session can be had; problems after that (a lost
    session, unreadable or malformed znodes) are kept in the result, per group and partition.
    """
    deadline = time.monotonic() + timeout_s
    connection = connect(zookeeper, timeout_s, security)
    reader = _WaveReader(connection, deadline)
    result = ZooKeeperScan()
    try:
        with few_collections():
            _scan(reader, result, groups, set(topics) if topics else None)
    finally:
        if reader.lost is not None:
            result.errors.append(f"{reader.lost}: results are partial (flagged per group and partition)")
        result.reads = reader.reads
        result.round_trips = reader.round_trips
        result.sessions = reader.sessions
        reader.close()
    return result


def _scan(
    reader: _WaveReader, result: ZooKeeperScan, groups: Sequence[str] | None, topic_filter: set[str] | None
) -> None:
    group_names = _group_names(reader, result, groups)

    # Wave: each group's node and its ids/owners/offsets children; the broker registrations.
    paths: list[str] = ["/brokers/ids"]
    for group in group_names:
        base = f"{CONSUMERS}/{group}"
        paths += [base, f"{base}/ids", f"{base}/owners", f"{base}/offsets"]
    level1 = reader.children(paths)

    # Wave: registrations, per-topic children of owners/ and offsets/, broker registrations.
    topic_dirs, child_paths, data_paths = _second_wave_paths(level1, group_names, topic_filter)
    level2_data = reader.data(data_paths)
    level2_children = reader.children(child_paths)
    broker_ids = level1.get("/brokers/ids")
    for broker in broker_ids if isinstance(broker_ids, list) else ():
        address = broker_address(level2_data.get(f"/brokers/ids/{broker}"))
        if address and is_decimal(broker):
            result.brokers[int(broker)] = address

    # Wave: every owner and offset znode, and the registered layout of every topic involved.
    leaf_paths: list[str] = []
    topics_involved: set[str] = set(topic_filter or ())
    members_by_group: dict[str, list[GroupMember]] = {}
    for group in group_names:
        members_by_group[group] = _members(group, level1, level2_data)
        for member in members_by_group[group]:
            topics_involved.update(
                topic for topic, _ in member.subscription if topic_filter is None or topic in topic_filter
            )
        for _kind, topic, path in topic_dirs[group]:
            listed = level2_children.get(path)
            if isinstance(listed, list):
                topics_involved.add(topic)
                leaf_paths += [f"{path}/{partition}" for partition in listed]
    topic_paths = [f"/brokers/topics/{topic}" for topic in sorted(topics_involved)]
    leaves = reader.data(leaf_paths + topic_paths)

    for topic in sorted(topics_involved):
        path = f"/brokers/topics/{topic}"
        result.topics.append(topic_layout(topic, path, leaves.get(path)))
    for group in group_names:
        result.groups.append(
            group_snapshot(group, level1, level2_children, leaves, members_by_group[group], topic_dirs[group])
        )


def _group_names(reader: _WaveReader, result: ZooKeeperScan, groups: Sequence[str] | None) -> list[str]:
    """The groups asked for, once each, or every group under /consumers when none were named."""
    if groups is not None:
        return list(dict.fromkeys(groups))
    listing = reader.children([CONSUMERS])[CONSUMERS]
    if isinstance(listing, Failed):
        result.errors.append(f"cannot list {CONSUMERS}: {listing.reason}")
        return []
    return [] if listing is MISSING else sorted(listing)


def _second_wave_paths(
    level1: dict[str, Any], group_names: list[str], topic_filter: set[str] | None
) -> tuple[dict[str, list[tuple[str, str, str]]], list[str], list[str]]:
    """From the first wave's listings: each group's (kind, topic, path) topic directories, so that
    each group later looks only at its own; the directories to list; the registrations to read."""
    data_paths: list[str] = []
    child_paths: list[str] = []
    topic_dirs: dict[str, list[tuple[str, str, str]]] = {group: [] for group in group_names}
    broker_ids = level1.get("/brokers/ids")
    if isinstance(broker_ids, list):
        data_paths += [f"/brokers/ids/{broker}" for broker in broker_ids]
    for group in group_names:
        base = f"{CONSUMERS}/{group}"
        for kind in ("owners", "offsets"):
            listed = level1.get(f"{base}/{kind}")
            for topic in listed if isinstance(listed, list) else ():
                if topic_filter is None or topic in topic_filter:
                    path = f"{base}/{kind}/{topic}"
                    child_paths.append(path)
                    topic_dirs[group].append((kind, topic, path))
        ids = level1.get(f"{base}/ids")
        if isinstance(ids, list):
            data_paths += [f"{base}/ids/{consumer_id}" for consumer_id in ids]
    return topic_dirs, child_paths, data_paths


def _members(group: str, level1: dict[str, Any], level2_data: dict[str, Any]) -> list[GroupMember]:
    """The group's registered consumers, in consumer-id order, each from its /ids znode."""
    base = f"{CONSUMERS}/{group}"
    ids = level1.get(f"{base}/ids")
    if not isinstance(ids, list):
        return []
    return [
        parse_registration(
            consumer_id, f"{base}/ids/{consumer_id}", level2_data.get(f"{base}/ids/{consumer_id}")
        )
        for consumer_id in sorted(ids)
    ]


def topics_of(groups: Iterable[GroupSnapshot]) -> set[str]:
    return {offset.topic for group in groups for offset in group.offsets} | {
        topic for group in groups for member in group.members for topic, _ in member.subscription
    }


def partition_states(
    zookeeper: str,
    partitions: Sequence[tuple[str, int]],
    timeout_s: float,
    security: ZooKeeperSecurity = NO_SECURITY,
) -> dict[tuple[str, int], str]:
    """What ZooKeeper says about partitions whose leader the brokers could not give: each
    `/brokers/topics/<t>/partitions/<p>/state` in one wave, as evidence ("leader -1, isr []").
    Best effort: an unreachable ZooKeeper gives an empty answer, never an error."""
    if not partitions:
        return {}
    try:
        connection = connect(zookeeper, timeout_s, security)
    except ZooKeeperUnreachableError:
        return {}
    reader = _WaveReader(connection, time.monotonic() + timeout_s)
    try:
        paths = {
            f"/brokers/topics/{topic}/partitions/{partition}/state": (topic, partition)
            for topic, partition in partitions
        }
        answers = reader.data(list(paths))
    finally:
        reader.close()
    states: dict[tuple[str, int], str] = {}
    for path, key in paths.items():
        value = answers.get(path)
        if value is MISSING:
            states[key] = f"ZooKeeper has no {path}"
        elif isinstance(value, tuple):
            raw = znode_text(value[0])
            document = json_or_none(raw)
            if isinstance(document, dict) and "leader" in document:
                leader = document.get("leader")
                described = "no leader" if leader == -1 else f"leader {leader}"
                states[key] = f"ZooKeeper {path}: {described}, isr {document.get('isr')}"
            else:
                states[key] = f"ZooKeeper {path} = {raw[:120]!r}"
    return states
