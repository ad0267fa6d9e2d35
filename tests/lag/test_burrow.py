"""Burrow's evaluation rules on hand-computed windows (linkedin/Burrow core/internal/evaluator)."""

from __future__ import annotations

import pytest

from kafkadiag.lag import burrow
from kafkadiag.lag.burrow import Observation as O  # noqa: N817 - short, for readable tables


@pytest.mark.parametrize(
    ("name", "observations", "current_lag", "now_ms", "expected"),
    [
        # Rule 1: lag zero at any point, or now: OK whatever else happened.
        ("lag was zero once", [O(10, 1000, 5), O(10, 2000, 0), O(8, 3000, 7)], 7, 3500, "OK"),
        ("current lag zero", [O(10, 1000, 5), O(10, 2000, 5)], 0, 9000, "OK"),
        # Rule 2: the offset went backwards: REWIND, before any other rule.
        ("rewind", [O(100, 1000, 5), O(90, 2000, 15), O(95, 3000, 10)], 10, 100000, "REWIND"),
        # Rule 3: now - last (7000) > last - first (2000): STOP.
        ("stop", [O(10, 1000, 5), O(11, 2000, 5), O(12, 3000, 5)], 5, 10000, "STOP"),
        # Rule 3 not met (now - last = 500 <= 2000); rule 4: offset never moved: STALL.
        ("stall", [O(10, 1000, 5), O(10, 2000, 6), O(10, 3000, 7)], 7, 3500, "STALL"),
        # Rule 5: offsets move, lag never decreases: WARN.
        ("lag not decreasing", [O(10, 1000, 5), O(12, 2000, 5), O(14, 3000, 9)], 9, 3500, "WARN"),
        # Lag decreased once: OK.
        ("lag decreasing once", [O(10, 1000, 5), O(12, 2000, 8), O(20, 3000, 3)], 3, 3500, "OK"),
        # A single observation: last - first = 0, so any time after it is a STOP (Burrow's rule).
        ("single observation", [O(10, 1000, 5)], 5, 1001, "STOP"),
        ("single observation at now", [O(10, 1000, 5)], 5, 1000, "STALL"),
        ("no observation", [], 5, 1000, "OK"),
    ],
)
def test_partition_status(
    name: str, observations: list[O], current_lag: int, now_ms: int, expected: str
) -> None:
    assert burrow.partition_status(observations, current_lag, now_ms) == expected, name


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        ([], "OK"),
        (["OK", "OK"], "OK"),
        (["OK", "WARN"], "WARN"),
        (["WARN", "STALL"], "ERR"),
        (["STOP"], "ERR"),
        (["REWIND", "WARN"], "ERR"),
    ],
)
def test_group_status_is_the_worst_capped_at_err(statuses: list[str], expected: str) -> None:
    assert burrow.group_status(statuses) == expected
