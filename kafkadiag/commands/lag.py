"""`kafkadiag lag` and `kafkadiag lag history`: snapshots -> evaluation -> reporter -> exit code.

Exit codes: 0 everything was read; 3 something could not be (a source unreachable, a group or
topic unknown, a partition whose lag is unknown, the consumer's metrics): the report still shows
what was read, with each gap flagged where it is.

With a metrics source (--pid, --jmx, --jolokia, --prometheus), the consumer's own fetcher metrics
are compared against the lag just computed (no second read of ZooKeeper or the brokers) and each
partition gets the fetcher's columns (kafkadiag.maxlag.columns).
"""

from __future__ import annotations

import dataclasses
import json
import os
import sys
import time
from collections import deque
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any, TextIO

from kafkadiag import boundedjson
from kafkadiag.collect.errors import BrokerUnreachableError, SnapshotReadError, ZooKeeperUnreachableError
from kafkadiag.collect.gather import Collector, LagTarget
from kafkadiag.console import warn
from kafkadiag.errors import InputUnreadableError, UsageError
from kafkadiag.exitcodes import ExitCode
from kafkadiag.lag.model import LagReport
from kafkadiag.lag.snapshot import SOURCE_KAFKA, SOURCE_ZOOKEEPER, Snapshot, from_json, to_json
from kafkadiag.lag.window import evaluate_window, snapshots_up_to
from kafkadiag.report.output import report_stream

if TYPE_CHECKING:
    from kafkadiag.collect.metrics import MetricsSource
    from kafkadiag.collect.retention import Keep
    from kafkadiag.maxlag.model import MaxLagReport

RECORD_FILE = "lag-snapshots.jsonl"
FORMATS = ("table", "json", "prometheus")


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


def write_report(
    stream: TextIO,
    report: LagReport,
    output_format: str,
    fetcher: MaxLagReport | None = None,
    cluster_name: str | None = None,
) -> None:
    if output_format == "json":
        from kafkadiag.report.lag_json import write_json

        write_json(stream, report, fetcher)
    elif output_format == "prometheus":
        from kafkadiag.report.lag_prometheus import write_prometheus

        write_prometheus(stream, report, fetcher, cluster_name)
    else:
        from kafkadiag.report.lag_table import render_lag

        render_lag(stream, report, fetcher)


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


def take_samples(
    collector: Collector,
    samples: int,
    interval_s: float,
    record_dir: str | None = None,
    sleep: Callable[[float], None] = time.sleep,
    on_sample: Callable[[int, Snapshot], None] | None = None,
    keep: Keep | None = None,
) -> list[Snapshot]:
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


def record_snapshot(record_dir: str, snapshot: Snapshot, keep: Keep | None = None) -> None:
    """Append one JSON line; a reader never sees half a line (one write of the whole line).
    With `keep` (--keep), what is past its age or size is then dropped (collect/retention.py)."""
    try:
        os.makedirs(record_dir, exist_ok=True)
        line = json.dumps(to_json(snapshot), separators=(",", ":")) + "\n"
        descriptor = os.open(
            os.path.join(record_dir, RECORD_FILE), os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o666
        )
        try:
            os.write(descriptor, line.encode("utf-8"))
        finally:
            os.close(descriptor)
        if keep is not None:
            from kafkadiag.collect.retention import prune

            prune(os.path.join(record_dir, RECORD_FILE), keep, snapshot.taken_at_ms)
    except OSError as error:
        raise InputUnreadableError(
            f"cannot record into {record_dir}: {error.strerror or error}",
            help_text="Choose a directory this user can write to for --record.",
        ) from None


def read_recorded(record_dir: str) -> tuple[list[Snapshot], list[str]]:
    """Snapshots recorded in record_dir (oldest first) and problems with lines that were skipped."""
    path = os.path.join(record_dir, RECORD_FILE) if os.path.isdir(record_dir) else record_dir
    snapshots: list[Snapshot] = []
    problems: list[str] = []
    try:
        with open(path, encoding="utf-8") as handle:
            for number, line in enumerate(handle, start=1):
                if not line.strip():
                    continue
                try:
                    snapshots.append(from_json(boundedjson.loads(line)))
                except (ValueError, KeyError, TypeError) as error:
                    problems.append(f"{path}:{number}: skipped, not a recorded snapshot ({error})")
    except OSError as error:
        raise SnapshotReadError(f"cannot read {path}: {error.strerror or error}") from None
    if not snapshots:
        raise SnapshotReadError(f"no recorded snapshot in {path}")
    snapshots.sort(key=lambda snapshot: snapshot.taken_at_ms)
    return snapshots, problems


