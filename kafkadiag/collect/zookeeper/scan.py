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

import re
import time
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kafkadiag import boundedjson
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
from kafkadiag.digits import decimal, is_decimal
from kafkadiag.lag.snapshot import (
    SOURCE_ZOOKEEPER,
    CommittedOffset,
    GroupMember,
    GroupSnapshot,
    TopicLayout,
)

CONSUMERS = "/consumers"


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


class _Missing:
    """The znode does not exist (NoNode): a normal answer, not a failure."""


MISSING = _Missing()


class _Failed:
    def __init__(self, reason: str) -> None:
        self.reason = reason


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
                results[path] = MISSING if answer.missing else _Failed(answer.reason)
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


def _text(value: bytes | None) -> str:
    return (value or b"").decode("utf-8", errors="replace")


def _json_or_none(raw: str) -> Any:
    try:
        return boundedjson.loads(raw)
    except ValueError:
        return None


def _parse_registration(consumer_id: str, path: str, value: Any) -> GroupMember:
    """A consumer's /ids registration: {"version":1,"subscription":{"topic":threads},"pattern":...}."""
    if isinstance(value, _Failed):
        return GroupMember(member_id=consumer_id, path=path, error=f"{path}: {value.reason}")
    if value is MISSING:
        # Registered when listed, gone when read: the consumer left between the two waves.
        return GroupMember(member_id=consumer_id, path=path, error=f"{path}: vanished while reading")
    data, stat = value
    raw = _text(data)
    document = _json_or_none(raw)
    subscription = document.get("subscription") if isinstance(document, dict) else None
    if not isinstance(subscription, dict) or not all(
        isinstance(threads, int) and not isinstance(threads, bool) for threads in subscription.values()
    ):
        return GroupMember(
            member_id=consumer_id,
            path=path,
            raw_value=raw[:500],
            registered_ms=stat.ctime,
            error=f"{path}: not a consumer registration (expected JSON with a subscription map)",
        )
    pattern = document.get("pattern")
    timestamp = document.get("timestamp")
    registered = decimal(str(timestamp)) if isinstance(timestamp, (int, str)) else None
    return GroupMember(
        member_id=consumer_id,
        host=_host_of_consumer_id(consumer_id),
        subscription=tuple(sorted((str(topic), int(threads)) for topic, threads in subscription.items())),
        pattern=str(pattern) if pattern is not None else None,
        registered_ms=registered if registered is not None else stat.ctime,
        path=path,
    )


def _host_of_consumer_id(consumer_id: str) -> str | None:
    # consumerId = <group>_<host>-<startMillis>-<uuid8> (ZookeeperConsumerConnector); the group
    # itself may contain "_" and "-", so read from the right.
    head, _, _uuid = consumer_id.rpartition("-")
    head, _, _millis = head.rpartition("-")
    _, underscore, host = head.rpartition("_")
    return host if underscore and host else None


