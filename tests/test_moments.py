"""Times as `lag history --at` reads them: ISO 8601 with a zone, or local time without one."""

from __future__ import annotations

import datetime
import time
from collections.abc import Iterator

import pytest

from kafkadiag.moments import parse_moment


def utc_ms(*fields: int) -> int:
    return int(datetime.datetime(*fields, tzinfo=datetime.timezone.utc).timestamp() * 1000)


@pytest.fixture
def kolkata_clock(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    # A zone 5:30 from UTC with no daylight saving: a local time read as UTC is off by hours.
    monkeypatch.setenv("TZ", "Asia/Kolkata")
    time.tzset()
    yield
    monkeypatch.undo()
    time.tzset()


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("2026-11-25T03:00:00Z", utc_ms(2026, 11, 25, 3)),
        ("2026-11-25T03:00:00.250z", utc_ms(2026, 11, 25, 3) + 250),
        ("2026-11-25T03:00:00+01:00", utc_ms(2026, 11, 25, 2)),
        ("2026-11-25T03:00:00-05:00", utc_ms(2026, 11, 25, 8)),
    ],
)
def test_a_time_with_a_zone_is_that_moment(text: str, expected: int) -> None:
    assert parse_moment(text) == expected


@pytest.mark.usefixtures("kolkata_clock")
def test_a_time_without_a_zone_is_local_time() -> None:
    assert parse_moment("2026-11-25 03:00") == utc_ms(2026, 11, 24, 21, 30)
    assert parse_moment("2026-11-25") == utc_ms(2026, 11, 24, 18, 30)


@pytest.mark.parametrize("text", ["yesterday", "", "25/11/2026 03:00", "2026-11-25T25:00:00Z"])
def test_anything_else_is_refused_with_an_example(text: str) -> None:
    with pytest.raises(ValueError, match="2026-11-25T03:00:00Z"):
        parse_moment(text)
