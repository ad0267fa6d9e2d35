"""The Kafka requests kafkadiag sends, and the parts of their answers it reads.

Every request here reads; none joins a group, commits an offset or creates a topic. Each lists
the versions it can speak in order of preference; the client picks the first one the broker
accepts (ApiVersions). The preferences are chosen for what they carry, not for novelty:

- FindCoordinator v4 and OffsetFetch v8 ask about many groups in one request (KIP-699, KIP-709);
  the older versions ask about one group each and are kept for brokers before 3.0.
- DescribeGroups prefers v2: v3+ add authorized operations, which kafkadiag does not read.
- ListOffsets prefers v1: later versions add isolation level and leader epochs; all return the
  high watermark for timestamp -1 when reading uncommitted, as here.
- Metadata v4-v8 can forbid auto-creation of the topics asked about (read-only) and name topics
  (v10+ may name them by id only).

Field layouts follow Apache Kafka's message definitions (clients/src/main/resources/common/message).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, NamedTuple

from kafkadiag.collect.kafka_codec import Reader, TruncatedMessageError, Writer

# ListOffsets timestamps: -1 latest (the high watermark), -2 earliest (the log-start offset).
LATEST = -1
EARLIEST = -2


class UnsupportedVersionError(Exception):
    """The broker accepts none of the versions of a request that kafkadiag speaks."""


class Broker(NamedTuple):
    node_id: int
    host: str
    port: int


class PartitionMetadata(NamedTuple):
    partition_index: int
    leader_id: int
    error_code: int


class TopicMetadata(NamedTuple):
    name: str
    error_code: int
    partitions: list[PartitionMetadata]


class ClusterMetadata(NamedTuple):
    brokers: list[Broker]
    topics: list[TopicMetadata]


class ListedGroup(NamedTuple):
    group_id: str
    protocol_type: str


class GroupListing(NamedTuple):
    error_code: int
    groups: list[ListedGroup]


class Coordinator(NamedTuple):
    key: str
    error_code: int
    node_id: int
    host: str
    port: int


class DescribedMember(NamedTuple):
    member_id: str
    client_id: str
    client_host: str
    member_metadata: bytes
    member_assignment: bytes


class DescribedGroup(NamedTuple):
    group_id: str
    error_code: int
    group_state: str
    protocol_type: str
    protocol_data: str
    members: list[DescribedMember]


class FetchedPartition(NamedTuple):
    partition_index: int
    committed_offset: int
    error_code: int


class FetchedTopic(NamedTuple):
    name: str
    partitions: list[FetchedPartition]


class FetchedGroup(NamedTuple):
    group_id: str
    error_code: int
    topics: list[FetchedTopic]


class ListedOffset(NamedTuple):
    topic: str
    partition_index: int
    error_code: int
    offset: int


class SaslAnswer(NamedTuple):
    error_code: int
    error_message: str | None
    auth_bytes: bytes


def _text(value: str | None) -> str:
    return value if value is not None else ""


@dataclass(frozen=True)
class ApiVersionsRequest:
    """v0 only: every broker answers it, and answers an unsupported version with v0 too."""

    API_KEY = 18
    FLEXIBLE_FROM = 3
    versions: tuple[int, ...] = (0,)

    def encode(self, writer: Writer, version: int) -> None:
        pass

    def decode(self, reader: Reader, version: int) -> tuple[int, dict[int, tuple[int, int]]]:
        error_code = reader.int16()
        ranges = {}
        for _ in range(reader.array_length()):
            api_key, low, high = reader.int16(), reader.int16(), reader.int16()
            ranges[api_key] = (low, high)
        return error_code, ranges


@dataclass(frozen=True)
class MetadataRequest:
    """Brokers, and the named topics' partitions and leaders (no topics: brokers only)."""

    topics: tuple[str, ...] = ()
    API_KEY = 3
    FLEXIBLE_FROM = 9
    versions: tuple[int, ...] = (8, 7, 6, 5, 4)

    def encode(self, writer: Writer, version: int) -> None:
        writer.array(self.topics, Writer.string)
        writer.boolean(False)  # allow_auto_topic_creation: asking must never create a topic
        if version >= 8:
            writer.boolean(False).boolean(False)  # no authorized operations

    def decode(self, reader: Reader, version: int) -> ClusterMetadata:
        reader.int32()  # throttle_time_ms (v3+)
        brokers = []
        for _ in range(reader.array_length()):
            node_id, host, port = reader.int32(), _text(reader.string()), reader.int32()
            reader.string()  # rack
            brokers.append(Broker(node_id, host, port))
        reader.string()  # cluster_id
        reader.int32()  # controller_id
        topics = []
        for _ in range(reader.array_length()):
            topic_error, name = reader.int16(), _text(reader.string())
            reader.boolean()  # is_internal
            partitions = []
            for _ in range(reader.array_length()):
                partition_error, index, leader = reader.int16(), reader.int32(), reader.int32()
                if version >= 7:
                    reader.int32()  # leader_epoch
                reader.int32_array()  # replica_nodes
                reader.int32_array()  # isr_nodes
                if version >= 5:
                    reader.int32_array()  # offline_replicas
                partitions.append(PartitionMetadata(index, leader, partition_error))
            if version >= 8:
                reader.int32()  # topic_authorized_operations
            topics.append(TopicMetadata(name, topic_error, partitions))
        if version >= 8:
            reader.int32()  # cluster_authorized_operations
        return ClusterMetadata(brokers, topics)


