"""`kafkadiag diagnose`: read every source, join, report, pick the exit code (0 healthy, 1 a
finding at or above --fail-on, 3 a source could not be read and nothing worse was found)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import click

from kafkadiag.commands.completion import complete_paths
from kafkadiag.commands.formats import format_option
from kafkadiag.commands.input_bounds import input_bound_options
from kafkadiag.commands.options import connection_options, output_option, rule_options, verbose_option
from kafkadiag.commands.targets import lag_target
from kafkadiag.exitcodes import ExitCode

if TYPE_CHECKING:
    from kafkadiag.app.diagnose import DiagnoseOptions
    from kafkadiag.diagnosis import Diagnosis


def run_diagnose(options: DiagnoseOptions, output_format: str, output: str | None, fail_on: str) -> int:
    from kafkadiag.app.diagnose import diagnose
    from kafkadiag.findings import Severity
    from kafkadiag.progress import AnalysisProgress
    from kafkadiag.report.output import report_stream

    # Reading and analysing the dumps of --from is the long part on large logs: said on stderr.
    with AnalysisProgress(options.bundles) as progress:
        diagnosis = diagnose(options, progress)
    _warn_unread(diagnosis)
    with report_stream(output, output_format) as stream:
        if output_format == "json":
            from kafkadiag.report.diagnosis_json import write_diagnosis

            write_diagnosis(stream, diagnosis, fail_on)
        elif output_format == "prometheus":
            from kafkadiag.report.diagnosis_prometheus import write_prometheus

            write_prometheus(stream, diagnosis)
        else:
            from kafkadiag.report.diagnosis_table import render_diagnosis

            render_diagnosis(stream, diagnosis)
    worst = diagnosis.worst()
    if worst is not None and worst.at_least(Severity(fail_on)):
        return int(ExitCode.FINDINGS)
    if not diagnosis.complete:
        return int(ExitCode.INPUT_UNREADABLE)
    return int(ExitCode.OK)


def _warn_unread(diagnosis: Diagnosis) -> None:
    """Say on stderr, as lag does, each source that could not be read; the report shows it too."""
    from kafkadiag.console import warn

    for status in diagnosis.sources:
        if not status.ok:
            warn(f"{status.target} not read: {status.detail}")


@click.command("diagnose", short_help="Join offsets, metrics and dumps into one diagnosis.")
@connection_options
@click.option("--pid", "pids", type=int, multiple=True, help="A consumer process: its thread dump "
              "(jstack -l or py-spy) and, for a JVM, its fetcher metrics (repeatable).")  # fmt: skip
@click.option("--jmx", default=None, help="The consumer's remote JMX (host:port or service:jmx: URL).")
@click.option("--jolokia", default=None, help="The consumer's Jolokia agent URL.")
@click.option("--prometheus", default=None, help="The consumer's Prometheus JMX exporter URL or file.")
@click.option(
    "--from",
    "bundles",
    multiple=True,
    shell_complete=complete_paths,
    help="A capture bundle (kafkadiag capture) or dump file (repeatable).",
)
@rule_options(fail_on="warning", example_prefix="KD8")
@format_option(
    ("table", "json", "prometheus"),
    "table for people, json for machines (schema kafkadiag.diagnosis, docs/diagnose.md), "
    "prometheus (docs/prometheus.md).",
)
@output_option
@verbose_option
@input_bound_options
def diagnose_command(
    bootstrap_server: str | None,
    zookeeper: str | None,
    command_config: str | None,
    groups: tuple[str, ...],
    all_groups: bool,
    topics: tuple[str, ...],
    timeout: float,
    pids: tuple[int, ...],
    jmx: str | None,
    jolokia: str | None,
    prometheus: str | None,
    bundles: tuple[str, ...],
    fail_on: str,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    output_format: str,
    output: str | None,
) -> int:
    """One diagnosis from every source: committed offsets and ownership, the consumer's fetcher
    metrics, its thread dumps; joined by consumer id, fetcher and stream threads, partitions and
    queue fill into one story (which stream stopped, which fetcher it blocks, which topics starve,
    MaxLag against the checker lag) and one catalogue of findings (`kafkadiag rules`).

    Exit 0 healthy, 1 a finding at or above --fail-on, 3 a source could not be read.
    """
    from kafkadiag.app.diagnose import DiagnoseOptions

    target = None
    if bootstrap_server or zookeeper:
        target = lag_target(bootstrap_server, zookeeper, command_config, groups, all_groups, topics, timeout)
    options = DiagnoseOptions(
        lag_target=target, pids=pids, jmx=jmx, jolokia=jolokia, prometheus=prometheus, bundles=bundles,
        select=select, ignore=ignore, timeout_s=timeout,
    )  # fmt: skip
    return run_diagnose(options, output_format, output, fail_on)
