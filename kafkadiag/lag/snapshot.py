"""Snapshots: what the collectors (kafkadiag.collect) read, as plain data with provenance; the
lag engine's input, so it lives beside the engine and not with the readers.

A snapshot is frozen dataclasses of str/int/float/None and tuples, so it pickles, and
`to_json`/`from_json` round-trip it exactly: `kafkadiag lag --record DIR` appends snapshots as
JSON lines and `kafkadiag lag history DIR` evaluates them again offline.

Nothing here interprets the data: an offset znode holding "abc" is kept with `offset=None` and
an `error` quoting the path and the raw value; judging it is `kafkadiag.lag`'s job.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, NamedTuple

SNAPSHOT_SCHEMA = "kafkadiag.lag.snapshot"
SNAPSHOT_VERSION = 1

SOURCE_ZOOKEEPER = "zookeeper"
SOURCE_KAFKA = "kafka"

# How a source that was reached but refused kafkadiag's SASL credentials is named in its
# `unreachable` entry: not read, as an unreachable one, but for a cause of its own.
REFUSED_CREDENTIALS = "refused the credentials"


def unread_cause(error: str) -> str:
    """Why a source in `unreachable` was not read, in a few words."""
    return REFUSED_CREDENTIALS if REFUSED_CREDENTIALS in error else "could not be reached"


@dataclass(frozen=True)
class BrokerPartition:
    """A partition as its leader reports it: high watermark and log-start offset."""

    topic: str
    partition: int
    leader: int | None = None
    high_watermark: int | None = None
    log_start_offset: int | None = None
    # Why the watermarks are unknown (leader unavailable, request failed), or None.
    error: str | None = None


class CommittedOffset(NamedTuple):
    """One partition of one group: its committed offset and, for the old consumer, its owner.

    A NamedTuple, not a frozen dataclass: a scan builds one per partition, 10,000s of them, and a
    frozen dataclass's __init__ costs several times a tuple's."""

    topic: str
    partition: int
    offset: int | None = None  # None: no offset stored, or unreadable (see error)
    # When the offset was last written (the old consumer rewrites its offset znode only when the
    # offset changed, so the znode's mtime is the time of last progress); None when unknown.
    commit_time_ms: int | None = None
    owner: str | None = None  # old consumer: "<consumerId>-<threadNo>"; new consumer: member id
    owner_since_ms: int | None = None
    # Where the offset came from (a znode path), for findings that quote their evidence.
    path: str | None = None
    raw_value: str | None = None  # the znode's text when it could not be understood
    error: str | None = None  # why the offset or owner could not be read


@dataclass(frozen=True)
class GroupMember:
    """A consumer instance: an old consumer's registration in /ids, or a new consumer's member."""

    member_id: str
    client_id: str | None = None
    host: str | None = None
    # (topic, number of consumer threads); the new consumer subscribes with one thread per member.
    subscription: tuple[tuple[str, int], ...] = ()
    pattern: str | None = None  # old consumer: static | white_list | black_list
    registered_ms: int | None = None
    assignment: tuple[tuple[str, int], ...] = ()
    path: str | None = None
    raw_value: str | None = None
    error: str | None = None


@dataclass(frozen=True)
class GroupSnapshot:
    group: str
    source: str  # "zookeeper" (old consumer) or "kafka" (Kafka-stored offsets)
    state: str | None = None  # Kafka: Stable, Empty, PreparingRebalance ...; ZooKeeper: None
    protocol: str | None = None  # Kafka: the assignor ("range", "roundrobin" ...)
    members: tuple[GroupMember, ...] = ()
    offsets: tuple[CommittedOffset, ...] = ()
    # Group-level problems: not found, could not be read, session lost while reading it.
    errors: tuple[str, ...] = ()
    # False: no source that was read holds the group. None: unknown, because a source that
    # could hold it was unreachable (see Snapshot.unreachable).
    exists: bool | None = True


@dataclass(frozen=True)
class TopicLayout:
    """A topic's partitions as registered (ZooKeeper /brokers/topics or broker metadata)."""

    topic: str
    source: str
    partitions: tuple[int, ...] = ()
    # ZooKeeper: partition -> leader from .../partitions/<p>/state (-1: no leader).
    leaders: tuple[tuple[int, int], ...] = ()
    error: str | None = None


