"""Points in time on the command line (`lag history --at`): ISO 8601, as `date -Is` prints them.

`2026-11-25T03:00:00Z`, `2026-11-25T03:00:00+01:00`, `2026-11-25 03:00`, `2026-11-25`. A time
without a zone is local time, the clock of the shell it was typed in.
"""

from __future__ import annotations

import datetime
from typing import Any

import click


def parse_moment(text: str) -> int:
    """Unix milliseconds; ValueError naming the problem."""
    cleaned = str(text).strip()
    # Python before 3.11 does not read a trailing "Z" for UTC.
    if cleaned[-1:] in ("Z", "z"):
        cleaned = cleaned[:-1] + "+00:00"
    try:
        moment = datetime.datetime.fromisoformat(cleaned)
    except ValueError:
        raise ValueError(
            f"{text!r} is not an ISO 8601 time (examples: 2026-11-25T03:00:00Z, 2026-11-25 03:00)"
        ) from None
    if moment.tzinfo is None:
        moment = moment.astimezone()  # local time
    return int(moment.timestamp() * 1000)


class Moment(click.ParamType):
    name = "time"

    def convert(self, value: Any, param: Any, ctx: Any) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            return value
        try:
            return parse_moment(value)
        except ValueError as error:
            self.fail(str(error), param, ctx)


MOMENT = Moment()
