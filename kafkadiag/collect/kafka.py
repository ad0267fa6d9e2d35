"""Read Kafka-stored group offsets, group state and members, and partition watermarks.

Read-only and batched, with kafka-python's admin client as transport:

- ListGroups: one request per broker (only for --all-groups).
- FindCoordinator: one batched request for all groups (v4+; one per group on older brokers).
- DescribeGroups and OffsetFetch: one request per coordinator covering all its groups
  (OffsetFetch v8+, KIP-709; one request per group on older brokers).
- Metadata: one request for every topic involved, never allowing auto-creation.
- ListOffsets: per leader, one request for the latest offsets and one for the earliest (the
  protocol accepts a partition only once per request), both in flight at the same time.

Nothing here joins a group or commits an offset. Requests are built directly so that
per-group and per-partition errors stay per group and partition (kafka-python's convenience
methods raise on the first one), and so that DescribeGroups asks for no authorized operations.
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from kafkadiag.collect.errors import BrokerUnreachableError
from kafkadiag.collect.snapshot import (
    SOURCE_KAFKA,
    BrokerPartition,
    CommittedOffset,
    GroupMember,
    GroupSnapshot,
    TopicLayout,
)

# ListOffsets timestamps: -1 latest (the high watermark), -2 earliest (the log-start offset).
LATEST = -1
EARLIEST = -2
# OffsetFetch v10 names topics by id; v8-v9 batch groups and still name topics.
OFFSET_FETCH_MAX_VERSION = 8


@dataclass
class KafkaScan:
    groups: list[GroupSnapshot] = field(default_factory=list)
    partitions: list[BrokerPartition] = field(default_factory=list)
    topics: list[TopicLayout] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    requests: int = 0
    round_trips: int = 0


class _ConnectionErrors:
    """Collects kafka-python's logged connection failures while bootstrapping: a bootstrap timeout
    says only "Unable to bootstrap", while the cause (a TLS certificate not trusted, a reset
    connection, an authentication failure) is only in its log."""

    MARKERS = ("Connection failed: ", "Connection lost: ", "Authentication failed")

    def __init__(self) -> None:
        import logging

        collector = self

        class Handler(logging.Handler):
            def emit(self, record: logging.LogRecord) -> None:
                try:
                    collector.seen(record.getMessage())
                except Exception:  # noqa: BLE001 - never disturb kafka-python's I/O thread
                    self.handleError(record)

        self.last_cause: str | None = None
        self.handler = Handler(level=logging.ERROR)
        self.logger = logging.getLogger("kafka")
        self.saved = (self.logger.level, self.logger.propagate)

    def seen(self, message: str) -> None:
        for marker in self.MARKERS:
            if marker in message:
                cause = message.split(marker, 1)[1] if marker.endswith(": ") else message
                cause = cause.replace("KafkaConnectionError: ", "").split(" (_ssl.c:")[0].strip()
                if cause:
                    self.last_cause = cause

    def __enter__(self) -> _ConnectionErrors:
        import logging

        # kafka-python logs every failed attempt at ERROR: kafkadiag reports the outcome, once.
        self.saved = (self.logger.level, self.logger.propagate)
        self.logger.setLevel(logging.ERROR)
        self.logger.propagate = False
        self.logger.addHandler(self.handler)
        return self

    def __exit__(self, *exc: object) -> None:
        import logging

        self.logger.removeHandler(self.handler)
        self.logger.propagate = self.saved[1]
        # Quiet afterwards too: the scan reports its own errors per group and partition.
        self.logger.setLevel(max(self.saved[0], logging.CRITICAL))


def open_admin(bootstrap_servers: str, client_config: dict[str, Any], timeout_s: float) -> Any:
    """A bootstrapped admin client, or BrokerUnreachableError within about timeout_s."""
    from kafka import KafkaAdminClient

    timeout_ms = max(int(timeout_s * 1000), 100)
    config = {
        "client_id": "kafkadiag",
        "request_timeout_ms": timeout_ms,
        "bootstrap_timeout_ms": timeout_ms,
        "reconnect_backoff_max_ms": 1000,
        "metadata_max_age_ms": 24 * 3600 * 1000,  # one scan: no background metadata refresh
        **client_config,
        "bootstrap_servers": bootstrap_servers,
    }
    with _ConnectionErrors() as connection_errors:
        try:
            return KafkaAdminClient(**config)
        except Exception as error:  # noqa: BLE001 - timeouts, auth failures, bad addresses alike
            reason = str(error).replace(f"{type(error).__name__}: ", "") or type(error).__name__
            if connection_errors.last_cause:
                reason += "; last connection error: " + connection_errors.last_cause
            raise BrokerUnreachableError(
                f"cannot reach a Kafka broker at {bootstrap_servers} within {timeout_s:g}s ({reason})"
            ) from None


def close_admin(admin: Any) -> None:
    try:
        admin.close()
    except Exception:  # noqa: BLE001 - nothing useful to do when closing fails
        pass


class _Requests:
    """Send requests on the admin client's I/O loop, counting them, each bounded by the deadline."""

    def __init__(self, admin: Any, deadline: float) -> None:
        self.admin = admin
        self.manager = admin._manager
        self.deadline = deadline
        self.count = 0
        self.round_trips = 0

    def send(self, request: Any, node_id: Any = None) -> Any:
        self.count += 1
        return self.manager.send(request, node_id=node_id)

    async def wait(self, future: Any) -> Any:
        remaining_ms = max((self.deadline - time.monotonic()) * 1000, 1)
        return await self.manager.wait_for(future, remaining_ms)

    async def gather(self, futures: Sequence[tuple[Any, Any]]) -> list[tuple[Any, Any, Exception | None]]:
        """Await futures that are all already in flight; (key, response, error) for each."""
        if futures:
            self.round_trips += 1
        results: list[tuple[Any, Any, Exception | None]] = []
        for key, future in futures:
            try:
                results.append((key, await self.wait(future), None))
            except Exception as error:  # noqa: BLE001 - kept per request
                results.append((key, None, error))
        return results