def _partition_number(name: str) -> int | None:
    return decimal(name)


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
    if groups is None:
        listing = reader.children([CONSUMERS])[CONSUMERS]
        if isinstance(listing, _Failed):
            result.errors.append(f"cannot list {CONSUMERS}: {listing.reason}")
            group_names: list[str] = []
        elif listing is MISSING:
            group_names = []
        else:
            group_names = sorted(listing)
    else:
        group_names = list(dict.fromkeys(groups))

    # Wave: each group's node and its ids/owners/offsets children; the broker registrations.
    paths: list[str] = ["/brokers/ids"]
    for group in group_names:
        base = f"{CONSUMERS}/{group}"
        paths += [base, f"{base}/ids", f"{base}/owners", f"{base}/offsets"]
    level1 = reader.children(paths)

    # Wave: registrations, per-topic children of owners/ and offsets/, broker registrations.
    data_paths: list[str] = []
    child_paths: list[str] = []
    # group -> [(kind, topic, path)] so that each group later looks only at its own listings.
    topic_dirs: dict[str, list[tuple[str, str, str]]] = {group: [] for group in group_names}
    broker_ids = level1.get("/brokers/ids")
    if isinstance(broker_ids, list):
        data_paths += [f"/brokers/ids/{broker}" for broker in broker_ids]
    for group in group_names:
        base = f"{CONSUMERS}/{group}"
        for kind in ("owners", "offsets"):
            listed = level1.get(f"{base}/{kind}")
            if isinstance(listed, list):
                for topic in listed:
                    if topic_filter is None or topic in topic_filter:
                        path = f"{base}/{kind}/{topic}"
                        child_paths.append(path)
                        topic_dirs[group].append((kind, topic, path))
        ids = level1.get(f"{base}/ids")
        if isinstance(ids, list):
            data_paths += [f"{base}/ids/{consumer_id}" for consumer_id in ids]
    level2_data = reader.data(data_paths)
    level2_children = reader.children(child_paths)

    if isinstance(broker_ids, list):
        for broker in broker_ids:
            value = level2_data.get(f"/brokers/ids/{broker}")
            address = _broker_address(value)
            if address and is_decimal(broker):
                result.brokers[int(broker)] = address

    # Wave: every owner and offset znode, and the registered layout of every topic involved.
    leaf_paths: list[str] = []
    topics_involved: set[str] = set(topic_filter or ())
    members_by_group: dict[str, list[GroupMember]] = {}
    for group in group_names:
        base = f"{CONSUMERS}/{group}"
        members = []
        ids = level1.get(f"{base}/ids")
        if isinstance(ids, list):
            for consumer_id in sorted(ids):
                path = f"{base}/ids/{consumer_id}"
                member = _parse_registration(consumer_id, path, level2_data.get(path))
                members.append(member)
                topics_involved.update(
                    topic for topic, _ in member.subscription if topic_filter is None or topic in topic_filter
                )
        members_by_group[group] = members
        for _kind, topic, path in topic_dirs[group]:
            listed = level2_children.get(path)
            if isinstance(listed, list):
                topics_involved.add(topic)
                leaf_paths += [f"{path}/{partition}" for partition in listed]
    topic_paths = [f"/brokers/topics/{topic}" for topic in sorted(topics_involved)]
    leaves = reader.data(leaf_paths + topic_paths)

    for topic in sorted(topics_involved):
        result.topics.append(
            _topic_layout(topic, f"/brokers/topics/{topic}", leaves.get(f"/brokers/topics/{topic}"))
        )
    for group in group_names:
        result.groups.append(
            _group_snapshot(
                group, level1, level2_children, leaves, members_by_group[group], topic_dirs[group]
            )
        )


def _broker_address(value: Any) -> str | None:
    if not isinstance(value, tuple):
        return None
    document = _json_or_none(_text(value[0]))
    if not isinstance(document, dict):
        return None
    # Kafka 0.10+ registers endpoints ("PLAINTEXT://host:port"); host/port are the 0.8/0.9 form.
    for endpoint in document.get("endpoints") or ():
        if isinstance(endpoint, str) and "://" in endpoint:
            return endpoint.split("://", 1)[1]
    host, port = document.get("host"), document.get("port")
    if host and isinstance(port, int) and port > 0:
        return f"{host}:{port}"
    return None


def _topic_layout(topic: str, path: str, value: Any) -> TopicLayout:
    if value is MISSING:
        return TopicLayout(topic, SOURCE_ZOOKEEPER, error=f"{path} does not exist (topic not registered)")
    if isinstance(value, _Failed):
        return TopicLayout(topic, SOURCE_ZOOKEEPER, error=f"{path}: {value.reason}")
    if value is None:
        return TopicLayout(topic, SOURCE_ZOOKEEPER, error=f"{path} was not read")
    raw = _text(value[0])
    document = _json_or_none(raw)
    partitions = document.get("partitions") if isinstance(document, dict) else None
    if not isinstance(partitions, dict) or not all(is_decimal(key) for key in partitions):
        return TopicLayout(
            topic, SOURCE_ZOOKEEPER, error=f"{path} holds {raw[:200]!r}, not a topic registration"
        )
    return TopicLayout(topic, SOURCE_ZOOKEEPER, partitions=tuple(sorted(int(key) for key in partitions)))