@dataclass(frozen=True)
class Snapshot:
    taken_at_ms: int  # wall clock when reading started
    duration_ms: float = 0.0
    # Provenance: where the data came from, e.g. (("zookeeper", "zk1:2181/kafka"), ...).
    sources: tuple[tuple[str, str], ...] = ()
    groups: tuple[GroupSnapshot, ...] = ()
    partitions: tuple[BrokerPartition, ...] = ()
    topics: tuple[TopicLayout, ...] = ()
    # Problems that concern the whole read (a source unreachable, a session lost).
    errors: tuple[str, ...] = ()
    # Sources that could not be reached at all: ((SOURCE_ZOOKEEPER or SOURCE_KAFKA, why), ...).
    unreachable: tuple[tuple[str, str], ...] = ()
    # Request accounting: ("zookeeper_reads", n), ("zookeeper_round_trips", n), ("kafka_requests", n) ...
    stats: tuple[tuple[str, int], ...] = field(default=())

    def stat(self, name: str) -> int:
        return dict(self.stats).get(name, 0)


def to_json(snapshot: Snapshot) -> dict[str, Any]:
    document = dataclasses.asdict(snapshot)
    for group in document["groups"]:
        # asdict keeps NamedTuples as tuples; the recorded form names every field.
        group["offsets"] = [offset._asdict() for offset in group["offsets"]]
    return {"schema": SNAPSHOT_SCHEMA, "version": SNAPSHOT_VERSION, **document}


def _pairs(value: Any) -> tuple[tuple[Any, Any], ...]:
    return tuple((item[0], item[1]) for item in value or ())


def from_json(document: dict[str, Any]) -> Snapshot:
    """Rebuild a Snapshot written by `to_json`; raises ValueError on another schema or version."""
    if document.get("schema") != SNAPSHOT_SCHEMA:
        raise ValueError(f"not a {SNAPSHOT_SCHEMA} document (schema {document.get('schema')!r})")
    if document.get("version") != SNAPSHOT_VERSION:
        raise ValueError(f"unsupported {SNAPSHOT_SCHEMA} version {document.get('version')!r}")
    groups = tuple(
        GroupSnapshot(
            group=group["group"],
            source=group["source"],
            state=group.get("state"),
            protocol=group.get("protocol"),
            members=tuple(
                GroupMember(
                    **{
                        **member,
                        "subscription": _pairs(member.get("subscription")),
                        "assignment": _pairs(member.get("assignment")),
                    }
                )
                for member in group.get("members", ())
            ),
            offsets=tuple(CommittedOffset(**offset) for offset in group.get("offsets", ())),
            errors=tuple(group.get("errors", ())),
            exists=group.get("exists", True),
        )
        for group in document.get("groups", ())
    )
    topics = tuple(
        TopicLayout(
            topic=topic["topic"],
            source=topic["source"],
            partitions=tuple(topic.get("partitions", ())),
            leaders=_pairs(topic.get("leaders")),
            error=topic.get("error"),
        )
        for topic in document.get("topics", ())
    )
    return Snapshot(
        taken_at_ms=document["taken_at_ms"],
        duration_ms=document.get("duration_ms", 0.0),
        sources=_pairs(document.get("sources")),
        groups=groups,
        partitions=tuple(BrokerPartition(**partition) for partition in document.get("partitions", ())),
        topics=topics,
        errors=tuple(document.get("errors", ())),
        unreachable=_pairs(document.get("unreachable")),
        stats=_pairs(document.get("stats")),
    )
