"""An unknown high watermark makes a lag unknown; sums in sentences say so instead of counting it
as 0 (the old-consumer story once said "committed lag 0" where ConsumerOffsetChecker showed 118)."""

from __future__ import annotations

from kafkadiag.lag.model import known_sum_text


def test_a_sum_of_known_lags_is_stated_as_is() -> None:
    assert known_sum_text("committed lag", [100, 18, 0]) == "committed lag 118"


def test_a_sum_with_unknown_lags_is_a_lower_bound_naming_them() -> None:
    assert known_sum_text("committed lag", [100, None, 18]) == (
        "committed lag at least 118 (1 of 3 partitions unknown)"
    )


def test_a_sum_of_only_unknown_lags_is_unknown_not_zero() -> None:
    assert known_sum_text("committed lag", [None, None]) == "committed lag unknown"
    assert known_sum_text("total lag", [None], "groups") == "total lag unknown"
