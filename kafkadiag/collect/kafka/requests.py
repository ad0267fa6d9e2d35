"""The Kafka requests kafkadiag sends, as what they ask, and the parts of their answers it reads.

kafka-python builds, sends and decodes them (`client`); these types keep the scan independent of
kafka-python's message classes. Every request here reads: none joins a group, commits an offset
or creates a topic. Each lists the versions kafkadiag uses in order of preference; the first one
the broker accepts (ApiVersions, or kafka-python's probe of older brokers) is sent:

- FindCoordinator v4 and OffsetFetch v8 ask about many groups in one request (KIP-699, KIP-709);
  the older versions ask about one group each and are kept for brokers before 3.0.
- DescribeGroups prefers v2: v3+ add authorized operations, which kafkadiag does not read.
- ListOffsets prefers v1: later versions add isolation level and leader epochs; all return the
  high watermark for timestamp -1 when reading uncommitted, as here.
- Metadata v4-v8 can forbid auto-creation of the topics asked about (read-only) and name topics
  (v10+ may name them by id only). v0-v3 cannot forbid it: a broker with auto.create.topics.enable
  creates every topic such a request names, so on brokers before 0.11 kafkadiag asks for all
  topics and keeps those it wants (`ASKS_BY_NAME_FROM`).
- Brokers before 0.10 answer no ApiVersions; kafka-python's tables for 0.9 and 0.8.2 stand in for
  it (`client`), and the oldest versions are kept for them: ListOffsets v0 (a list of offsets,
  one asked for), OffsetFetch v1 with the partitions named (v0 reads ZooKeeper, which kafkadiag
  reads itself).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

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


class ConsumerGroupMember(NamedTuple):
    """A member of a consumer-protocol group (KIP-848), whose assignment the broker computes."""

    member_id: str
    client_id: str
    client_host: str
    subscribed_topics: list[str]
    assignment: list[tuple[str, int]]


class ConsumerGroupDescription(NamedTuple):
    group_id: str
    error_code: int
    group_state: str
    members: list[ConsumerGroupMember]


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


@dataclass(frozen=True)
class MetadataRequest:
    """Brokers, and the named topics' partitions and leaders (no topics: brokers only;
    `all_topics`: every topic)."""

    topics: tuple[str, ...] = ()
    all_topics: bool = False
    API_KEY = 3
    versions: tuple[int, ...] = (8, 7, 6, 5, 4, 3, 2, 1, 0)
    # The first version that can name topics without creating them.
    ASKS_BY_NAME_FROM = 4


@dataclass(frozen=True)
class ListGroupsRequest:
    API_KEY = 16
    versions: tuple[int, ...] = (2, 1, 0)


@dataclass(frozen=True)
class FindCoordinatorRequest:
    """Group coordinators: v4 for many groups at once, v0-v2 for one group."""

    keys: tuple[str, ...]
    API_KEY = 10
    BATCHED_FROM = 4

    @property
    def versions(self) -> tuple[int, ...]:
        return (4, 2, 1, 0) if len(self.keys) == 1 else (4,)


@dataclass(frozen=True)
class DescribeGroupsRequest:
    groups: tuple[str, ...]
    API_KEY = 15
    versions: tuple[int, ...] = (2, 1, 0, 3, 4)


@dataclass(frozen=True)
class ConsumerGroupDescribeRequest:
    """Groups on the consumer group protocol of KIP-848 (Kafka 3.7+, the default in 4.0): the
    classic DescribeGroups calls them Dead, with no members. A classic group is answered with
    GROUP_ID_NOT_FOUND here."""

    groups: tuple[str, ...]
    API_KEY = 69
    versions: tuple[int, ...] = (0,)


@dataclass(frozen=True)
class OffsetFetchRequest:
    """Committed offsets: v8 for many groups at once, v1-v5 for one group. `partitions_of`
    None asks for every partition the group committed (v2+); v1 needs them named."""

    groups: tuple[str, ...]
    partitions_of: tuple[tuple[str, tuple[int, ...]], ...] | None = None
    API_KEY = 9
    BATCHED_FROM = 8

    @property
    def versions(self) -> tuple[int, ...]:
        if len(self.groups) != 1:
            return (8,)
        return (8, 5, 4, 3, 2) if self.partitions_of is None else (8, 5, 4, 3, 2, 1)


@dataclass(frozen=True)
class ListOffsetsRequest:
    """One offset per partition at `timestamp` (LATEST or EARLIEST), asked of the leader."""

    partitions_of: tuple[tuple[str, tuple[int, ...]], ...]
    timestamp: int
    API_KEY = 2
    versions: tuple[int, ...] = (1, 2, 3, 4, 5, 0)


def pick_version(request: object, accepted: dict[int, tuple[int, int]]) -> int:
    """The first of the request's preferred versions inside the broker's accepted range."""
    low, high = accepted.get(request.API_KEY, (0, -1))  # type: ignore[attr-defined]
    for version in request.versions:  # type: ignore[attr-defined]
        if low <= version <= high:
            return int(version)
    name = type(request).__name__.removesuffix("Request")
    spoken = ", ".join(f"v{v}" for v in sorted(request.versions))  # type: ignore[attr-defined]
    offered = f"v{low}-v{high}" if high >= 0 else "none"
    raise UnsupportedVersionError(f"the broker accepts {name} {offered}, kafkadiag speaks {spoken}")


def by_topic(partitions: Sequence[tuple[str, int]]) -> tuple[tuple[str, tuple[int, ...]], ...]:
    grouped: dict[str, list[int]] = {}
    for topic, partition in partitions:
        grouped.setdefault(topic, []).append(partition)
    return tuple((topic, tuple(parts)) for topic, parts in sorted(grouped.items()))
