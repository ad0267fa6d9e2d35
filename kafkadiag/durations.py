"""Durations on the command line: `500ms`, `10s`, `2m`, `1h`, or a bare number of seconds.

Kafka's own tools take milliseconds (`--timeout 5000`); kafkadiag takes seconds. A bare number
of 1000 or more is refused with that hint instead of waiting for 83 minutes.
"""

from __future__ import annotations

import re
from typing import Any

import click

_UNITS = {"ms": 0.001, "s": 1.0, "m": 60.0, "h": 3600.0}
_DURATION = re.compile(r"^\s*(?P<number>\d+(?:\.\d*)?|\.\d+)\s*(?P<unit>ms|s|m|h)?\s*$", re.IGNORECASE)
BARE_SECONDS_LIMIT = 1000


def parse_duration(text: str) -> float:
    """Seconds; ValueError naming the problem."""
    match = _DURATION.match(str(text))
    if match is None:
        raise ValueError(f"{text!r} is not a duration (examples: 500ms, 10s, 2m)")
    value = float(match.group("number"))
    unit = match.group("unit")
    if unit is None and value >= BARE_SECONDS_LIMIT:
        raise ValueError(
            f"{text} seconds looks like milliseconds (Kafka's tools take ms; kafkadiag takes seconds): "
            f"write {text}ms, or {value / 1000:g}s"
        )
    seconds = value * _UNITS[(unit or "s").lower()]
    if seconds <= 0:
        raise ValueError(f"{text!r} must be longer than zero")
    return seconds


class Duration(click.ParamType):
    name = "duration"

    def convert(self, value: Any, param: Any, ctx: Any) -> float:
        if isinstance(value, (int, float)) and not isinstance(value, bool):
            value = str(value)
        try:
            return parse_duration(value)
        except ValueError as error:
            self.fail(str(error), param, ctx)


DURATION = Duration()