def describe_error(error: Exception | None) -> str:
    if error is None:
        return ""
    name = type(error).__name__
    if name == "KafkaTimeoutError":
        return "no answer within --timeout"
    text = str(error)
    return f"{name}: {text}" if text and text != name else name


def _error_name(code: int) -> str | None:
    if not code:
        return None
    import kafka.errors as errors

    return errors.for_code(code).__name__


def scan(
    admin: Any,
    groups: Sequence[str] | None,
    topics: Sequence[str] | None,
    extra_partitions: dict[str, set[int]],
    timeout_s: float,
    include_groups: bool = True,
) -> KafkaScan:
    """Read Kafka-stored groups (None: every group) and the watermarks of every partition involved.

    `extra_partitions` are partitions that other sources (ZooKeeper) need watermarks for.
    """
    requests = _Requests(admin, time.monotonic() + timeout_s)
    result = KafkaScan()
    try:
        admin._manager.run(
            _scan, requests, result, groups, set(topics) if topics else None, extra_partitions, include_groups
        )
    finally:
        result.requests = requests.count
        result.round_trips = requests.round_trips
    return result


async def _scan(
    requests: _Requests,
    result: KafkaScan,
    groups: Sequence[str] | None,
    topic_filter: set[str] | None,
    extra_partitions: dict[str, set[int]],
    include_groups: bool,
) -> None:
    offsets_by_group: dict[str, list[CommittedOffset]] = {}
    if include_groups:
        group_ids = (
            list(dict.fromkeys(groups)) if groups is not None else await _list_groups(requests, result)
        )
        if group_ids:
            offsets_by_group = await _read_groups(requests, result, group_ids, topic_filter)
    wanted: dict[str, set[int]] = defaultdict(set)
    for topic, partitions in extra_partitions.items():
        wanted[topic].update(partitions)
    for offsets in offsets_by_group.values():
        for offset in offsets:
            wanted[offset.topic].add(offset.partition)
    for topic in topic_filter or ():
        wanted.setdefault(topic, set())
    if wanted:
        await _read_watermarks(requests, result, wanted)


async def _list_groups(requests: _Requests, result: KafkaScan) -> list[str]:
    from kafka.protocol.admin import ListGroupsRequest

    brokers = [broker.node_id for broker in requests.manager.cluster.brokers()]
    answers = await requests.gather(
        [(broker, requests.send(ListGroupsRequest(), node_id=broker)) for broker in brokers]
    )
    group_ids: list[str] = []
    for broker, response, error in answers:
        if error is not None:
            result.errors.append(f"cannot list groups on broker {broker}: {describe_error(error)}")
            continue
        if response.error_code:
            result.errors.append(f"cannot list groups on broker {broker}: {_error_name(response.error_code)}")
            continue
        for group in response.groups:
            # "consumer" groups, and "" for groups that only ever committed offsets (no members).
            if group.protocol_type in ("consumer", ""):
                group_ids.append(group.group_id)
    return sorted(set(group_ids))