@dataclass(frozen=True)
class ListGroupsRequest:
    API_KEY = 16
    FLEXIBLE_FROM = 3
    versions: tuple[int, ...] = (2, 1, 0)

    def encode(self, writer: Writer, version: int) -> None:
        pass

    def decode(self, reader: Reader, version: int) -> GroupListing:
        if version >= 1:
            reader.int32()  # throttle_time_ms
        error_code = reader.int16()
        groups = [
            ListedGroup(_text(reader.string()), _text(reader.string())) for _ in range(reader.array_length())
        ]
        return GroupListing(error_code, groups)


@dataclass(frozen=True)
class FindCoordinatorRequest:
    """Group coordinators: v4 for many groups at once, v0-v2 for one group."""

    keys: tuple[str, ...]
    API_KEY = 10
    FLEXIBLE_FROM = 3
    BATCHED_FROM = 4

    @property
    def versions(self) -> tuple[int, ...]:
        return (4, 2, 1, 0) if len(self.keys) == 1 else (4,)

    def encode(self, writer: Writer, version: int) -> None:
        if version >= self.BATCHED_FROM:
            writer.int8(0)  # key_type: group
            writer.array(self.keys, lambda w, key: w.string(key, compact=True), compact=True)
            writer.no_tagged_fields()
            return
        writer.string(self.keys[0])
        if version >= 1:
            writer.int8(0)

    def decode(self, reader: Reader, version: int) -> list[Coordinator]:
        if version >= 1:
            reader.int32()  # throttle_time_ms
        if version >= self.BATCHED_FROM:
            coordinators = []
            for _ in range(reader.array_length(compact=True)):
                key = _text(reader.string(compact=True))
                node_id, host, port = reader.int32(), _text(reader.string(compact=True)), reader.int32()
                error_code = reader.int16()
                reader.string(compact=True)  # error_message
                reader.skip_tagged_fields()
                coordinators.append(Coordinator(key, error_code, node_id, host, port))
            reader.skip_tagged_fields()
            return coordinators
        error_code = reader.int16()
        if version >= 1:
            reader.string()  # error_message
        node_id, host, port = reader.int32(), _text(reader.string()), reader.int32()
        return [Coordinator(self.keys[0], error_code, node_id, host, port)]


@dataclass(frozen=True)
class DescribeGroupsRequest:
    groups: tuple[str, ...]
    API_KEY = 15
    FLEXIBLE_FROM = 5
    versions: tuple[int, ...] = (2, 1, 0, 3, 4)

    def encode(self, writer: Writer, version: int) -> None:
        writer.array(self.groups, Writer.string)
        if version >= 3:
            writer.boolean(False)  # include_authorized_operations

    def decode(self, reader: Reader, version: int) -> list[DescribedGroup]:
        if version >= 1:
            reader.int32()  # throttle_time_ms
        groups = []
        for _ in range(reader.array_length()):
            error_code = reader.int16()
            group_id, state = _text(reader.string()), _text(reader.string())
            protocol_type, protocol_data = _text(reader.string()), _text(reader.string())
            members = []
            for _ in range(reader.array_length()):
                member_id = _text(reader.string())
                if version >= 4:
                    reader.string()  # group_instance_id
                client_id, client_host = _text(reader.string()), _text(reader.string())
                metadata, assignment = reader.bytes_() or b"", reader.bytes_() or b""
                members.append(DescribedMember(member_id, client_id, client_host, metadata, assignment))
            if version >= 3:
                reader.int32()  # authorized_operations
            groups.append(DescribedGroup(group_id, error_code, state, protocol_type, protocol_data, members))
        return groups


