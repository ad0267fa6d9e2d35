"""Several snapshots of the same groups -> rates, time lag, time to catch up, Burrow statuses.

The evaluation window is the list of snapshots, oldest first; the report is the newest
snapshot's lag, enriched per partition with:

- consumption rate: (last committed - first committed) / (last time - first time), records/s;
  production rate: the same with high watermarks.
- time lag: lag / production rate (how long the producers took to write what the group has not
  read yet); 0 when the lag is 0; unknown when nothing was produced in the window.
- time to catch up: lag / (consumption rate - production rate), when the group consumes faster
  than the producers write; None (never, at these rates) otherwise.
- completeness, as Burrow's: the fraction of the window's snapshots that saw the partition's
  committed offset (a commit whose lag is unknown counts; Burrow's ring of commits can only be
  empty at its start, before the first commit, while a sample can miss the offset anywhere).
- Burrow's status (kafkadiag.lag.burrow) over the partition's observations. An observation is a
  commit as far as the source can show one. Where its commit time is known (the old consumer's
  offset znode mtime, which changes only when the offset changes) each distinct commit is one
  observation stamped with its commit time, as Burrow's ZooKeeper module sees it. Where it is
  not (Kafka-stored offsets: OffsetFetch returns no commit time) a commit shows only as a new
  offset: each change of the offset is one observation, stamped with the time of the first
  sample that showed it (the latest time the commit can have been made), and "now" is the last
  sample. So a consumer that stopped committing while it lags is STOP, as Burrow says; one that
  keeps committing the same offset cannot be told from it (Burrow would say STALL, having seen
  the commits), and is STOP too. A commit seen while the high watermark was unknown is kept with
  an unknown lag (as Burrow keeps it) and counted in `commits_without_lag`.
- Burrow's "caught up recently" check (do not call a silent consumer stopped while there was
  nothing new to read) looks at the high watermarks read after the sample that first showed the
  last commit. Burrow looks at its last `intervals` high-watermark refreshes, a span of its own
  that usually starts after the commits it compares them with; the window's older watermarks are
  always at or below the last commit of a consumer that made progress, and counting them made a
  consumer that stopped after progress read OK or WARN, never STOP (Burrow's own cases 2, 3, 9).
  The watermark of the sample that showed the commit is the commit's own lag, which Burrow's
  case 9 says does not excuse the silence that follows.

`now_ms` evaluates the window as of a chosen time (`lag history --at`): later snapshots are left
out, and the STOP rule measures from that time where commit times are known. Observations
stamped with the sample's time are measured from the last sample instead: the time between that
sample and `now_ms` is time nobody looked, not time the consumer did not commit, so as of a time
between two snapshots they get the evaluation of the earlier one.
"""

from __future__ import annotations

import dataclasses
import datetime
from collections.abc import Sequence

from kafkadiag.lag import burrow
from kafkadiag.lag.compute import compute_lag
from kafkadiag.lag.model import GroupLag, LagReport, PartitionLag, TopicLag
from kafkadiag.lag.snapshot import Snapshot

Key = tuple[str, str, str, int]  # group, source, topic, partition


@dataclasses.dataclass
class _Series:
    times_ms: list[int] = dataclasses.field(default_factory=list)
    offsets: list[int | None] = dataclasses.field(default_factory=list)
    watermarks: list[int | None] = dataclasses.field(default_factory=list)
    commit_times: list[int | None] = dataclasses.field(default_factory=list)


def _series(snapshots: Sequence[Snapshot]) -> dict[Key, _Series]:
    series: dict[Key, _Series] = {}
    for snapshot in snapshots:
        watermarks = {(p.topic, p.partition): p.high_watermark for p in snapshot.partitions}
        for group in snapshot.groups:
            for offset in group.offsets:
                key = (group.group, group.source, offset.topic, offset.partition)
                entry = series.setdefault(key, _Series())
                entry.times_ms.append(snapshot.taken_at_ms)
                entry.offsets.append(offset.offset)
                entry.watermarks.append(watermarks.get((offset.topic, offset.partition)))
                entry.commit_times.append(offset.commit_time_ms)
    return series


def _has_commit_times(entry: _Series) -> bool:
    return any(commit is not None for commit in entry.commit_times)


