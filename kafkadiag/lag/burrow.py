"""Burrow's consumer lag evaluation rules, as linkedin/Burrow's current evaluator applies them.

Source: linkedin/Burrow core/internal/evaluator/caching.go (calculatePartitionStatus and the
group status) and its tests (caching_test.go), both as of commit 2676759 (2022-09-11), still
their latest change at the repository's head ced55ba (2025-10-03).

Over a window of committed-offset observations (offset, timestamp, lag at commit time; the lag
is unknown when the high watermark was), with the partition's current lag and the high
watermarks seen recently, a partition is OK unless its current lag exceeds the allowed lag;
then the first rule that holds decides:

1. STOP: the time since the last commit is greater than the time the commits span
   (now - last > last - first), unless the consumer was caught up recently (a recent high
   watermark is at or below the last committed offset). Checked before anything else: a
   consumer that was caught up long ago and stopped is still stopped.
2. REWIND: the offset went backwards and never came back to where it was before within the
   window (a rewind the consumer recovered from, as after a rebalance, is not held against it).
3. If no observation had a lag within the allowed lag (unknown lags do not count as zero):
   STALL when the offset never moved (committing without progress), else WARN when the lag
   never decreased (observations with unknown lag are skipped in that comparison).
4. OK otherwise.

A partition with no observation is OK (nothing can be told). The group's status is the worst
partition status, with STOP, STALL and REWIND counted as ERR.
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
    lag: int | None  # high watermark at that time - offset; None when the watermark was unknown


def lag_never_within(observations: Sequence[Observation], allowed_lag: int) -> bool:
    """No observation had a known lag within the allowed lag."""
    return all(observation.lag is None or observation.lag > allowed_lag for observation in observations)


def rewind_index(observations: Sequence[Observation]) -> int | None:
    """The first observation whose offset is below the one before it, if any."""
    for index in range(1, len(observations)):
        if observations[index].offset < observations[index - 1].offset:
            return index
    return None


def rewind_recovered(observations: Sequence[Observation], index: int) -> bool:
    """Whether the offset came back to where it was before the rewind at `index`."""
    before = observations[index - 1].offset
    return any(observation.offset >= before for observation in observations[index:])


def offsets_stopped(observations: Sequence[Observation], now_ms: int) -> bool:
    first = observations[0].timestamp_ms
    last = observations[-1].timestamp_ms
    return (now_ms - last) > (last - first)


def caught_up_recently(observations: Sequence[Observation], recent_high_watermarks: Sequence[int]) -> bool:
    """A recent high watermark at or below the last committed offset: lag was zero lately."""
    last = observations[-1].offset
    return any(mark <= last for mark in recent_high_watermarks)


def offsets_stalled(observations: Sequence[Observation]) -> bool:
    return all(later.offset == earlier.offset for earlier, later in zip(observations, observations[1:]))


def lag_not_decreasing(observations: Sequence[Observation]) -> bool:
    known = [observation.lag for observation in observations if observation.lag is not None]
    return all(later >= earlier for earlier, later in zip(known, known[1:]))


def partition_status(
    observations: Sequence[Observation],
    current_lag: int,
    now_ms: int,
    recent_high_watermarks: Sequence[int] = (),
    allowed_lag: int = 0,
) -> str:
    if not observations or current_lag <= allowed_lag:
        return OK
    if offsets_stopped(observations, now_ms) and not caught_up_recently(observations, recent_high_watermarks):
        return STOP
    rewound = rewind_index(observations)
    if rewound is not None and not rewind_recovered(observations, rewound):
        return REWIND
    if lag_never_within(observations, allowed_lag):
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
