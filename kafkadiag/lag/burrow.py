"""Burrow's consumer lag evaluation rules, exactly as linkedin/Burrow's evaluator applies them.

Source: Burrow core/internal/evaluator/caching.go (calculatePartitionStatus and the group
status), and the wiki page "Consumer Lag Evaluation Rules". Over a window of committed-offset
observations (offset, timestamp, lag at commit time), for one partition:

1. If the current lag is 0, or the lag was 0 in any observation, the partition is OK.
   Otherwise, in order of severity, the first rule that holds decides:
2. REWIND: the offset decreased from one observation to the next.
3. STOP: the time since the last observation is greater than the time the window spans
   (now - last > last - first): the consumer stopped committing.
4. STALL: the offset is the same in every observation (committing without progress).
5. WARN: the lag never decreased from one observation to the next (the consumer is slow).
6. OK otherwise.

A partition with no observation is OK (Burrow cannot tell anything). The group's status is the
worst partition status, with STOP, STALL and REWIND counted as ERR. Burrow's completeness is the
fraction of the window's slots that hold an observation.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

OK = "OK"
WARN = "WARN"
ERR = "ERR"
STOP = "STOP"
STALL = "STALL"
REWIND = "REWIND"

# Burrow's StatusConstant order: NOTFOUND 0, OK 1, WARN 2, ERR 3, STOP 4, STALL 5, REWIND 6.
SEVERITY = {OK: 1, WARN: 2, ERR: 3, STOP: 4, STALL: 5, REWIND: 6}
PARTITION_STATUSES = (OK, WARN, STOP, STALL, REWIND)
GROUP_STATUSES = (OK, WARN, ERR)
GROUP_STATUS_VALUES = {OK: 0, WARN: 1, ERR: 2}


@dataclass(frozen=True)
class Observation:
    """One committed offset as the evaluator sees it."""

    offset: int
    timestamp_ms: int  # when it was committed (or observed, when the commit time is unknown)
    lag: int  # high watermark at that time - offset


def is_lag_always_not_zero(observations: Sequence[Observation]) -> bool:
    return all(observation.lag != 0 for observation in observations)


def offsets_rewind(observations: Sequence[Observation]) -> bool:
    return any(later.offset < earlier.offset for earlier, later in zip(observations, observations[1:]))


def offsets_stopped(observations: Sequence[Observation], now_ms: int) -> bool:
    first = observations[0].timestamp_ms
    last = observations[-1].timestamp_ms
    return (now_ms - last) > (last - first)


def offsets_stalled(observations: Sequence[Observation]) -> bool:
    return all(later.offset == earlier.offset for earlier, later in zip(observations, observations[1:]))


def lag_not_decreasing(observations: Sequence[Observation]) -> bool:
    return all(later.lag >= earlier.lag for earlier, later in zip(observations, observations[1:]))


def partition_status(observations: Sequence[Observation], current_lag: int, now_ms: int) -> str:
    if not observations:
        return OK
    if current_lag > 0 and is_lag_always_not_zero(observations):
        if offsets_rewind(observations):
            return REWIND
        if offsets_stopped(observations, now_ms):
            return STOP
        if offsets_stalled(observations):
            return STALL
        if lag_not_decreasing(observations):
            return WARN
    return OK


def group_status(statuses: Sequence[str]) -> str:
    worst = OK
    for status in statuses:
        capped = ERR if SEVERITY[status] > SEVERITY[ERR] else status
        if SEVERITY[capped] > SEVERITY[worst]:
            worst = capped
    return worst
