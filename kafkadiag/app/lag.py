"""Lag: committed offsets against high watermarks, over one or more snapshots, with the
consumer's own fetcher metrics beside them when a metrics source is named. `kafkadiag lag`,
`lag history`, `check`, `maxlag`'s checker lag and `diagnose` read it here."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from kafkadiag.collect.errors import SnapshotReadError
from kafkadiag.errors import InputUnreadableError, UsageError
from kafkadiag.lag.model import LagReport
from kafkadiag.lag.snapshot import Snapshot
from kafkadiag.lag.window import evaluate_window, snapshots_up_to

if TYPE_CHECKING:
    from kafkadiag.collect.gather import LagTarget
    from kafkadiag.collect.metrics import MetricsSource
    from kafkadiag.collect.retention import Keep
    from kafkadiag.lag.check import CheckPolicy, CheckResult
    from kafkadiag.maxlag.model import MaxLagReport


@dataclasses.dataclass(frozen=True)
class FetcherRequest:
    """Where the consumer's own metrics come from, to show the fetcher beside the checker lag."""

    source: MetricsSource
    consumer_config: str | None = None
    lag_threshold: int | None = None

    def validate(self) -> None:
        self.source.kind()  # exactly one source, a positive timeout: UsageError otherwise
        if self.lag_threshold is not None and self.lag_threshold < 0:
            raise UsageError("--lag-threshold must not be negative")


def read_lag(target: LagTarget) -> LagReport:
    """The lag of one snapshot of the target's groups."""
    from kafkadiag.collect.lagread import read_snapshot
    from kafkadiag.lag.compute import compute_lag

    return compute_lag(read_snapshot(target))


def sampled_lag(
    target: LagTarget,
    samples: int = 1,
    interval_s: float = 10.0,
    record_dir: str | None = None,
    fetcher_request: FetcherRequest | None = None,
    allowed_lag: int = 0,
    on_sample: Callable[[int, Snapshot], None] | None = None,
    keep: Keep | None = None,
) -> tuple[LagReport, MaxLagReport | None]:
    """`samples` snapshots evaluated as one window, and the fetcher's comparison against it."""
    from kafkadiag.collect.gather import Collector
    from kafkadiag.collect.lagread import take_samples

    validate_sampling(samples, interval_s, fetcher_request)
    with Collector(target) as collector:
        snapshots = take_samples(collector, samples, interval_s, record_dir, on_sample=on_sample, keep=keep)
    # The metrics are read right after the last snapshot, so that both describe the same moment.
    return with_fetcher(evaluated(snapshots, allowed_lag), fetcher_request)


def checked_lag(
    target: LagTarget,
    policy: CheckPolicy,
    samples: int = 1,
    interval_s: float = 10.0,
    allowed_lag: int = 0,
    on_sample: Callable[[int, Snapshot], None] | None = None,
) -> tuple[CheckResult, LagReport]:
    """`samples` snapshots evaluated as one window and judged against the check's thresholds;
    `on_sample` is told each snapshot as it is taken (the progress between samples)."""
    from kafkadiag.collect.gather import Collector
    from kafkadiag.collect.lagread import take_samples
    from kafkadiag.lag.check import check_report

    if samples < 1:
        raise UsageError("--samples must be at least 1")
    if policy.needs_samples() and samples < 2:
        raise UsageError(
            "--max-time-lag and --worst-status (or max_time_lag / worst_status in --config) need rates: "
            "pass --samples 2 or more (and an --interval)"
        )
    with Collector(target) as collector:
        snapshots = take_samples(collector, samples, interval_s, on_sample=on_sample)
    report = evaluated(snapshots, allowed_lag)
    return check_report(report, policy), report


def evaluated(snapshots: Sequence[Snapshot], allowed_lag: int, now_ms: int | None = None) -> LagReport:
    """The window's evaluation (kafkadiag.lag.window), the garbage collector held off meanwhile:
    it builds a tuple per partition, 10,000s of them and none in a cycle, and each collection
    walked every object the scan left alive."""
    from kafkadiag.collect.collections_paused import few_collections

    with few_collections():
        return evaluate_window(snapshots, allowed_lag, now_ms)


def validate_sampling(samples: int, interval_s: float, fetcher_request: FetcherRequest | None) -> None:
    if samples < 1:
        raise UsageError("--samples must be at least 1")
    if interval_s < 0:
        raise UsageError("--interval must not be negative")
    if fetcher_request is not None:
        fetcher_request.validate()


def with_fetcher(report: LagReport, request: FetcherRequest | None) -> tuple[LagReport, MaxLagReport | None]:
    """The comparison of the consumer's metrics against `report`; when the metrics cannot be read,
    the lag report is still whole and says why in its errors (exit 3)."""
    if request is None:
        return report, None
    from kafkadiag.app.maxlag import compare_with_lag

    try:
        fetcher = compare_with_lag(request.source, report, request.consumer_config, request.lag_threshold)
    except InputUnreadableError as error:
        problem = f"fetcher metrics not read: {error.message}"
        if error.help_text:
            problem += f" ({error.help_text})"
        return dataclasses.replace(report, errors=(*report.errors, problem)), None
    return report, fetcher


@dataclasses.dataclass(frozen=True)
class LagHistory:
    report: LagReport
    problems: tuple[str, ...]  # recorded lines that were skipped, and why
    missing_groups: tuple[str, ...]  # groups asked for that no recorded snapshot holds


def lag_history(
    record_dir: str,
    groups: Sequence[str] = (),
    window: int = 10,
    allowed_lag: int = 0,
    at_ms: int | None = None,
) -> LagHistory:
    """The recorded snapshots evaluated over the last `window` of them (taken up to `at_ms`)."""
    from kafkadiag.collect.lagrecord import read_recorded

    if window < 1:
        raise UsageError("--samples must be at least 1")
    snapshots, problems = read_recorded(record_dir)
    if at_ms is not None:
        try:
            snapshots = snapshots_up_to(snapshots, at_ms)
        except ValueError as error:
            raise SnapshotReadError(str(error), help_text="Give --at a time within the recording.") from None
    if groups:
        wanted = set(groups)
        snapshots = [
            dataclasses.replace(
                snapshot, groups=tuple(group for group in snapshot.groups if group.group in wanted)
            )
            for snapshot in snapshots
        ]
    report = evaluated(snapshots[-window:], allowed_lag, at_ms)
    found = {group.group for group in report.groups}
    missing = tuple(group for group in groups if group not in found)
    return LagHistory(report, tuple(problems), missing)
