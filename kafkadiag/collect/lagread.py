"""Lag read from a cluster: the one place that opens a Collector on a LagTarget, for `lag`,
`check`, `maxlag`'s checker lag and `diagnose`. Snapshots are raw offsets with their provenance;
the lag is computed from them in kafkadiag.lag."""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import TYPE_CHECKING

from kafkadiag.collect.gather import Collector, LagTarget
from kafkadiag.collect.lagrecord import record_snapshot
from kafkadiag.lag.snapshot import Snapshot

if TYPE_CHECKING:
    from kafkadiag.collect.retention import Keep


def read_snapshot(target: LagTarget) -> Snapshot:
    """One snapshot of the target's groups, the connections closed after it."""
    with Collector(target) as collector:
        return collector.snapshot()


def take_samples(
    collector: Collector,
    samples: int,
    interval_s: float,
    record_dir: str | None = None,
    sleep: Callable[[float], None] = time.sleep,
    on_sample: Callable[[int, Snapshot], None] | None = None,
    keep: Keep | None = None,
) -> list[Snapshot]:
    """`samples` snapshots `interval_s` apart (the time a snapshot takes counts in the interval),
    each appended to the record in `record_dir` when one is named (and pruned to `keep`)."""
    snapshots: list[Snapshot] = []
    for index in range(samples):
        started = time.monotonic()
        snapshot = collector.snapshot()
        snapshots.append(snapshot)
        if record_dir is not None:
            record_snapshot(record_dir, snapshot, keep)
        if on_sample is not None:
            on_sample(index, snapshot)
        if index < samples - 1:
            sleep(max(interval_s - (time.monotonic() - started), 0.0))
    return snapshots