async def _find_coordinators(requests: _Requests, result: KafkaScan, group_ids: list[str]) -> dict[str, Any]:
    from kafka.protocol.metadata import FindCoordinatorRequest

    admin = requests.admin
    manager = requests.manager
    coordinators: dict[str, Any] = {}
    if manager.broker_version_data.api_version(FindCoordinatorRequest) >= 4:
        futures = [
            (
                None,
                requests.send(FindCoordinatorRequest(key_type=0, coordinator_keys=group_ids, min_version=4)),
            )
        ]
        for _, response, error in await requests.gather(futures):
            if error is not None:
                result.errors.append(f"cannot find group coordinators: {describe_error(error)}")
                return {}
            for coordinator in response.coordinators:
                if coordinator.error_code:
                    coordinators[coordinator.key] = _error_name(coordinator.error_code)
                elif manager.cluster.broker_metadata(coordinator.node_id) is not None:
                    # A broker the metadata already knows: address it by its id (registering
                    # 1,000 groups' coordinators one by one costs more than the request).
                    coordinators[coordinator.key] = coordinator.node_id
                else:
                    coordinators[coordinator.key] = manager.cluster.add_coordinator(
                        coordinator, _group_key_type(), coordinator.key, synthesize_node_id=False
                    )
        return coordinators
    single_futures: list[tuple[Any, Any]] = [
        (group, requests.send(FindCoordinatorRequest(key=group, key_type=0, max_version=3)))
        for group in group_ids
    ]
    for group, response, error in await requests.gather(single_futures):
        if error is not None:
            coordinators[group] = describe_error(error)
        elif response.error_code:
            coordinators[group] = _error_name(response.error_code)
        else:
            coordinators[group] = manager.cluster.add_coordinator(
                response, _group_key_type(), group, synthesize_node_id=False
            )
    del admin
    return coordinators


def _group_key_type() -> Any:
    from kafka.protocol.metadata import CoordinatorType

    return CoordinatorType.GROUP


