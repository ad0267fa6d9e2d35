"""`kafkadiag dump analyze`: read every dump, run the rules, report, pick the exit code."""

from __future__ import annotations

import functools
import time
from typing import Any

from kafkadiag.dumps import read_dumps
from kafkadiag.dumps.lines import ReadStats, display_name
from kafkadiag.errors import KafkadiagError
from kafkadiag.exitcodes import ExitCode
from kafkadiag.model import DumpFormat, ThreadDump
from kafkadiag.progress import FileProgress
from kafkadiag.readlimits import ReadLimits, format_size
from kafkadiag.report.output import report_stream
from kafkadiag.rules.base import Severity
from kafkadiag.rules.engine import Report, analyze


def run_dump_analyze(
    files: tuple[str, ...],
    input_format: str | None,
    output_format: str,
    output: str | None,
    fail_on: str,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    show_progress: bool = False,
    junit_path: str | None = None,
) -> int:
    started = time.monotonic()
    fmt = DumpFormat(input_format) if input_format else None
    dumps: list[ThreadDump] = []
    inputs: list[dict[str, Any]] = []
    failures: list[KafkadiagError] = []
    read_caveats: list[str] = []
    with FileProgress(files, enabled=show_progress) as progress:
        for path in files:
            stats = ReadStats()
            before = len(dumps)
            try:
                dumps.extend(read_dumps(path, fmt, stats, functools.partial(progress.update, path)))
                inputs.append({"source": display_name(path), "dumps": len(dumps) - before})
                read_caveats += reading_caveats(display_name(path), stats)
            except KafkadiagError as error:
                failures.append(error)
                inputs.append(
                    {
                        "source": display_name(path),
                        "dumps": len(dumps) - before,
                        "error": error.message,
                        "exit_code": int(error.exit_code),
                    }
                )
    from kafkadiag.console import report_error

    for failure in failures:
        report_error(failure)
    if not dumps:
        if junit_path:
            _write_junit(junit_path, analyze([], select, ignore), inputs, fail_on, started)
        return int(max((failure.exit_code for failure in failures), default=ExitCode.INPUT_UNREADABLE))
    report = analyze(dumps, select, ignore, read_caveats)
    if junit_path:
        _write_junit(junit_path, report, inputs, fail_on, started)
    with report_stream(output, output_format) as stream:
        if output_format == "json":
            from kafkadiag.report.analysis_json import write_report

            write_report(stream, report, inputs, fail_on)
        else:
            from kafkadiag.report.analysis_table import render_report

            render_report(stream, report, len(dumps))
    if failures:
        return int(max(failure.exit_code for failure in failures))
    threshold = Severity(fail_on)
    if any(finding.severity.at_least(threshold) for finding in report.findings):
        return int(ExitCode.FINDINGS)
    return int(ExitCode.OK)


def _write_junit(
    path: str, report: Report, inputs: list[dict[str, Any]], fail_on: str, started: float
) -> None:
    from kafkadiag.report.analysis_junit import write_analysis_junit

    with report_stream(path) as stream:
        write_analysis_junit(stream, report, inputs, fail_on, time.monotonic() - started)


def reading_caveats(source: str, stats: ReadStats) -> list[str]:
    """What reading the file changed or could not read, said beside the findings."""
    caveats = []
    if stats.cut_lines:
        bound = format_size(ReadLimits.from_environment().max_line_chars)
        caveats.append(
            f"{source}: {stats.cut_lines} line(s) over {bound} were cut (the line numbers hold; "
            "--max-line-length raises the bound)"
        )
    if stats.replaced_characters:
        caveats.append(f"{source}: {stats.replaced_characters} byte(s) that are not text were replaced")
    if stats.encoding != "utf-8":
        caveats.append(f"{source}: decoded as {stats.encoding}")
    if stats.log_records_field is not None:
        where = (
            "line numbers count the lines of those fields, not of the file"
            if stats.multi_line_records
            else "one record per line, so line numbers hold"
        )
        caveats.append(
            f"{source}: JSON log records (Docker's json-file, journalctl -o json, a log shipper's export), "
            f'read as the text of each record\'s "{stats.log_records_field}" field; {where}'
        )
    if stats.http_header_lines:
        caveats.append(
            f"{source}: an HTTP response saved whole (curl -i): its status line and headers "
            f"(lines 1-{stats.http_header_lines}) were skipped"
        )
    if stats.html_page:
        caveats.append(
            f"{source}: an HTML page, read as its text (tags dropped, entities decoded); "
            "line numbers count the lines of that text, not of the file"
        )
    return caveats