def _group_snapshot(
    group: str,
    level1: dict[str, Any],
    level2_children: dict[str, Any],
    leaves: dict[str, Any],
    members: list[GroupMember],
    topic_dirs: list[tuple[str, str, str]],
) -> GroupSnapshot:
    base = f"{CONSUMERS}/{group}"
    errors: list[str] = []
    node = level1.get(base)
    if node is MISSING:
        return GroupSnapshot(
            group,
            SOURCE_ZOOKEEPER,
            exists=False,
            errors=(f"{base} does not exist: no such old-consumer group",),
        )
    for path in (base, f"{base}/ids", f"{base}/owners", f"{base}/offsets"):
        if isinstance(level1.get(path), _Failed):
            errors.append(f"cannot list {path}: {level1[path].reason}")
    partitions: dict[tuple[str, int], dict[str, Any]] = {}
    for kind, topic, path in topic_dirs:
        listed = level2_children.get(path)
        if isinstance(listed, _Failed):
            errors.append(f"cannot list {path}: {listed.reason}")
            continue
        if not isinstance(listed, list):
            continue
        for name in listed:
            number = _partition_number(name)
            leaf = f"{path}/{name}"
            if number is None:
                errors.append(f"{leaf}: not a partition number, ignored")
                continue
            partitions.setdefault((topic, number), {})[kind] = (leaf, leaves.get(leaf))
    offsets = [
        _committed_offset(topic, partition, kinds) for (topic, partition), kinds in sorted(partitions.items())
    ]
    return GroupSnapshot(
        group=group,
        source=SOURCE_ZOOKEEPER,
        members=tuple(members),
        offsets=tuple(offsets),
        errors=tuple(errors),
    )


def _committed_offset(topic: str, partition: int, kinds: dict[str, Any]) -> CommittedOffset:
    fields: dict[str, Any] = {}
    problems: list[str] = []
    if "offsets" in kinds:
        path, value = kinds["offsets"]
        fields["path"] = path
        if isinstance(value, _Failed):
            problems.append(f"{path}: {value.reason}")
        elif value is MISSING or value is None:
            problems.append(f"{path}: vanished while reading")
        else:
            raw = _text(value[0])
            fields["commit_time_ms"] = value[1].mtime
            try:
                fields["offset"] = parse_offset(raw)
            except ValueError as error:
                fields["raw_value"] = raw[:200]
                problems.append(f"offset unreadable: {path} holds {raw[:80]!r} ({error})")
    if "owners" in kinds:
        path, value = kinds["owners"]
        if isinstance(value, _Failed):
            problems.append(f"{path}: {value.reason}")
        elif isinstance(value, tuple):
            fields["owner"] = _text(value[0]).strip()
            fields["owner_since_ms"] = value[1].ctime
        # MISSING: the owner left between listing and reading; the partition is unowned now.
    return CommittedOffset(topic, partition, error="; ".join(problems) or None, **fields)


_LONG = re.compile(r"[+-]?[0-9]+")
_LONG_MAX = 2**63 - 1


def parse_offset(raw: str) -> int:
    """An offset znode's value as the old consumer reads it (`toLong`, Java's Long.parseLong: an
    optional sign and ASCII digits, nothing else, within 64 bits); a committed offset is never
    negative. ValueError says what is wrong."""
    if not _LONG.fullmatch(raw):
        raise ValueError("not a plain decimal number")
    value = int(raw)
    if not -_LONG_MAX - 1 <= value <= _LONG_MAX:
        raise ValueError("beyond a signed 64-bit offset")
    if value < 0:
        raise ValueError("a negative offset")
    return value


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
            raw = _text(value[0])
            document = _json_or_none(raw)
            if isinstance(document, dict) and "leader" in document:
                leader = document.get("leader")
                described = "no leader" if leader == -1 else f"leader {leader}"
                states[key] = f"ZooKeeper {path}: {described}, isr {document.get('isr')}"
            else:
                states[key] = f"ZooKeeper {path} = {raw[:120]!r}"
    return states
