"""What one znode's answer means: a consumer's registration, a broker's or topic's registration,
a committed offset and its owner, each decoded as the old consumer and the broker wrote it.

Pure: the answers come from scan.py's waves (a (data, stat) tuple, MISSING or Failed) and the
results are the lag snapshot's types, each carrying the path it came from and what was wrong.
"""

from __future__ import annotations

import re
from typing import Any

from kafkadiag import boundedjson
from kafkadiag.digits import decimal, is_decimal
from kafkadiag.lag.snapshot import (
    SOURCE_ZOOKEEPER,
    CommittedOffset,
    GroupMember,
    GroupSnapshot,
    TopicLayout,
)

CONSUMERS = "/consumers"


class Missing:
    """The znode does not exist (NoNode): a normal answer, not a failure."""


MISSING = Missing()


class Failed:
    """The read failed (lost session, no permission, timeout): the reason says which."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


def znode_text(value: bytes | None) -> str:
    return (value or b"").decode("utf-8", errors="replace")


def json_or_none(raw: str) -> Any:
    try:
        return boundedjson.loads(raw)
    except ValueError:
        return None


def parse_registration(consumer_id: str, path: str, value: Any) -> GroupMember:
    """A consumer's /ids registration: {"version":1,"subscription":{"topic":threads},"pattern":...}."""
    if isinstance(value, Failed):
        return GroupMember(member_id=consumer_id, path=path, error=f"{path}: {value.reason}")
    if value is MISSING:
        # Registered when listed, gone when read: the consumer left between the two waves.
        return GroupMember(member_id=consumer_id, path=path, error=f"{path}: vanished while reading")
    data, stat = value
    raw = znode_text(data)
    document = json_or_none(raw)
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


def partition_number(name: str) -> int | None:
    return decimal(name)


def broker_address(value: Any) -> str | None:
    if not isinstance(value, tuple):
        return None
    document = json_or_none(znode_text(value[0]))
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


def topic_layout(topic: str, path: str, value: Any) -> TopicLayout:
    if value is MISSING:
        return TopicLayout(topic, SOURCE_ZOOKEEPER, error=f"{path} does not exist (topic not registered)")
    if isinstance(value, Failed):
        return TopicLayout(topic, SOURCE_ZOOKEEPER, error=f"{path}: {value.reason}")
    if value is None:
        return TopicLayout(topic, SOURCE_ZOOKEEPER, error=f"{path} was not read")
    raw = znode_text(value[0])
    document = json_or_none(raw)
    partitions = document.get("partitions") if isinstance(document, dict) else None
    if not isinstance(partitions, dict) or not all(is_decimal(key) for key in partitions):
        return TopicLayout(
            topic, SOURCE_ZOOKEEPER, error=f"{path} holds {raw[:200]!r}, not a topic registration"
        )
    return TopicLayout(topic, SOURCE_ZOOKEEPER, partitions=tuple(sorted(int(key) for key in partitions)))


def group_snapshot(
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
        if isinstance(level1.get(path), Failed):
            errors.append(f"cannot list {path}: {level1[path].reason}")
    partitions: dict[tuple[str, int], dict[str, Any]] = {}
    for kind, topic, path in topic_dirs:
        listed = level2_children.get(path)
        if isinstance(listed, Failed):
            errors.append(f"cannot list {path}: {listed.reason}")
            continue
        if not isinstance(listed, list):
            continue
        for name in listed:
            number = partition_number(name)
            leaf = f"{path}/{name}"
            if number is None:
                errors.append(f"{leaf}: not a partition number, ignored")
                continue
            partitions.setdefault((topic, number), {})[kind] = (leaf, leaves.get(leaf))
    offsets = [
        committed_offset(topic, partition, kinds) for (topic, partition), kinds in sorted(partitions.items())
    ]
    return GroupSnapshot(
        group=group,
        source=SOURCE_ZOOKEEPER,
        members=tuple(members),
        offsets=tuple(offsets),
        errors=tuple(errors),
    )


def committed_offset(topic: str, partition: int, kinds: dict[str, Any]) -> CommittedOffset:
    fields: dict[str, Any] = {}
    problems: list[str] = []
    if "offsets" in kinds:
        path, value = kinds["offsets"]
        fields["path"] = path
        if isinstance(value, Failed):
            problems.append(f"{path}: {value.reason}")
        elif value is MISSING or value is None:
            problems.append(f"{path}: vanished while reading")
        else:
            raw = znode_text(value[0])
            fields["commit_time_ms"] = value[1].mtime
            try:
                fields["offset"] = parse_offset(raw)
            except ValueError as error:
                fields["raw_value"] = raw[:200]
                problems.append(f"offset unreadable: {path} holds {raw[:80]!r} ({error})")
    if "owners" in kinds:
        path, value = kinds["owners"]
        if isinstance(value, Failed):
            problems.append(f"{path}: {value.reason}")
        elif isinstance(value, tuple):
            fields["owner"] = znode_text(value[0]).strip()
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