async def _read_groups(
    requests: _Requests, result: KafkaScan, group_ids: list[str], topic_filter: set[str] | None
) -> dict[str, list[CommittedOffset]]:
    from kafka.protocol.admin import DescribeGroupsRequest
    from kafka.protocol.consumer import OffsetFetchRequest

    coordinators = await _find_coordinators(requests, result, group_ids)
    by_coordinator: dict[Any, list[str]] = defaultdict(list)
    group_errors: dict[str, list[str]] = defaultdict(list)
    for group in group_ids:
        coordinator = coordinators.get(group)
        if isinstance(coordinator, str) or coordinator is None:
            group_errors[group].append(f"no coordinator for the group: {coordinator or 'not found'}")
            continue
        by_coordinator[coordinator].append(group)

    partitions_of = await _topic_partitions(requests, result, topic_filter) if topic_filter else None
    batched = requests.manager.broker_version_data.api_version(OffsetFetchRequest) >= 8
    describe_futures: list[tuple[Any, Any]] = []
    fetch_futures: list[tuple[Any, Any]] = []
    describe_max = _describe_groups_max_version(requests)
    for coordinator, coordinated in by_coordinator.items():
        request = DescribeGroupsRequest(
            groups=coordinated, include_authorized_operations=False, max_version=describe_max
        )
        describe_futures.append((coordinator, requests.send(request, node_id=coordinator)))
        if batched:
            request = _offset_fetch_batched(coordinated, partitions_of)
            fetch_futures.append(((coordinator, None), requests.send(request, node_id=coordinator)))
        else:
            for group in coordinated:
                request = _offset_fetch_single(group, partitions_of)
                fetch_futures.append(((coordinator, group), requests.send(request, node_id=coordinator)))
    described = await requests.gather(describe_futures)
    fetched = await requests.gather(fetch_futures)

    descriptions: dict[str, Any] = {}
    for coordinator, response, error in described:
        if error is not None:
            for group in by_coordinator[coordinator]:
                group_errors[group].append(f"cannot describe the group: {describe_error(error)}")
            continue
        for described_group in response.groups:
            descriptions[described_group.group_id] = described_group

    offsets: dict[str, list[CommittedOffset]] = {}
    for (coordinator, single_group), response, error in fetched:
        affected = [single_group] if single_group is not None else by_coordinator[coordinator]
        if error is not None:
            for group in affected:
                group_errors[group].append(f"cannot fetch committed offsets: {describe_error(error)}")
            continue
        response_groups = response.groups if single_group is None else [response]
        for index, fetched_group in enumerate(response_groups):
            group = fetched_group.group_id if single_group is None else affected[index]
            if fetched_group.error_code:
                group_errors[group].append(
                    f"cannot fetch committed offsets: {_error_name(fetched_group.error_code)}"
                )
                continue
            offsets[group] = _committed_offsets(fetched_group, topic_filter)

    for group in group_ids:
        description = descriptions.get(group)
        members: list[GroupMember] = []
        state = protocol = None
        if description is not None:
            if description.error_code:
                group_errors[group].append(
                    f"cannot describe the group: {_error_name(description.error_code)}"
                )
            else:
                state = description.group_state or None
                protocol = description.protocol_data or None
                members = [_member(member) for member in description.members]
        group_offsets = offsets.get(group, [])
        owners = {
            (topic, partition): member.member_id
            for member in members
            for topic, partition in member.assignment
        }
        if owners:
            group_offsets = _with_owners(group_offsets, owners)
        # A group the coordinator has never heard of is described with no members and no offsets
        # (Apache Kafka says "Dead", other brokers "Empty"): there is nothing to report about it.
        errors = list(group_errors.get(group, ()))
        exists = bool(members or group_offsets) or state not in (None, "", "Dead", "Empty") or bool(errors)
        if not exists:
            errors.append(f"no such group on the brokers (state {state}, no members, no committed offsets)")
        result.groups.append(
            GroupSnapshot(
                group=group,
                source=SOURCE_KAFKA,
                state=state,
                protocol=protocol,
                members=tuple(members),
                offsets=tuple(group_offsets),
                errors=tuple(errors),
                exists=exists,
            )
        )
    return offsets


def _describe_groups_max_version(requests: _Requests) -> int | None:
    """2 when the broker accepts it: versions 3+ add authorized operations, a bit field kafkadiag
    does not use, which costs decoding time per group and which some brokers fill with bits that
    clients cannot decode. Brokers that dropped v0-v2 get their own lowest version."""
    from kafka.protocol.admin import DescribeGroupsRequest

    try:
        requests.manager.broker_version_data.api_version(DescribeGroupsRequest, max_version=2)
    except Exception:  # noqa: BLE001 - IncompatibleBrokerVersion: v2 is not accepted
        return None
    return 2


def _offset_fetch_batched(groups: list[str], partitions_of: dict[str, list[int]] | None) -> Any:
    from kafka.protocol.consumer import OffsetFetchRequest

    group_type = OffsetFetchRequest.OffsetFetchRequestGroup
    topic_type = group_type.OffsetFetchRequestTopics
    topics = (
        None
        if partitions_of is None
        else [
            topic_type(name=topic, partition_indexes=parts) for topic, parts in sorted(partitions_of.items())
        ]
    )
    return OffsetFetchRequest(
        groups=[group_type(group_id=group, topics=topics) for group in groups],
        min_version=8,
        max_version=OFFSET_FETCH_MAX_VERSION,
    )


def _offset_fetch_single(group: str, partitions_of: dict[str, list[int]] | None) -> Any:
    from kafka.protocol.consumer import OffsetFetchRequest

    topic_type = OffsetFetchRequest.OffsetFetchRequestTopic
    topics = (
        None
        if partitions_of is None
        else [
            topic_type(name=topic, partition_indexes=parts) for topic, parts in sorted(partitions_of.items())
        ]
    )
    return OffsetFetchRequest(
        group_id=group, topics=topics, min_version=2 if topics is None else 1, max_version=7
    )


