"""Rates, time lag, catch-up time and Burrow statuses from hand-built snapshot series."""

from __future__ import annotations

import io

import pytest

from kafkadiag.lag.snapshot import (
    SOURCE_KAFKA,
    SOURCE_ZOOKEEPER,
    BrokerPartition,
    CommittedOffset,
    GroupSnapshot,
    Snapshot,
)
from kafkadiag.lag.window import evaluate_window
from kafkadiag.report.lag_table import render_lag


def snapshot(
    at_s: float,
    committed: int | None,
    high_watermark: int,
    source: str = SOURCE_KAFKA,
    commit_time_s: float | None = None,
    log_start: int = 0,
) -> Snapshot:
    offset = CommittedOffset(
        "t",
        0,
        offset=committed,
        commit_time_ms=int(commit_time_s * 1000) if commit_time_s is not None else None,
    )
    return Snapshot(
        taken_at_ms=int(at_s * 1000),
        groups=(GroupSnapshot("g", source, state="Stable", offsets=(offset,)),),
        partitions=(
            BrokerPartition("t", 0, leader=1, high_watermark=high_watermark, log_start_offset=log_start),
        ),
    )


def only_partition(snapshots: list[Snapshot]):  # type: ignore[no-untyped-def]
    report = evaluate_window(snapshots)
    (group,) = report.groups
    (partition,) = group.partitions
    return report, group, partition


def test_rates_time_lag_and_catch_up_are_hand_computed() -> None:
    # GIVEN over 20 s the committed offset goes 100 -> 300 (10/s) and the high watermark
    # 400 -> 500 (5/s): lag 200 at the end
    report, group, partition = only_partition(
        [snapshot(0, 100, 400), snapshot(10, 200, 450), snapshot(20, 300, 500)]
    )
    # THEN consumption 10/s, production 5/s, time lag 200 / 5 = 40 s, catch up 200 / (10 - 5) = 40 s
    assert partition.lag == 200
    assert partition.consumption_rate == pytest.approx(10.0)
    assert partition.production_rate == pytest.approx(5.0)
    assert partition.time_lag_s == pytest.approx(40.0)
    assert partition.catch_up_s == pytest.approx(40.0)
    # lag went 300, 250, 200: decreasing, so Burrow says OK
    assert partition.status == "OK" and group.status == "OK"
    assert report.samples == 3 and report.window_s == 20.0
    assert group.catch_up_s == pytest.approx(40.0)
    # the offset moved between the last two samples: progress is as recent as the last sample
    assert partition.since_progress_s == 0.0 and not partition.since_progress_at_least


def test_falling_behind_never_catches_up_and_warns() -> None:
    # committed 0 -> 20 (1/s), high watermark 100 -> 160 (3/s): lag 100, 120, 140 (never decreasing)
    _, group, partition = only_partition([snapshot(0, 0, 100), snapshot(10, 10, 130), snapshot(20, 20, 160)])
    assert partition.catch_up_s is None
    assert partition.time_lag_s == pytest.approx(140 / 3)
    assert partition.status == "WARN" and group.status == "WARN"


def test_kafka_offsets_that_do_not_move_are_stop() -> None:
    # Kafka-stored offsets have no commit time: a commit shows only as a new offset, stamped with
    # the sample that first showed it (0 s). Nothing new since, while 50 records wait: now (20) -
    # last (0) > last - first (0), STOP, as Burrow says of a consumer that stopped committing.
    _, group, partition = only_partition([snapshot(0, 50, 100), snapshot(10, 50, 100), snapshot(20, 50, 110)])
    assert partition.status == "STOP" and group.status == "ERR"
    assert partition.since_progress_s == 20.0 and partition.since_progress_at_least
    assert partition.consumption_rate == 0.0 and partition.production_rate == pytest.approx(0.5)


def test_old_consumer_offsets_that_do_not_move_are_stop() -> None:
    # The old consumer rewrites its offset znode only when the offset changes: one commit seen
    # (mtime 5 s) through the whole window -> now (20) - last (5) > last - first (0): STOP.
    snapshots = [snapshot(at, 50, 100, SOURCE_ZOOKEEPER, commit_time_s=5) for at in (10, 15, 20)]
    _, group, partition = only_partition(snapshots)
    assert partition.status == "STOP" and group.status == "ERR"
    assert partition.since_progress_s == 15.0


def test_old_consumer_committing_steadily_is_ok_with_commit_times() -> None:
    # commits at 9, 14, 19 s, lag 10, 8, 6; samples at 10, 15, 20
    snapshots = [
        snapshot(10, 90, 100, SOURCE_ZOOKEEPER, commit_time_s=9),
        snapshot(15, 97, 105, SOURCE_ZOOKEEPER, commit_time_s=14),
        snapshot(20, 104, 110, SOURCE_ZOOKEEPER, commit_time_s=19),
    ]
    _, _, partition = only_partition(snapshots)
    assert partition.status == "OK"


