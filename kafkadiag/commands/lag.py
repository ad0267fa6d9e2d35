"""`kafkadiag lag` and `kafkadiag lag history`: snapshots -> evaluation -> reporter -> exit code.

Exit codes: 0 everything was read; 3 something could not be (a source unreachable, a group or
topic unknown, a partition whose lag is unknown, the consumer's metrics): the report still shows
what was read, with each gap flagged where it is.

With a metrics source (--pid, --jmx, --jolokia, --prometheus), the consumer's own fetcher metrics
are compared against the lag just computed (no second read of ZooKeeper or the brokers) and each
partition gets the fetcher's columns (kafkadiag.maxlag.columns).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, TextIO

import click

from kafkadiag.commands.completion import complete_directories
from kafkadiag.commands.formats import FormatChoice, format_option
from kafkadiag.commands.input_bounds import input_bound_options
from kafkadiag.commands.options import (
    LAG_FORMATS,
    allowed_lag_option,
    connection_options,
    metrics_source,
    metrics_source_options,
    output_option,
    reader_may_leave,
    sample_interval_option,
)
from kafkadiag.commands.targets import lag_target
from kafkadiag.console import report_error, warn
from kafkadiag.errors import InputUnreadableError
from kafkadiag.exitcodes import ExitCode
from kafkadiag.exporter.options import exporter_options, pop_exporter_options
from kafkadiag.moments import MOMENT

if TYPE_CHECKING:
    from kafkadiag.app.lag import FetcherRequest
    from kafkadiag.collect.gather import LagTarget
    from kafkadiag.lag.model import LagReport


if TYPE_CHECKING:
    from kafkadiag.collect.retention import Keep
    from kafkadiag.exporter.options import ExporterOptions
    from kafkadiag.maxlag.model import MaxLagReport

FORMATS = ("table", "json", "prometheus")


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


def exit_code_of(report: LagReport) -> int:
    return int(ExitCode.INPUT_UNREADABLE if report.partial else ExitCode.OK)


def explain_partial(report: LagReport) -> None:
    """Say on stderr what could not be read; the report shows where."""
    for error in report.errors:
        warn(error)
    missing = [group.group for group in report.groups if group.exists is False]
    unread = [group.group for group in report.groups if group.exists is None]
    unknown = sum(1 for group in report.groups for partition in group.partitions if partition.partial)
    source_names, source_help = _source_words()
    parts = [f"{source_names[source]} {_unread_words(error)}" for source, error in report.unreachable]
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
        advice = [_unread_help(error, source_help[source]) for source, error in report.unreachable] or [
            "Check that the groups and topics exist, that ZooKeeper and the brokers are "
            "reachable (see the warnings above) and that the principal of --command-config may "
            "describe them (ACLs); raise --timeout on slow networks."
        ]
        report_error(InputUnreadableError("results are partial: " + "; ".join(parts), " ".join(advice)))


def _unread_words(error: str) -> str:
    """Why a source was not read: a broker that refused the credentials was reached."""
    from kafkadiag.lag.snapshot import REFUSED_CREDENTIALS

    return REFUSED_CREDENTIALS if REFUSED_CREDENTIALS in error else "unreachable"


def _unread_help(error: str, reaching: str) -> str:
    from kafkadiag.collect.errors import BrokerRefusedCredentialsError
    from kafkadiag.lag.snapshot import REFUSED_CREDENTIALS

    return BrokerRefusedCredentialsError.HELP_TEXT if REFUSED_CREDENTIALS in error else reaching


def _source_words() -> tuple[dict[str, str], dict[str, str]]:
    """Each lag source's name and the help for reaching it. Imported here, not at the top: every
    command loads this module for its options, and `dump analyze` reads neither source."""
    from kafkadiag.collect.errors import BrokerUnreachableError, ZooKeeperUnreachableError
    from kafkadiag.lag.snapshot import SOURCE_KAFKA, SOURCE_ZOOKEEPER

    names = {SOURCE_ZOOKEEPER: "ZooKeeper", SOURCE_KAFKA: "the brokers"}
    help_texts = {
        SOURCE_ZOOKEEPER: ZooKeeperUnreachableError.HELP_TEXT,
        SOURCE_KAFKA: BrokerUnreachableError.HELP_TEXT,
    }
    return names, help_texts


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
    from kafkadiag.app.lag import sampled_lag, validate_sampling
    from kafkadiag.collect.gather import Collector
    from kafkadiag.commands.lag_views import watch_lag
    from kafkadiag.progress import SampleProgress
    from kafkadiag.report.output import report_stream

    if watch:
        validate_sampling(samples, interval_s, fetcher_request)
        with Collector(target) as collector:
            window = max(samples, 2)
            return watch_lag(
                collector, output_format, window, interval_s, record_dir, fetcher_request, allowed_lag, keep
            )
    with SampleProgress(samples, interval_s) as progress:
        report, fetcher = sampled_lag(
            target, samples, interval_s, record_dir, fetcher_request, allowed_lag, progress.update, keep
        )
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
    from kafkadiag.app.lag import lag_history
    from kafkadiag.collect.errors import SnapshotReadError
    from kafkadiag.report.output import report_stream

    history = lag_history(record_dir, groups, window, allowed_lag, at_ms)
    for problem in history.problems:
        warn(problem)
    report = history.report
    with report_stream(output, output_format) as stream:
        write_report(stream, report, output_format)
    code = exit_code_of(report)
    if history.missing_groups:
        missing = ", ".join(history.missing_groups)
        report_error(SnapshotReadError(f"group(s) not in the recorded snapshots: {missing}"))
        return int(ExitCode.INPUT_UNREADABLE)
    if code:
        explain_partial(report)
    return code


@click.group(
    "lag", invoke_without_command=True, short_help="Show committed offsets, lag, owners and progress."
)
@connection_options
@format_option(LAG_FORMATS, "table for people, json (schema kafkadiag.lag), prometheus (textfile collector).")
@output_option
@click.option(
    "--samples",
    type=int,
    default=1,
    show_default=True,
    help="Snapshots to take; 2+ adds rates, time lag, time to catch up and Burrow statuses.",
)
@sample_interval_option
@allowed_lag_option
@click.option(
    "--watch",
    is_flag=True,
    help="Live view: re-evaluate every --interval until Ctrl-C "
    "(into a pipe or file: every refresh, one after another).",
)
@click.option(
    "--record",
    "record_dir",
    default=None,
    shell_complete=complete_directories,
    help="Append each snapshot as a JSON line to DIR/lag-snapshots.jsonl (see `lag history`).",
)
@metrics_source_options
@exporter_options
@click.pass_context
def lag_command(
    ctx: click.Context,
    output_format: str,
    output: str | None,
    samples: int,
    interval: float,
    allowed_lag: int,
    watch: bool,
    record_dir: str | None,
    consumer_config: str | None,
    lag_threshold: int | None,
    **connection: Any,
) -> int | None:
    """Committed offsets, lag, owners and progress per group, topic and partition.

    Reads old-consumer groups from ZooKeeper (--zookeeper) and Kafka-stored groups from the
    brokers (--bootstrap-server); read-only. With a metrics source (--pid, --jmx, --jolokia,
    --prometheus) each partition also shows the consumer's own fetcher lag, the gap, its stream's
    queue fill and the client's verdict (as `kafkadiag maxlag`). Exit 0 when everything was read,
    3 when something could not be (flagged in the report). Full documentation: docs/lag.md.
    """
    from kafkadiag.app.lag import FetcherRequest

    if ctx.invoked_subcommand is not None:
        return None

    no_start_agent = connection["no_start_agent"]
    export = pop_exporter_options(connection, record_dir, watch, output)
    source = metrics_source(connection, connection["timeout"])
    target = lag_target(**connection)
    fetcher_request = None
    if source is not None:
        fetcher_request = FetcherRequest(source, consumer_config, lag_threshold)
    elif consumer_config is not None or lag_threshold is not None or no_start_agent:
        raise click.UsageError(
            "--consumer-config, --lag-threshold and --no-start-agent need a metrics source: "
            "--pid, --jmx, --jolokia or --prometheus"
        )
    if export.serve is not None:
        return _serve(target, export.serve, export, samples, allowed_lag, record_dir, fetcher_request)
    return reader_may_leave(
        lambda: run_lag(
            target,
            output_format,
            output,
            samples=samples,
            interval_s=interval,
            watch=watch,
            record_dir=record_dir,
            fetcher_request=fetcher_request,
            allowed_lag=allowed_lag,
            keep=export.keep,
            cluster_name=export.cluster_name,
        )
    )


def _serve(
    target: LagTarget,
    address: str,
    export: ExporterOptions,
    samples: int,
    allowed_lag: int,
    record_dir: str | None,
    fetcher_request: FetcherRequest | None,
) -> int:
    """`--serve ADDRESS`: answer Prometheus' scrapes there until stopped."""
    from kafkadiag.exporter.run import run_serve
    from kafkadiag.exporter.scrapes import ServeOptions

    window = samples if samples > 1 else 10  # Burrow's default window
    serve = ServeOptions(
        export.min_interval_s, window, allowed_lag, export.cluster_name, record_dir, export.keep
    )
    return run_serve(target, address, serve, fetcher_request)


@lag_command.command("history", short_help="Evaluate recorded lag snapshots offline.")
@click.argument("record_dir", shell_complete=complete_directories)
@click.option("--group", "groups", multiple=True, help="Only these groups (repeatable).")
@click.option(
    "--samples",
    type=int,
    default=10,
    show_default=True,
    help="Evaluate over the last N recorded snapshots (Burrow's default window is 10).",
)
@click.option(
    "--at",
    "at_ms",
    type=MOMENT,
    default=None,
    help="Evaluate as of this time (ISO 8601, e.g. 2026-11-25T03:00:00Z; no zone: local time).",
)
@allowed_lag_option
@click.option("--format", "output_format", type=FormatChoice(LAG_FORMATS), default="table", show_default=True)
@output_option
@input_bound_options
def lag_history_command(
    record_dir: str,
    groups: tuple[str, ...],
    samples: int,
    at_ms: int | None,
    allowed_lag: int,
    output_format: str,
    output: str | None,
) -> int:
    """Evaluate snapshots recorded with `kafkadiag lag --record RECORD_DIR`, offline."""

    return reader_may_leave(
        lambda: run_history(record_dir, groups, output_format, output, samples, allowed_lag, at_ms)
    )