def _committed_offsets(fetched_group: Any, topic_filter: set[str] | None) -> list[CommittedOffset]:
    offsets = []
    for topic in fetched_group.topics:
        if topic_filter is not None and topic.name not in topic_filter:
            continue
        for partition in topic.partitions:
            error = _error_name(partition.error_code)
            committed = partition.committed_offset
            if committed is None or committed < 0:
                if error is None:
                    continue  # -1: nothing committed for this partition (explicit lists ask for it)
                committed = None
            offsets.append(
                CommittedOffset(
                    topic.name,
                    partition.partition_index,
                    committed,
                    error=f"OffsetFetch: {error}" if error else None,
                )
            )
    offsets.sort(key=lambda offset: (offset.topic, offset.partition))
    return offsets


def _with_owners(offsets: list[CommittedOffset], owners: dict[tuple[str, int], str]) -> list[CommittedOffset]:
    known = {(offset.topic, offset.partition) for offset in offsets}
    updated = [offset._replace(owner=owners.get((offset.topic, offset.partition))) for offset in offsets]
    # Assigned partitions with nothing committed yet are part of the group too.
    updated += [
        CommittedOffset(topic=topic, partition=partition, owner=owner)
        for (topic, partition), owner in owners.items()
        if (topic, partition) not in known
    ]
    updated.sort(key=lambda offset: (offset.topic, offset.partition))
    return updated


def _member(member: Any) -> GroupMember:
    subscription: tuple[tuple[str, int], ...] = ()
    assignment: tuple[tuple[str, int], ...] = ()
    error = None
    if member.member_metadata:
        try:
            from kafka.protocol.consumer.metadata import ConsumerProtocolSubscription

            decoded = ConsumerProtocolSubscription.decode(member.member_metadata)
            subscription = tuple(sorted((str(topic), 1) for topic in decoded.topics))
        except Exception:  # noqa: BLE001 - a non-consumer protocol or a newer encoding
            error = "subscription metadata could not be decoded"
    if member.member_assignment:
        try:
            from kafka.protocol.consumer.metadata import ConsumerProtocolAssignment

            decoded_assignment = ConsumerProtocolAssignment.decode(member.member_assignment)
            assignment = tuple(
                sorted(
                    (str(topic.topic), int(partition))
                    for topic in decoded_assignment.assigned_partitions
                    for partition in topic.partitions
                )
            )
        except Exception:  # noqa: BLE001 - as above
            error = "assignment could not be decoded"
    return GroupMember(
        member_id=member.member_id,
        client_id=member.client_id or None,
        host=(member.client_host or "").lstrip("/") or None,
        subscription=subscription,
        assignment=assignment,
        error=error,
    )


async def _topic_partitions(
    requests: _Requests, result: KafkaScan, topics: Iterable[str]
) -> dict[str, list[int]]:
    layouts = await _metadata(requests, result, set(topics))
    return {layout.topic: list(layout.partitions) for layout in layouts.values() if layout.error is None}


async def _metadata(requests: _Requests, result: KafkaScan, topics: set[str]) -> dict[str, TopicLayout]:
    from kafka.protocol.metadata import MetadataRequest

    topic_type = MetadataRequest.MetadataRequestTopic
    request = MetadataRequest(
        topics=[topic_type(name=topic) for topic in sorted(topics)],
        # Read-only: asking about a topic must never create it.
        allow_auto_topic_creation=False,
        min_version=4,
    )
    ((_, response, error),) = await requests.gather([(None, requests.send(request))])
    layouts: dict[str, TopicLayout] = {}
    if error is not None:
        result.errors.append(f"cannot read topic metadata: {describe_error(error)}")
        for topic in topics:
            layouts[topic] = TopicLayout(topic, SOURCE_KAFKA, error=f"metadata: {describe_error(error)}")
        return layouts
    for topic in response.topics:
        error_name = _error_name(topic.error_code)
        if error_name:
            layouts[topic.name] = TopicLayout(topic.name, SOURCE_KAFKA, error=f"metadata: {error_name}")
            continue
        partitions = sorted(topic.partitions, key=lambda partition: partition.partition_index)
        layouts[topic.name] = TopicLayout(
            topic.name,
            SOURCE_KAFKA,
            partitions=tuple(partition.partition_index for partition in partitions),
            leaders=tuple(
                (
                    partition.partition_index,
                    partition.leader_id if not partition.error_code else -1,
                )
                for partition in partitions
            ),
        )
    for topic in topics:
        layouts.setdefault(topic, TopicLayout(topic, SOURCE_KAFKA, error="metadata: not in the response"))
    return layouts