def exit_code_of(report: LagReport) -> int:
    return int(ExitCode.INPUT_UNREADABLE if report.partial else ExitCode.OK)


def explain_partial(report: LagReport) -> None:
    """Say on stderr what could not be read; the report shows where."""
    from kafkadiag.console import report_error

    for error in report.errors:
        warn(error)
    missing = [group.group for group in report.groups if group.exists is False]
    unread = [group.group for group in report.groups if group.exists is None]
    unknown = sum(1 for group in report.groups for partition in group.partitions if partition.partial)
    parts = [f"{_SOURCE_NAMES[source]} unreachable" for source, _ in report.unreachable]
    if unread:
        parts.append(f"group(s) not read: {', '.join(unread)}")
    if missing:
        parts.append(f"group(s) not found: {', '.join(missing)}")
    if unknown:
        parts.append(f"{unknown} partition(s) with unknown lag (flagged in the report)")
    incomplete = [group for group in report.groups if group.exists and group.errors]
    if incomplete:
        named = [f"{group.group} ({group.errors[0]})" for group in incomplete[:5]]
        more = f" and {len(incomplete) - 5} more" if len(incomplete) > 5 else ""
        parts.append(f"group(s) read incompletely: {', '.join(named)}{more}")
    if report.errors and not parts:
        parts.append("some data could not be read")
    if parts:
        advice = [_SOURCE_HELP[source] for source in dict(report.unreachable)] or [
            "Check that the groups and topics exist, that ZooKeeper and the brokers are "
            "reachable (see the warnings above) and that the principal of --command-config may "
            "describe them (ACLs); raise --timeout on slow networks."
        ]
        report_error(InputUnreadableError("results are partial: " + "; ".join(parts), " ".join(advice)))


_SOURCE_NAMES = {SOURCE_ZOOKEEPER: "ZooKeeper", SOURCE_KAFKA: "the brokers"}
_SOURCE_HELP = {
    SOURCE_ZOOKEEPER: ZooKeeperUnreachableError.HELP_TEXT,
    SOURCE_KAFKA: BrokerUnreachableError.HELP_TEXT,
}


def run_lag(
    target: LagTarget,
    output_format: str,
    output: str | None,
    samples: int = 1,
    interval_s: float = 10.0,
    watch: bool = False,
    record_dir: str | None = None,
    fetcher_request: FetcherRequest | None = None,
    allowed_lag: int = 0,
    keep: Keep | None = None,
    cluster_name: str | None = None,
) -> int:
    if samples < 1:
        raise UsageError("--samples must be at least 1")
    if interval_s < 0:
        raise UsageError("--interval must not be negative")
    if fetcher_request is not None:
        fetcher_request.validate()
    with Collector(target) as collector:
        if watch:
            return _watch(
                collector,
                output_format,
                max(samples, 2),
                interval_s,
                record_dir,
                fetcher_request,
                allowed_lag,
                keep,
            )
        with _SampleProgress(samples) as progress:
            snapshots = take_samples(
                collector, samples, interval_s, record_dir, on_sample=progress.update, keep=keep
            )
    # The metrics are read right after the last snapshot, so that both describe the same moment.
    report, fetcher = with_fetcher(evaluate_window(snapshots, allowed_lag), fetcher_request)
    with report_stream(output, output_format) as stream:
        write_report(stream, report, output_format, fetcher, cluster_name)
    code = exit_code_of(report)
    if code:
        explain_partial(report)
    return code