def test_rewind_is_reported() -> None:
    _, group, partition = only_partition([snapshot(0, 80, 100), snapshot(10, 40, 100)])
    assert partition.status == "REWIND" and group.status == "ERR"


def test_a_sample_without_numbers_lowers_completeness_not_the_result() -> None:
    _, _, partition = only_partition([snapshot(0, None, 100), snapshot(10, 90, 100), snapshot(20, 100, 100)])
    assert partition.complete == pytest.approx(2 / 3)
    assert partition.lag == 0 and partition.status == "OK" and partition.catch_up_s == 0.0


def test_a_group_that_began_committing_late_has_a_partial_window() -> None:
    # GIVEN four snapshots, the group's offsets in the last two only (its first commit came late)
    first_commit_late = [
        Snapshot(taken_at_ms=at * 1000, groups=(GroupSnapshot("g", SOURCE_KAFKA, state="Empty"),))
        for at in (0, 10)
    ]
    report = evaluate_window([*first_commit_late, snapshot(20, 50, 100), snapshot(30, 50, 110)])
    (partition,) = report.groups[0].partitions
    # THEN as in Burrow the empty start of the window counts against completeness (2 of 4),
    # and the status is still judged on what there is: one commit, then silence while it lags
    assert partition.complete == pytest.approx(0.5)
    assert partition.status == "STOP"


def test_one_snapshot_has_no_rates_and_no_status() -> None:
    report, group, partition = only_partition([snapshot(0, 10, 15)])
    assert report.samples == 1 and partition.status is None and group.status is None
    assert partition.consumption_rate is None and partition.lag == 5


def test_a_commit_seen_while_the_watermark_was_unknown_is_kept_and_counted() -> None:
    # GIVEN the middle sample has no high watermark (leader unavailable) and shows a new commit
    unknown = snapshot(10, 110, 0)
    unknown = Snapshot(
        taken_at_ms=unknown.taken_at_ms,
        groups=unknown.groups,
        partitions=(BrokerPartition("t", 0, error="LEADER_NOT_AVAILABLE"),),
    )
    report, group, partition = only_partition([snapshot(0, 100, 150), unknown, snapshot(20, 120, 170)])
    # THEN the commit stays an observation (three, one without lag), skipped where lags are
    # compared: 50 then 50, never decreasing
    assert partition.commits_without_lag == 1
    assert partition.status == "WARN" and group.status == "WARN"
    # the window is complete, as Burrow counts it: every sample saw the committed offset
    assert partition.complete == 1.0
    # and the table says, beside the status, that one commit's lag was unknown
    table = io.StringIO()
    render_lag(table, report)
    assert "1 commit(s) without lag (high watermark unknown)" in table.getvalue()


def test_as_of_a_time_leaves_later_snapshots_out_and_stops_from_that_time() -> None:
    # GIVEN commits with commit times (old consumer) at 0, 10 and 20 s, lag growing
    series = [
        snapshot(0, 100, 150, SOURCE_ZOOKEEPER, commit_time_s=0),
        snapshot(10, 110, 170, SOURCE_ZOOKEEPER, commit_time_s=10),
        snapshot(20, 120, 190, SOURCE_ZOOKEEPER, commit_time_s=20),
        snapshot(30, 130, 210, SOURCE_ZOOKEEPER, commit_time_s=30),
    ]
    # WHEN evaluated as of 25 s THEN the 30 s snapshot is not used, lag is the 20 s one's
    as_of = evaluate_window(series, now_ms=25_000)
    (partition,) = as_of.groups[0].partitions
    assert as_of.samples == 3 and partition.lag == 70 and partition.status == "WARN"
    # WHEN evaluated as of 45 s (25 s after the last commit > the 20 s the commits span) THEN STOP
    (later,) = evaluate_window(series[:3], now_ms=45_000).groups[0].partitions
    assert later.status == "STOP"
    # WHEN evaluated as of a time before the first snapshot THEN the error names the span
    with pytest.raises(ValueError, match=r"spans 1970-01-01T00:00:00.000Z to 1970-01-01T00:00:30.000Z"):
        evaluate_window(series, now_ms=-1)


def test_as_of_a_time_between_samples_kafka_offsets_get_the_earlier_evaluation() -> None:
    # GIVEN Kafka-stored offsets (no commit time) that do not move while the lag grows, sampled
    # at 0, 10 and 20 s, and a fourth sample at 100 s
    series = [snapshot(0, 50, 60), snapshot(10, 50, 70), snapshot(20, 50, 80), snapshot(100, 50, 90)]
    as_of_earlier = evaluate_window(series[:3]).groups[0].partitions[0]
    # WHEN evaluated as of 90 s, long after the 20 s sample
    (partition,) = evaluate_window(series, now_ms=90_000).groups[0].partitions
    # THEN it is the 20 s evaluation: the 70 s nobody sampled add nothing to the 20 s of silence
    assert partition == as_of_earlier
    assert partition.status == "STOP"


