"""One snapshot -> lag per partition, totals per topic and group, and the KD6xx rules' findings."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence

from kafkadiag.lag.model import GroupLag, LagReport, PartitionLag, TopicLag
from kafkadiag.lag.snapshot import (
    SOURCE_ZOOKEEPER,
    BrokerPartition,
    GroupMember,
    GroupSnapshot,
    Snapshot,
    TopicLayout,
)
from kafkadiag.rules.groupfacts import GroupFacts
from kafkadiag.rules.lagfamily import group_findings


def layouts_of(snapshot: Snapshot) -> dict[str, TopicLayout]:
    """Topic layouts, ZooKeeper's registration first, the brokers' metadata where it has none."""
    layouts: dict[str, TopicLayout] = {}
    for layout in snapshot.topics:
        current = layouts.get(layout.topic)
        if current is None or (current.error is not None and layout.error is None):
            layouts[layout.topic] = layout
    return layouts


def compute_lag(snapshot: Snapshot) -> LagReport:
    watermarks = {(partition.topic, partition.partition): partition for partition in snapshot.partitions}
    layouts = layouts_of(snapshot)
    groups = tuple(_group_lag(group, watermarks, layouts, snapshot.taken_at_ms) for group in snapshot.groups)
    return LagReport(
        taken_at_ms=snapshot.taken_at_ms,
        sources=snapshot.sources,
        groups=groups,
        errors=snapshot.errors,
        stats=snapshot.stats,
        duration_ms=snapshot.duration_ms,
        unreachable=snapshot.unreachable,
    )


def partition_lag(
    group: str,
    topic: str,
    partition: int,
    committed_offset: int | None,
    broker: BrokerPartition | None,
    owner: str | None = None,
    commit_time_ms: int | None = None,
    now_ms: int | None = None,
    offset_error: str | None = None,
) -> PartitionLag:
    # The common case (offset and watermarks known) allocates nothing but the result: a
    # report can hold 10,000s of partitions.
    if broker is None:
        high_watermark = log_start = leader = None
        broker_problem: str | None = "no watermarks read for this partition"
    else:
        high_watermark = broker.high_watermark
        log_start = broker.log_start_offset
        leader = broker.leader
        broker_problem = f"watermarks unknown: {broker.error}" if broker.error else None
    if offset_error:
        problems: tuple[str, ...] = (offset_error, broker_problem) if broker_problem else (offset_error,)
    else:
        problems = (broker_problem,) if broker_problem else ()
    lag = None
    if committed_offset is not None and high_watermark is not None:
        lag = high_watermark - committed_offset
    since = None
    if commit_time_ms is not None and now_ms is not None:
        since = max(now_ms - commit_time_ms, 0) / 1000.0
    # tuple.__new__ with the unsampled members' defaults: PartitionLag(...) passes each of its 22
    # members through a Python-level __new__, and a report can hold 10,000s of partitions.
    return _new_partition(
        PartitionLag,
        (
            group,
            topic,
            partition,
            committed_offset,
            high_watermark,
            log_start,
            lag,
            owner,
            leader,
            commit_time_ms,
            since,
            False,
            problems,
            *_UNSAMPLED,
        ),
    )


_new_partition = tuple.__new__
# The members after `problems` at their defaults: rates, statuses and owners' clients come later.
_UNSAMPLED = tuple(
    PartitionLag._field_defaults[field]
    for field in PartitionLag._fields[PartitionLag._fields.index("status") :]
)


def _group_lag(
    group: GroupSnapshot,
    watermarks: dict[tuple[str, int], BrokerPartition],
    layouts: dict[str, TopicLayout],
    now_ms: int,
) -> GroupLag:
    name = group.group
    watermark_of = watermarks.get
    partitions = [
        partition_lag(
            name,
            offset.topic,
            offset.partition,
            offset.offset,
            watermark_of((offset.topic, offset.partition)),
            offset.owner,
            offset.commit_time_ms,
            now_ms,
            offset.error,
        )
        for offset in group.offsets
    ]
    if group.source != SOURCE_ZOOKEEPER and group.members:
        partitions = _with_owner_clients(partitions, group.members)
    findings = group_findings(GroupFacts(group, partitions, layouts))
    return GroupLag(
        group=group.group,
        source=group.source,
        state=group.state if group.source != SOURCE_ZOOKEEPER else _zookeeper_state(group),
        members=group.members,
        partitions=tuple(partitions),
        topics=topic_totals(partitions),
        total_lag=_total_lag(group, partitions),
        max_lag=max((partition.lag for partition in partitions if partition.lag is not None), default=None),
        findings=findings,
        errors=group.errors,
        exists=group.exists,
    )


def _with_owner_clients(
    partitions: list[PartitionLag], members: tuple[GroupMember, ...]
) -> list[PartitionLag]:
    by_id = {member.member_id: member for member in members}
    owned = []
    for partition in partitions:
        member = by_id.get(partition.owner) if partition.owner is not None else None
        if member is not None:
            partition = partition._replace(owner_client_id=member.client_id, owner_host=member.host)
        owned.append(partition)
    return owned


def _total_lag(group: GroupSnapshot, partitions: list[PartitionLag]) -> int | None:
    known = [partition.lag for partition in partitions if partition.lag is not None]
    if not group.exists or (
        not known and (group.errors or any(partition.problems for partition in partitions))
    ):
        return None  # unknown is never reported as 0
    return sum(lag for lag in known if lag > 0)


def _zookeeper_state(group: GroupSnapshot) -> str | None:
    # The old consumer has no coordinator state; say whether anyone is registered.
    if group.exists is None:
        return None
    if not group.exists:
        return "Dead"
    return "Active" if group.members else "NoConsumers"


def topic_totals(partitions: Sequence[PartitionLag]) -> tuple[TopicLag, ...]:
    # Each topic's lags only, not its partitions: the totals need nothing else.
    lags_by_topic: dict[str, list[int | None]] = defaultdict(list)
    for partition in partitions:
        lags_by_topic[partition.topic].append(partition.lag)
    totals = []
    for topic, lags in sorted(lags_by_topic.items()):
        known = [lag for lag in lags if lag is not None]
        totals.append(
            TopicLag(
                topic=topic,
                partitions=len(lags),
                total_lag=sum(lag for lag in known if lag > 0),
                max_lag=max(known, default=None),
                unknown=len(lags) - len(known),
            )
        )
    return tuple(totals)
