"""Check thresholds: defaults, per group/topic rules, option overrides, verdicts."""

from __future__ import annotations

import pytest

from kafkadiag.lag.check import (
    HEALTHY,
    UNCHECKED,
    UNHEALTHY,
    CheckPolicy,
    Thresholds,
    check_report,
    parse_duration,
    policy_from_document,
)
from kafkadiag.lag.compute import compute_lag
from kafkadiag.lag.snapshot import SOURCE_KAFKA, BrokerPartition, CommittedOffset, GroupSnapshot, Snapshot


def report(lags: dict[tuple[str, str], int | None]):  # type: ignore[no-untyped-def]
    groups = {}
    partitions = []
    for index, ((group, topic), lag) in enumerate(sorted(lags.items())):
        groups.setdefault(group, []).append(CommittedOffset(topic, index, offset=100))
        if lag is None:  # the lag is unknown: the leader did not answer
            partitions.append(BrokerPartition(topic, index, leader=1, error="leader 1 did not answer"))
        else:
            partitions.append(BrokerPartition(topic, index, leader=1, high_watermark=100 + lag))
    snapshot = Snapshot(
        taken_at_ms=0,
        groups=tuple(
            GroupSnapshot(name, SOURCE_KAFKA, state="Stable", offsets=tuple(offsets))
            for name, offsets in groups.items()
        ),
        partitions=tuple(partitions),
    )
    return compute_lag(snapshot)


def test_rules_override_defaults_per_group_and_topic() -> None:
    policy = policy_from_document(
        {
            "defaults": {"max_lag": 100},
            "rule": [
                {"group": "billing-*", "max_lag": 10},
                {"group": "billing-*", "topic": "audit", "max_lag": 1000},
            ],
        }
    )
    assert policy.for_group("orders").max_lag == 100
    assert policy.for_group("billing-eu", "invoices").max_lag == 10
    assert policy.for_group("billing-eu", "audit").max_lag == 1000
    result = check_report(
        report({("billing-eu", "invoices"): 50, ("billing-eu", "audit"): 500, ("orders", "x"): 50}), policy
    )
    verdicts = {verdict.group: verdict for verdict in result.verdicts}
    assert verdicts["billing-eu"].verdict == UNHEALTHY
    assert [violation.topic for violation in verdicts["billing-eu"].violations] == ["invoices"]
    assert verdicts["orders"].verdict == HEALTHY
    assert result.verdict == UNHEALTHY


def test_options_override_the_file() -> None:
    policy = policy_from_document({"defaults": {"max_lag": 5}})
    policy = CheckPolicy(policy.defaults, policy.rules, Thresholds(max_lag=500), ("max_lag",))
    assert check_report(report({("g", "t"): 50}), policy).verdict == HEALTHY


def test_unknown_lag_is_not_checked_and_violations_win() -> None:
    policy = CheckPolicy(Thresholds(max_lag=10))
    # a partition with nothing committed yet is neither a violation nor a gap
    nothing_committed = compute_lag(
        Snapshot(
            taken_at_ms=0,
            groups=(GroupSnapshot("g", SOURCE_KAFKA, offsets=(CommittedOffset("t", 0, owner="member-1"),)),),
            partitions=(BrokerPartition("t", 0, leader=1, high_watermark=5),),
        )
    )
    assert check_report(nothing_committed, policy).verdict == HEALTHY
    assert check_report(report({("g", "t"): None}), policy).verdict == UNCHECKED
    assert check_report(report({("g", "t"): None, ("h", "t"): 11}), policy).verdict == UNHEALTHY


@pytest.mark.parametrize(
    ("document", "message"),
    [
        ({"defaults": {"max_lag": -1}}, "max_lag must be a non-negative integer"),
        ({"defaults": {"worst_status": "BAD"}}, "worst_status must be one of"),
        ({"rule": [{"group": "x", "max_lagg": 1}]}, "unknown key(s) max_lagg"),
        ({"extra": {}}, "unknown section(s) extra"),
    ],
)
def test_bad_configuration_is_named(document: dict, message: str) -> None:
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        policy_from_document(document)


def test_durations() -> None:
    assert [parse_duration(value) for value in (90, "90", "90s", "5m", "2h", "1d")] == [
        90.0,
        90.0,
        90.0,
        300.0,
        7200.0,
        86400.0,
    ]
