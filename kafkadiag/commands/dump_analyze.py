"""`kafkadiag dump analyze`: read every dump, run the rules, report, pick the exit code."""

from __future__ import annotations

import time
from typing import TYPE_CHECKING, Any

import click

from kafkadiag.commands.completion import complete_paths
from kafkadiag.commands.options import (
    bundles_expanded,
    dump_inputs,
    reader_may_leave,
    rule_options,
    verbose_option,
)
from kafkadiag.console import report_error
from kafkadiag.exitcodes import ExitCode
from kafkadiag.model import DumpFormat

if TYPE_CHECKING:
    from kafkadiag.collect.dumpfiles import FileRead
    from kafkadiag.rules.engine import Report


def run_dump_analyze(
    files: tuple[str, ...],
    input_format: str | None,
    output_format: str,
    output: str | None,
    fail_on: str,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    junit_path: str | None = None,
) -> int:
    from kafkadiag.app.analyze import analyze_dumps
    from kafkadiag.findings import Severity
    from kafkadiag.progress import AnalysisProgress
    from kafkadiag.report.output import report_stream

    started = time.monotonic()
    fmt = DumpFormat(input_format) if input_format else None
    with AnalysisProgress(files) as progress:
        analysis = analyze_dumps(files, fmt, select, ignore, progress.update, analysing=progress.analysing)
    failures = analysis.read.failures
    inputs = [_input_json(read) for read in analysis.read.files]
    for failure in failures:
        report_error(failure)
    if junit_path:
        _write_junit(junit_path, analysis.report, inputs, fail_on, started)
    if not analysis.read.dumps:
        return int(max((failure.exit_code for failure in failures), default=ExitCode.INPUT_UNREADABLE))
    with report_stream(output, output_format) as stream:
        if output_format == "json":
            from kafkadiag.report.analysis_json import write_report

            write_report(stream, analysis.report, inputs, fail_on)
        else:
            from kafkadiag.report.analysis_table import render_report

            render_report(stream, analysis.report, len(analysis.read.dumps))
    if failures:
        return int(max(failure.exit_code for failure in failures))
    threshold = Severity(fail_on)
    if any(finding.severity.at_least(threshold) for finding in analysis.report.findings):
        return int(ExitCode.FINDINGS)
    return int(ExitCode.OK)


def _input_json(read: FileRead) -> dict[str, Any]:
    """One file as the JSON and JUnit reports list their inputs."""
    if read.error is None:
        return {"source": read.source, "dumps": read.dumps}
    return {
        "source": read.source,
        "dumps": read.dumps,
        "error": read.error.message,
        "exit_code": int(read.error.exit_code),
    }


def _write_junit(
    path: str, report: Report, inputs: list[dict[str, Any]], fail_on: str, started: float
) -> None:
    from kafkadiag.report.analysis_junit import write_analysis_junit
    from kafkadiag.report.output import report_stream

    with report_stream(path) as stream:
        write_analysis_junit(stream, report, inputs, fail_on, time.monotonic() - started)


@click.command("analyze", short_help="Explain stalls in dumps, and what to do.")
@dump_inputs(schema="kafkadiag.analysis")
@rule_options(fail_on="error", example_prefix="KD2")
@verbose_option
@click.option(
    "--junit-xml",
    "junit_path",
    default=None,
    shell_complete=complete_paths,
    help="Also write a JUnit XML report (one test case per rule, plus the input) to this file.",
)
def dump_analyze(
    files: tuple[str, ...],
    input_format: str,
    output_format: str,
    output: str | None,
    fail_on: str,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    junit_path: str | None,
) -> int:
    """Explain stalls in FILE...: what is stuck, on what, held by whom, and what to do.

    Dumps of one process taken over time (several files, or one log of kill -3 output) are
    analysed together: findings say in how many dumps they hold, and threads that never move
    are reported.
    """

    files = bundles_expanded(files)

    return reader_may_leave(
        lambda: run_dump_analyze(
            files,
            None if input_format == "auto" else input_format,
            output_format,
            output,
            fail_on,
            select,
            ignore,
            junit_path=junit_path,
        )
    )