@dataclasses.dataclass(frozen=True)
class Observed:
    """A partition's observations in the window, and the index of the sample that first showed
    the last of them (None when there is none)."""

    observations: list[burrow.Observation]
    last_seen_in: int | None

    def watermarks_since(self, entry: _Series) -> list[int]:
        """The known high watermarks read after the sample that first showed the last commit."""
        if self.last_seen_in is None:
            return []
        return [mark for mark in entry.watermarks[self.last_seen_in + 1 :] if mark is not None]


def observed(entry: _Series) -> Observed:
    result: list[burrow.Observation] = []
    last_seen_in: int | None = None
    use_commit_times = _has_commit_times(entry)
    seen: set[tuple[int, int]] = set()
    previous_offset: int | None = None
    for index, (time_ms, offset, watermark, commit) in enumerate(
        zip(entry.times_ms, entry.offsets, entry.watermarks, entry.commit_times)
    ):
        if offset is None:
            continue  # a read that failed is not a commit: the next offset is compared with the last known
        lag = max(watermark - offset, 0) if watermark is not None else None
        if use_commit_times:
            if commit is None or (offset, commit) in seen:
                continue
            seen.add((offset, commit))
            stamp = commit
        else:
            # Without commit times a commit that does not move the offset leaves no trace.
            if offset == previous_offset:
                continue
            previous_offset = offset
            stamp = time_ms
        result.append(burrow.Observation(offset, stamp, lag))
        last_seen_in = index
    return Observed(result, last_seen_in)


def _rate(first: int | None, last: int | None, seconds: float) -> float | None:
    if first is None or last is None or seconds <= 0:
        return None
    return (last - first) / seconds


def _first_last(times: list[int], values: list[int | None]) -> tuple[int | None, int | None, float]:
    known = [(time_ms, value) for time_ms, value in zip(times, values) if value is not None]
    if len(known) < 2:
        return None, None, 0.0
    return known[0][1], known[-1][1], (known[-1][0] - known[0][0]) / 1000.0


def enrich_partition(
    partition: PartitionLag,
    entry: _Series | None,
    window_slots: int,
    allowed_lag: int = 0,
    now_ms: int | None = None,
) -> PartitionLag:
    """`now_ms`: the time the STOP rule measures from where commit times are known (default,
    and always for observations stamped with the sample time: the partition's last sample)."""
    if entry is None:
        return partition
    first_offset, last_offset, offset_span = _first_last(entry.times_ms, entry.offsets)
    first_mark, last_mark, mark_span = _first_last(entry.times_ms, entry.watermarks)
    consumption = _rate(first_offset, last_offset, offset_span)
    production = _rate(first_mark, last_mark, mark_span)
    time_lag, catch_up = _time_lag_and_catch_up(partition.lag, consumption, production)
    seen = observed(entry)
    found = seen.observations
    status = None
    if partition.lag is not None and partition.high_watermark is not None:
        evaluated_at = now_ms if now_ms is not None and _has_commit_times(entry) else entry.times_ms[-1]
        status = burrow.partition_status(
            found, max(partition.lag, 0), evaluated_at, seen.watermarks_since(entry), allowed_lag
        )
    samples_with_offset = sum(1 for offset in entry.offsets if offset is not None)
    since, at_least, last_progress = _progress(partition, entry)
    return partition._replace(
        status=status,
        consumption_rate=consumption,
        production_rate=production,
        time_lag_s=time_lag,
        catch_up_s=catch_up,
        complete=samples_with_offset / window_slots if window_slots else None,
        since_progress_s=since,
        since_progress_at_least=at_least,
        last_progress_ms=last_progress,
        commits_without_lag=sum(1 for observation in found if observation.lag is None),
    )


def _time_lag_and_catch_up(
    lag: int | None, consumption: float | None, production: float | None
) -> tuple[float | None, float | None]:
    """The age of the next record to consume, and the time to reach lag 0 at the current rates."""
    if lag is None:
        return None, None
    if lag <= 0:
        return 0.0, 0.0
    time_lag = lag / production if production is not None and production > 0 else None
    catch_up = None
    if consumption is not None and production is not None and consumption > production:
        catch_up = lag / (consumption - production)
    return time_lag, catch_up


