"""`kafkadiag maxlag`: the consumer's own fetcher metrics against the checker's lag
(kafkadiag.app.maxlag), reported, with its exit code.

Exit codes: 0 every client healthy; 1 a client is unhealthy (even if something else could not be
read); 3 the metrics could not be read, or nothing is unhealthy but an input the comparison needs
is missing (checker lag unreadable, group not found).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TextIO

import click

from kafkadiag.commands.formats import format_option
from kafkadiag.commands.options import (
    connection_options,
    metrics_source,
    metrics_source_options,
    output_option,
    reader_may_leave,
)
from kafkadiag.commands.targets import zookeeper_security
from kafkadiag.console import report_error, say
from kafkadiag.errors import InputUnreadableError, UsageError
from kafkadiag.exitcodes import ExitCode

if TYPE_CHECKING:
    from kafkadiag.app.maxlag import MaxLagOptions
    from kafkadiag.maxlag.model import MaxLagReport


FORMATS = ("table", "json", "prometheus")


def write_report(stream: TextIO, report: MaxLagReport, output_format: str) -> None:
    if output_format == "json":
        from kafkadiag.report.maxlag_json import write_json

        write_json(stream, report)
    elif output_format == "prometheus":
        from kafkadiag.report.maxlag_prometheus import write_prometheus

        write_prometheus(stream, report)
    else:
        from kafkadiag.report.maxlag_table import render_maxlag

        render_maxlag(stream, report)


def exit_code_of(report: MaxLagReport) -> int:
    if report.unhealthy:
        return int(ExitCode.FINDINGS)
    if report.incomplete:
        return int(ExitCode.INPUT_UNREADABLE)
    return int(ExitCode.OK)


def run_maxlag(options: MaxLagOptions, output_format: str, output: str | None) -> int:
    from kafkadiag.app.maxlag import maxlag
    from kafkadiag.report.output import report_stream

    if output_format not in FORMATS:
        raise UsageError(f"--format must be one of {', '.join(FORMATS)}")
    run = maxlag(options)
    for note in run.notes:
        say(f"kafkadiag: note: {note}")
    for problem in run.problems:
        report_error(problem)
    with report_stream(output, output_format) as stream:
        write_report(stream, run.report, output_format)
    code = exit_code_of(run.report)
    if code == ExitCode.INPUT_UNREADABLE:
        report = run.report
        missing = [client.client_id for client in report.clients if not client.complete]
        report_error(
            InputUnreadableError(
                "the comparison is incomplete"
                + (f" for client(s) {', '.join(missing)}" if missing else "")
                + (": " + "; ".join(report.errors) if report.errors else ""),
                help_text="Check --zookeeper/--bootstrap-server and --group (the notes in the report say "
                "what is missing); raise --timeout on slow networks.",
            )
        )
    return code


# ---- maxlag ---------------------------------------------------------------------------------
# One metrics source (--pid, --jmx, --jolokia, --prometheus) plus, for the checker lag, the lag
# engine's connection options. Full documentation: docs/maxlag.md.


@click.command("maxlag", short_help="Compare the fetcher's MaxLag with the checker's lag.")
@metrics_source_options
@connection_options
@click.option("--client-id", "client_ids", multiple=True, help="Only these clients (repeatable).")
@format_option(
    ("table", "json", "prometheus"),
    "table for people, json for machines (schema kafkadiag.maxlag, see docs/maxlag.md), "
    "prometheus (docs/prometheus.md).",
)
@output_option
def maxlag_command(
    consumer_config: str | None,
    client_ids: tuple[str, ...],
    lag_threshold: int | None,
    output_format: str,
    output: str | None,
    **connection: Any,
) -> int:
    """The consumer's fetcher MaxLag against the checker's lag, and what the gap means.

    Reads the consumer's own metrics (MaxLag, per-partition fetcher lag, each stream's queue fill)
    from one source, the committed-offset lag from ZooKeeper/brokers, and per client says: healthy,
    streams not draining (a full queue, named), fetch-bound, or fetcher metrics stale/absent.
    Exit 0 healthy, 1 unhealthy, 3 could not read.
    """
    from kafkadiag.app.maxlag import CheckerTarget, MaxLagOptions
    from kafkadiag.collect.metrics import MetricsSource

    timeout = connection.pop("timeout")
    # No source at all is refused by MetricsSource.kind, with the others' usage errors.
    source = metrics_source(connection, timeout) or MetricsSource(timeout_s=timeout)
    checker = CheckerTarget(
        bootstrap_servers=connection["bootstrap_server"],
        zookeeper=connection["zookeeper"],
        command_config=connection["command_config"],
        groups=connection["groups"],
        all_groups=connection["all_groups"],
        topics=connection["topics"],
        timeout_s=timeout,
        zookeeper_security=zookeeper_security(),
    )
    options = MaxLagOptions(source, checker, consumer_config, client_ids, lag_threshold)
    return reader_may_leave(lambda: run_maxlag(options, output_format, output))