def run_history(
    record_dir: str,
    groups: Sequence[str],
    output_format: str,
    output: str | None,
    window: int,
    allowed_lag: int = 0,
    at_ms: int | None = None,
) -> int:
    """`at_ms`: evaluate as of that time, over the `window` snapshots taken up to it."""
    if window < 1:
        raise UsageError("--samples must be at least 1")
    snapshots, problems = read_recorded(record_dir)
    if at_ms is not None:
        try:
            snapshots = snapshots_up_to(snapshots, at_ms)
        except ValueError as error:
            raise SnapshotReadError(str(error), help_text="Give --at a time within the recording.") from None
    for problem in problems:
        warn(problem)
    if groups:
        import dataclasses

        wanted = set(groups)
        snapshots = [
            dataclasses.replace(
                snapshot, groups=tuple(group for group in snapshot.groups if group.group in wanted)
            )
            for snapshot in snapshots
        ]
    report = evaluate_window(snapshots[-window:], allowed_lag, at_ms)
    with report_stream(output, output_format) as stream:
        write_report(stream, report, output_format)
    code = exit_code_of(report)
    if groups:
        found = {group.group for group in report.groups}
        missing = [group for group in groups if group not in found]
        if missing:
            from kafkadiag.console import report_error

            report_error(SnapshotReadError(f"group(s) not in the recorded snapshots: {', '.join(missing)}"))
            return int(ExitCode.INPUT_UNREADABLE)
    if code:
        explain_partial(report)
    return code


class _SampleProgress:
    """A progress bar on an interactive stderr while samples are taken."""

    def __init__(self, samples: int) -> None:
        self.enabled = samples > 1 and sys.stderr.isatty()
        self.samples = samples
        self._progress: object = None
        self._task: object = None

    def __enter__(self) -> _SampleProgress:
        if self.enabled:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

            from kafkadiag.console import stderr_console

            progress = Progress(
                TextColumn("sampling"),
                BarColumn(),
                MofNCompleteColumn(),
                console=stderr_console(),
                transient=True,
            )
            progress.start()
            self._task = progress.add_task("sampling", total=self.samples)
            self._progress = progress
        return self

    def update(self, index: int, snapshot: Snapshot) -> None:
        if self._progress is not None:
            self._progress.update(self._task, completed=index + 1)  # type: ignore[attr-defined]

    def __exit__(self, *exc: object) -> None:
        if self._progress is not None:
            self._progress.stop()  # type: ignore[attr-defined]


class _WatchView:
    """Where --watch shows each refresh: redrawn in place on a terminal; appended, one whole
    view after another, when standard output is a pipe or a file (a log keeps every refresh,
    where a live display would show only the last one, at the end)."""

    def __init__(self, console: Any) -> None:
        self.console = console
        self._live: Any = None

    def __enter__(self) -> _WatchView:
        if self.console.is_terminal:
            from rich.live import Live

            self._live = Live(console=self.console, auto_refresh=False, screen=False)
            self._live.start()
        return self

    def show(self, text: str) -> None:
        from rich.text import Text

        if self._live is not None:
            self._live.update(Text(text), refresh=True)
        else:
            self.console.print(Text(text), end="")
            self.console.file.flush()

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.stop()


def _watch(
    collector: Collector,
    output_format: str,
    window: int,
    interval_s: float,
    record_dir: str | None,
    fetcher_request: FetcherRequest | None = None,
    allowed_lag: int = 0,
    keep: Keep | None = None,
) -> int:
    """Re-evaluate every interval over a sliding window of snapshots until interrupted."""
    import io

    from kafkadiag.console import stdout_console

    snapshots: deque[Snapshot] = deque(maxlen=window)
    report: LagReport | None = None
    console = stdout_console()
    try:
        with _WatchView(console) as view:
            while True:
                started = time.monotonic()
                snapshot = collector.snapshot()
                snapshots.append(snapshot)
                if record_dir is not None:
                    record_snapshot(record_dir, snapshot, keep)
                report, fetcher = with_fetcher(evaluate_window(list(snapshots), allowed_lag), fetcher_request)
                buffer = io.StringIO()
                shown = "table" if output_format != "prometheus" else output_format
                write_report(buffer, report, shown, fetcher)
                stamp = time.strftime("%H:%M:%S", time.localtime(snapshot.taken_at_ms / 1000))
                header = f"kafkadiag lag --watch: {stamp}, every {interval_s:g}s, Ctrl-C to stop\n\n"
                view.show(header + buffer.getvalue())
                time.sleep(max(interval_s - (time.monotonic() - started), 0.0))
    except KeyboardInterrupt:
        if report is None:  # stopped before anything was shown: an interrupt, not a clean report
            raise
    return exit_code_of(report)