def _progress(partition: PartitionLag, entry: _Series) -> tuple[float | None, bool, int | None]:
    """Seconds since the offset last moved, whether that is a lower bound, and when it moved."""
    since = partition.since_progress_s
    at_least = partition.since_progress_at_least
    if partition.last_progress_ms is not None or partition.committed_offset is None:
        return since, at_least, partition.last_progress_ms
    # No commit time: the offset moved between the last sample that saw another value and the
    # first that saw this one; if it never moved, at least the whole window passed.
    moved_at = None
    for index in range(len(entry.offsets) - 1, 0, -1):
        if entry.offsets[index - 1] is not None and entry.offsets[index - 1] != entry.offsets[index]:
            moved_at = entry.times_ms[index]
            break
        if entry.offsets[index - 1] is None:
            break
    newest_ms = entry.times_ms[-1]
    if moved_at is not None:
        return (newest_ms - moved_at) / 1000.0, at_least, moved_at
    if len(entry.times_ms) > 1:
        return (newest_ms - entry.times_ms[0]) / 1000.0, True, None
    return since, at_least, None


def _sum(values: list[float | None]) -> float | None:
    known = [value for value in values if value is not None]
    return sum(known) if known else None


def _utc(milliseconds: int) -> str:
    moment = datetime.datetime.fromtimestamp(milliseconds / 1000, tz=datetime.timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def snapshots_up_to(snapshots: Sequence[Snapshot], now_ms: int) -> list[Snapshot]:
    """The snapshots taken at or before `now_ms`, oldest first; ValueError naming the span of
    the snapshots when there is none."""
    ordered = sorted(snapshots, key=lambda snapshot: snapshot.taken_at_ms)
    kept = [snapshot for snapshot in ordered if snapshot.taken_at_ms <= now_ms]
    if ordered and not kept:
        raise ValueError(
            f"no snapshot at or before {_utc(now_ms)}: the recording spans "
            f"{_utc(ordered[0].taken_at_ms)} to {_utc(ordered[-1].taken_at_ms)}"
        )
    return kept


def evaluate_window(
    snapshots: Sequence[Snapshot], allowed_lag: int = 0, now_ms: int | None = None
) -> LagReport:
    """The newest snapshot's lag, with rates and Burrow statuses from the whole window; with
    `now_ms`, as of that time (the snapshots taken after it are left out, ValueError when that
    leaves none)."""
    if not snapshots:
        raise ValueError("no snapshot to evaluate")
    if now_ms is None:
        ordered = sorted(snapshots, key=lambda snapshot: snapshot.taken_at_ms)
    else:
        ordered = snapshots_up_to(snapshots, now_ms)
    latest = compute_lag(ordered[-1])
    if len(ordered) < 2:
        return latest
    series = _series(ordered)
    groups = [_group_over_window(group, series, len(ordered), allowed_lag, now_ms) for group in latest.groups]
    return dataclasses.replace(
        latest,
        groups=tuple(groups),
        samples=len(ordered),
        window_s=(ordered[-1].taken_at_ms - ordered[0].taken_at_ms) / 1000.0,
        errors=tuple(dict.fromkeys(error for snapshot in ordered[-1:] for error in snapshot.errors)),
    )


def _group_over_window(
    group: GroupLag, series: dict[Key, _Series], slots: int, allowed_lag: int, now_ms: int | None
) -> GroupLag:
    """One group of the newest snapshot with its partitions' rates and statuses, and their sums."""
    partitions = [
        enrich_partition(
            partition,
            series.get((group.group, group.source, partition.topic, partition.partition)),
            slots,
            allowed_lag,
            now_ms,
        )
        for partition in group.partitions
    ]
    topics = []
    for topic in group.topics:
        members = [partition for partition in partitions if partition.topic == topic.topic]
        topics.append(
            dataclasses.replace(
                topic,
                consumption_rate=_sum([partition.consumption_rate for partition in members]),
                production_rate=_sum([partition.production_rate for partition in members]),
            )
        )
    statuses = [partition.status for partition in partitions if partition.status is not None]
    # A partition whose lag is unknown has no status: the group is not OK on its word.
    unknown = any(partition.partial for partition in partitions)
    consumption = _sum([partition.consumption_rate for partition in partitions])
    production = _sum([partition.production_rate for partition in partitions])
    _, catch_up = _time_lag_and_catch_up(group.total_lag, consumption, production)
    return dataclasses.replace(
        group,
        partitions=tuple(partitions),
        topics=tuple(_topic_list(topics)),
        status=_group_status(statuses, unknown) if group.exists else None,
        consumption_rate=consumption,
        production_rate=production,
        catch_up_s=catch_up,
    )


def _group_status(statuses: list[str], unknown: bool) -> str | None:
    worst = burrow.group_status(statuses)
    return worst if worst == burrow.ERR or not unknown else None


def _topic_list(topics: list[TopicLag]) -> list[TopicLag]:
    return topics