@dataclass(frozen=True)
class OffsetFetchRequest:
    """Committed offsets: v8 for many groups at once, v1-v5 for one group. `partitions_of`
    None asks for every partition the group committed (v2+)."""

    groups: tuple[str, ...]
    partitions_of: tuple[tuple[str, tuple[int, ...]], ...] | None = None
    API_KEY = 9
    FLEXIBLE_FROM = 6
    BATCHED_FROM = 8

    @property
    def versions(self) -> tuple[int, ...]:
        if len(self.groups) != 1:
            return (8,)
        return (8, 5, 4, 3, 2) if self.partitions_of is None else (8, 5, 4, 3, 2, 1)

    def _write_topics(self, writer: Writer, compact: bool) -> None:
        def topic(w: Writer, entry: tuple[str, tuple[int, ...]]) -> None:
            w.string(entry[0], compact=compact)
            w.array(entry[1], Writer.int32, compact=compact)
            if compact:
                w.no_tagged_fields()

        writer.array(self.partitions_of, topic, compact=compact)

    def encode(self, writer: Writer, version: int) -> None:
        if version >= self.BATCHED_FROM:

            def group(w: Writer, group_id: str) -> None:
                w.string(group_id, compact=True)
                self._write_topics(w, compact=True)
                w.no_tagged_fields()

            writer.array(self.groups, group, compact=True)
            writer.boolean(False)  # require_stable
            writer.no_tagged_fields()
            return
        writer.string(self.groups[0])
        self._write_topics(writer, compact=False)

    def decode(self, reader: Reader, version: int) -> list[FetchedGroup]:
        if version >= 3:
            reader.int32()  # throttle_time_ms
        if version >= self.BATCHED_FROM:
            groups = []
            for _ in range(reader.array_length(compact=True)):
                group_id = _text(reader.string(compact=True))
                topics = self._read_topics(reader, version, compact=True)
                groups.append(FetchedGroup(group_id, reader.int16(), topics))
                reader.skip_tagged_fields()
            reader.skip_tagged_fields()
            return groups
        topics = self._read_topics(reader, version, compact=False)
        error_code = reader.int16() if version >= 2 else 0
        return [FetchedGroup(self.groups[0], error_code, topics)]

    @staticmethod
    def _read_topics(reader: Reader, version: int, compact: bool) -> list[FetchedTopic]:
        topics = []
        with_epoch = version >= 5
        for _ in range(reader.array_length(compact)):
            name = _text(reader.string(compact))
            partitions = []
            for _ in range(reader.array_length(compact)):
                index, committed = reader.int32(), reader.int64()
                if with_epoch:
                    reader.int32()  # committed_leader_epoch
                reader.string(compact)  # metadata
                partitions.append(FetchedPartition(index, committed, reader.int16()))
                if compact:
                    reader.skip_tagged_fields()
            topics.append(FetchedTopic(name, partitions))
            if compact:
                reader.skip_tagged_fields()
        return topics


@dataclass(frozen=True)
class ListOffsetsRequest:
    """One offset per partition at `timestamp` (LATEST or EARLIEST), asked of the leader."""

    partitions_of: tuple[tuple[str, tuple[int, ...]], ...]
    timestamp: int
    API_KEY = 2
    FLEXIBLE_FROM = 6
    versions: tuple[int, ...] = (1, 2, 3, 4, 5)

    def encode(self, writer: Writer, version: int) -> None:
        timestamp = self.timestamp

        def partition(w: Writer, index: int) -> None:
            w.int32(index)
            if version >= 4:
                w.int32(-1)  # current_leader_epoch: unknown
            w.int64(timestamp)

        writer.int32(-1)  # replica_id: a client, not a follower
        if version >= 2:
            writer.int8(0)  # isolation_level: READ_UNCOMMITTED, so -1 is the high watermark
        writer.array(self.partitions_of, lambda w, entry: w.string(entry[0]).array(entry[1], partition))

    def decode(self, reader: Reader, version: int) -> list[ListedOffset]:
        if version >= 2:
            reader.int32()  # throttle_time_ms
        offsets = []
        with_epoch = version >= 4
        for _ in range(reader.array_length()):
            topic = _text(reader.string())
            for _ in range(reader.array_length()):
                index, error_code = reader.int32(), reader.int16()
                reader.int64()  # timestamp
                offsets.append(ListedOffset(topic, index, error_code, reader.int64()))
                if with_epoch:
                    reader.int32()  # leader_epoch
        return offsets