async def _read_watermarks(requests: _Requests, result: KafkaScan, wanted: dict[str, set[int]]) -> None:
    layouts = await _metadata(requests, result, set(wanted))
    result.topics.extend(layouts[topic] for topic in sorted(layouts))
    by_leader: dict[int, list[tuple[str, int]]] = defaultdict(list)
    problems: dict[tuple[str, int], str] = {}
    leaders: dict[tuple[str, int], int] = {}
    for topic, partitions in sorted(wanted.items()):
        layout = layouts[topic]
        if layout.error is not None:
            for partition in partitions:
                problems[(topic, partition)] = layout.error
            continue
        leader_of = dict(layout.leaders)
        for partition in sorted(partitions or set(layout.partitions)):
            leader = leader_of.get(partition)
            if leader is None:
                problems[(topic, partition)] = "partition unknown to the brokers' metadata (no leader)"
            elif leader < 0:
                problems[(topic, partition)] = "leader not available"
            else:
                leaders[(topic, partition)] = leader
                by_leader[leader].append((topic, partition))
    futures: list[tuple[Any, Any]] = []
    version = _list_offsets_max_version(requests)
    for leader, leader_partitions in sorted(by_leader.items()):
        for timestamp in (LATEST, EARLIEST):
            futures.append(
                (
                    (leader, timestamp),
                    requests.send(_list_offsets(leader_partitions, timestamp, version), node_id=leader),
                )
            )
    found: dict[tuple[str, int], dict[int, int]] = defaultdict(dict)
    for (leader, timestamp), response, error in await requests.gather(futures):
        if error is not None:
            address = _address_of(requests, leader)
            for key in by_leader[leader]:
                kind = "high watermark" if timestamp == LATEST else "log-start offset"
                problems.setdefault(
                    key, f"leader {leader}{address} did not answer for the {kind}: {describe_error(error)}"
                )
            continue
        for topic in response.topics:
            for partition in topic.partitions:
                key = (topic.name, partition.partition_index)
                error_name = _error_name(partition.error_code)
                if error_name:
                    problems.setdefault(key, f"ListOffsets on leader {leader}: {error_name}")
                    continue
                found[key][timestamp] = partition.offset
    keys = set(leaders) | set(problems)
    for topic, partition in sorted(keys):
        values = found.get((topic, partition), {})
        result.partitions.append(
            BrokerPartition(
                topic=topic,
                partition=partition,
                leader=leaders.get((topic, partition)),
                high_watermark=values.get(LATEST),
                log_start_offset=values.get(EARLIEST),
                error=problems.get((topic, partition)),
            )
        )


def _address_of(requests: _Requests, node_id: int) -> str:
    broker = requests.manager.cluster.broker_metadata(node_id)
    return f" ({broker.host}:{broker.port})" if broker is not None else ""


def _list_offsets_max_version(requests: _Requests) -> int | None:
    """1 when the broker accepts it. Versions 2+ add fields kafkadiag does not need (isolation
    level, leader epochs, tagged fields) and cost several times more to encode: 10,000
    partitions take a tenth of a second in v9 and a hundredth in v1. Both return the high
    watermark for timestamp -1 (v2+ with isolation level READ_UNCOMMITTED, as here)."""
    from kafka.protocol.consumer import ListOffsetsRequest

    try:
        requests.manager.broker_version_data.api_version(ListOffsetsRequest, min_version=1, max_version=1)
    except Exception:  # noqa: BLE001 - IncompatibleBrokerVersion: v1 is not accepted
        return None
    return 1


def _list_offsets(partitions: list[tuple[str, int]], timestamp: int, max_version: int | None = None) -> Any:
    from kafka.protocol.consumer import ListOffsetsRequest

    topic_type = ListOffsetsRequest.ListOffsetsTopic
    partition_type = topic_type.ListOffsetsPartition
    by_topic: dict[str, list[int]] = defaultdict(list)
    for topic, partition in partitions:
        by_topic[topic].append(partition)
    return ListOffsetsRequest(
        replica_id=-1,
        isolation_level=0,
        topics=[
            topic_type(
                name=topic, partitions=[partition_type(partition_index=p, timestamp=timestamp) for p in parts]
            )
            for topic, parts in sorted(by_topic.items())
        ],
        # v0 answers with a list of offsets per partition and some brokers cannot decode it.
        min_version=1,
        **({"max_version": max_version} if max_version is not None else {}),
    )