def test_the_allowed_lag_keeps_a_small_steady_lag_ok() -> None:
    steady = [snapshot(0, 100, 103), snapshot(10, 100, 103), snapshot(20, 100, 103)]
    assert only_partition(steady)[2].status == "STOP"
    (partition,) = evaluate_window(steady, allowed_lag=3).groups[0].partitions
    assert partition.status == "OK"


def test_a_group_with_a_partition_of_unknown_lag_is_not_called_ok() -> None:
    known = GroupSnapshot(
        "g", SOURCE_KAFKA, offsets=(CommittedOffset("t", 0, 100), CommittedOffset("t", 1, 5))
    )
    marks = (BrokerPartition("t", 0, high_watermark=100), BrokerPartition("t", 1, error="NOT_LEADER"))
    series = [Snapshot(taken_at_ms=at, groups=(known,), partitions=marks) for at in (0, 10_000)]
    (group,) = evaluate_window(series).groups
    assert [partition.status for partition in group.partitions] == ["OK", None]
    assert group.status is None


# ---- a consumer that stopped committing is STOP (issue 32: it read OK or WARN) ---------------


def test_kafka_offsets_that_moved_then_stopped_are_stop() -> None:
    # GIVEN commits 10, 20, 30 at 0-20 s, then nothing while the log end keeps growing
    samples = [(0, 10, 50), (10, 20, 60), (20, 30, 70), (30, 30, 80), (40, 30, 90), (50, 30, 100)]
    series = [snapshot(at, offset, mark) for at, offset, mark in samples]
    # WHEN the window is evaluated at the last sample
    _, group, partition = only_partition(series)
    # THEN 30 s of silence > the 20 s the commits span: STOP (every sample an observation at its
    # own time made the silence invisible: the lag 40, 40, 40, 50, 60, 70 read WARN)
    assert partition.status == "STOP" and group.status == "ERR"


def test_old_consumer_that_moved_then_stopped_is_stop_though_early_watermarks_were_below() -> None:
    # GIVEN an old consumer's commits (mtimes) 10 @ 0 s, 20 @ 10 s, 30 @ 20 s, lag 5 at each, then
    # silence to 50 s while the log end grows to 65: Burrow's case 3 in small
    series = [
        snapshot(0, 10, 15, SOURCE_ZOOKEEPER, commit_time_s=0),
        snapshot(10, 20, 25, SOURCE_ZOOKEEPER, commit_time_s=10),
        snapshot(20, 30, 35, SOURCE_ZOOKEEPER, commit_time_s=20),
        snapshot(30, 30, 45, SOURCE_ZOOKEEPER, commit_time_s=20),
        snapshot(40, 30, 55, SOURCE_ZOOKEEPER, commit_time_s=20),
        snapshot(50, 30, 65, SOURCE_ZOOKEEPER, commit_time_s=20),
    ]
    _, _, partition = only_partition(series)
    # THEN STOP: the watermarks 15 and 25 read before the last commit are below it for any
    # consumer that made progress, and say nothing about the silence after it (counting them as
    # "caught up recently" read WARN)
    assert partition.status == "STOP"


def test_a_silent_consumer_with_nothing_to_read_is_not_stop() -> None:
    # GIVEN a consumer caught up at 30 that commits nothing new, the log end at 30 for three
    # samples after, then one new record (Burrow's case 10 in small)
    series = [snapshot(at, 30, mark) for at, mark in [(0, 30), (10, 30), (20, 30), (30, 31)]]
    _, _, partition = only_partition(series)
    # THEN OK: a watermark read after its last commit was at that commit, so the silence was idleness
    assert partition.lag == 1 and partition.status == "OK"


def test_caught_up_at_its_last_commit_then_silent_while_records_arrive_is_stop() -> None:
    # GIVEN commits with lag 0 (10, 20, 30 at 0-20 s), then silence while 30 records arrive
    samples = [(0, 10, 10), (10, 20, 20), (20, 30, 30), (30, 30, 40), (40, 30, 50), (50, 30, 60)]
    series = [snapshot(at, offset, mark) for at, offset, mark in samples]
    _, _, partition = only_partition(series)
    # THEN STOP: the lag at its own commits does not excuse what followed (Burrow's case 9)
    assert partition.status == "STOP"


def test_a_failed_read_between_two_equal_offsets_is_not_a_commit() -> None:
    # GIVEN the same offset before and after a sample that could not read it
    _, _, partition = only_partition([snapshot(0, 50, 60), snapshot(10, None, 70), snapshot(20, 50, 80)])
    # THEN one observation, not two: still STOP, not a rewind or a fresh commit
    assert partition.status == "STOP"