@dataclass(frozen=True)
class SaslHandshakeRequest:
    mechanism: str
    API_KEY = 17
    FLEXIBLE_FROM = 99
    versions: tuple[int, ...] = (1,)

    def encode(self, writer: Writer, version: int) -> None:
        writer.string(self.mechanism)

    def decode(self, reader: Reader, version: int) -> tuple[int, list[str]]:
        error_code = reader.int16()
        return error_code, [_text(reader.string()) for _ in range(reader.array_length())]


@dataclass(frozen=True)
class SaslAuthenticateRequest:
    auth_bytes: bytes
    API_KEY = 36
    FLEXIBLE_FROM = 2
    versions: tuple[int, ...] = (1, 0)

    def encode(self, writer: Writer, version: int) -> None:
        writer.bytes_(self.auth_bytes)

    def decode(self, reader: Reader, version: int) -> SaslAnswer:
        error_code, message, auth_bytes = reader.int16(), reader.string(), reader.bytes_() or b""
        if version >= 1:
            reader.int64()  # session_lifetime_ms
        return SaslAnswer(error_code, message, auth_bytes)


def encode_request(request: Any, version: int, correlation_id: int, client_id: str) -> bytes:
    """A whole frame: size, request header (v1, or v2 in flexible versions), body."""
    writer = Writer()
    writer.int32(0)  # the frame size, filled in below
    writer.int16(request.API_KEY).int16(version).int32(correlation_id).string(client_id)
    if version >= request.FLEXIBLE_FROM:
        writer.no_tagged_fields()
    request.encode(writer, version)
    frame = writer.buffer
    frame[0:4] = (len(frame) - 4).to_bytes(4, "big", signed=True)
    return bytes(frame)


def correlation_id_of(payload: bytes | memoryview) -> int:
    return int.from_bytes(payload[:4], "big", signed=True)


def decode_response(request: Any, version: int, payload: bytes | memoryview) -> Any:
    """The answer to `request` from a frame's payload (without the size). ApiVersions answers
    always carry response header v0 (KIP-511), so a client can read it whatever it asked."""
    reader = Reader(payload, 4)
    if version >= request.FLEXIBLE_FROM and request.API_KEY != ApiVersionsRequest.API_KEY:
        reader.skip_tagged_fields()
    try:
        return request.decode(reader, version)
    except (TruncatedMessageError, UnicodeDecodeError, ValueError) as error:
        name = type(request).__name__.removesuffix("Request")
        raise ValueError(f"malformed {name} v{version} response: {error}") from None


def pick_version(request: Any, accepted: dict[int, tuple[int, int]]) -> int:
    """The first of the request's preferred versions inside the broker's accepted range."""
    low, high = accepted.get(request.API_KEY, (0, -1))
    for version in request.versions:
        if low <= version <= high:
            return int(version)
    name = type(request).__name__.removesuffix("Request")
    spoken = ", ".join(f"v{v}" for v in sorted(request.versions))
    offered = f"v{low}-v{high}" if high >= 0 else "none"
    raise UnsupportedVersionError(f"the broker accepts {name} {offered}, kafkadiag speaks {spoken}")


def by_topic(partitions: Sequence[tuple[str, int]]) -> tuple[tuple[str, tuple[int, ...]], ...]:
    grouped: dict[str, list[int]] = {}
    for topic, partition in partitions:
        grouped.setdefault(topic, []).append(partition)
    return tuple((topic, tuple(parts)) for topic, parts in sorted(grouped.items()))


def subscribed_topics(metadata: bytes) -> list[str]:
    """The topics of a consumer's subscription (ConsumerProtocolSubscription, any version:
    later versions only append fields)."""
    reader = Reader(metadata)
    if reader.int16() < 0:
        raise ValueError("negative consumer protocol version")
    return [_text(reader.string()) for _ in range(reader.array_length())]


def assigned_partitions(assignment: bytes) -> list[tuple[str, int]]:
    """The (topic, partition) pairs of a consumer's assignment (ConsumerProtocolAssignment)."""
    reader = Reader(assignment)
    if reader.int16() < 0:
        raise ValueError("negative consumer protocol version")
    pairs: list[tuple[str, int]] = []
    for _ in range(reader.array_length()):
        topic = _text(reader.string())
        pairs.extend((topic, partition) for partition in reader.int32_array())
    return pairs
