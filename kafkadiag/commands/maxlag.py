"""`kafkadiag maxlag`: the consumer's own fetcher metrics against the checker's lag
(kafkadiag.app.maxlag), reported, with its exit code.

Exit codes: 0 every client healthy; 1 a client is unhealthy (even if something else could not be
read); 3 the metrics could not be read, or nothing is unhealthy but an input the comparison needs
is missing (checker lag unreadable, group not found).
"""

from __future__ import annotations

import sys
from typing import TextIO

from kafkadiag.app.maxlag import MaxLagOptions, maxlag
from kafkadiag.console import report_error
from kafkadiag.errors import InputUnreadableError, UsageError
from kafkadiag.exitcodes import ExitCode
from kafkadiag.maxlag.model import MaxLagReport
from kafkadiag.report.output import report_stream

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
    if output_format not in FORMATS:
        raise UsageError(f"--format must be one of {', '.join(FORMATS)}")
    run = maxlag(options)
    for note in run.notes:
        print(f"kafkadiag: note: {note}", file=sys.stderr)
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
