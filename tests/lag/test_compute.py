"""Lag arithmetic and offset findings on hand-built snapshots."""

from __future__ import annotations

from kafkadiag.lag.compute import compute_lag
from kafkadiag.lag.snapshot import (
    SOURCE_KAFKA,
    BrokerPartition,
    CommittedOffset,
    GroupSnapshot,
    Snapshot,
)
from kafkadiag.rules.base import Severity
from kafkadiag.rules.groupfacts import finding_partitions


def test_lag_totals_and_retention_overtaking_the_consumer() -> None:
    # GIVEN partition 0 committed 5 of 20 with the log starting at 10 (retention deleted 5
    # records the group never read), partition 1 ahead of its high watermark, partition 2 with
    # no watermark (its leader did not answer)
    group = GroupSnapshot(
        "g",
        SOURCE_KAFKA,
        state="Empty",
        offsets=(
            CommittedOffset("t", 0, offset=5),
            CommittedOffset("t", 1, offset=12),
            CommittedOffset("t", 2, offset=3),
        ),
    )
    snapshot = Snapshot(
        taken_at_ms=1_000,
        groups=(group,),
        partitions=(
            BrokerPartition("t", 0, leader=1, high_watermark=20, log_start_offset=10),
            BrokerPartition("t", 1, leader=1, high_watermark=10, log_start_offset=0),
            BrokerPartition("t", 2, leader=2, error="leader 2 did not answer"),
        ),
    )
    # WHEN the lag is computed
    (result,) = compute_lag(snapshot).groups
    lags = {partition.partition: partition.lag for partition in result.partitions}
    # THEN lags are high watermark - committed, as kafka-consumer-groups.sh prints them
    assert lags == {0: 15, 1: -2, 2: None}
    assert result.total_lag == 15 and result.max_lag == 15
    # and each finding is its catalogue rule's, in code order, quoting the offsets it rests on
    # (and the group is Empty with lag: nobody consumes it)
    assert [finding.rule for finding in result.findings] == ["KD601", "KD602", "KD604", "KD612"]
    codes = {finding.name: finding for finding in result.findings}
    assert "5 record(s)" in codes["offset-below-log-start"].message
    (evidence,) = codes["offset-below-log-start"].evidence
    assert evidence.text == "t/0: committed 5 < log start 10"
    assert codes["offset-below-log-start"].severity is Severity.ERROR
    assert finding_partitions(codes["offset-above-high-watermark"]) == (1,)
    assert finding_partitions(codes["watermark-unknown"]) == (2,)
    assert codes["watermark-unknown"].severity is Severity.WARNING
    assert result.partitions[2].partial and result.partial
    (topic,) = result.topics
    assert topic.total_lag == 15 and topic.unknown == 1
