"""`kafkadiag batch`: run the Spark job, print what it found and where, pick the exit code."""

from __future__ import annotations

import json
import sys
from collections.abc import Sequence

import click

from kafkadiag.commands.completion import complete_directories, complete_paths
from kafkadiag.commands.formats import format_option
from kafkadiag.commands.input_bounds import input_bound_options
from kafkadiag.commands.options import rule_options
from kafkadiag.errors import UsageError
from kafkadiag.exitcodes import ExitCode


def parse_conf(pairs: Sequence[str]) -> list[tuple[str, str]]:
    parsed = []
    for pair in pairs:
        key, separator, value = pair.partition("=")
        if not separator or not key.strip():
            raise UsageError(
                f"--conf {pair!r} is not KEY=VALUE", help_text="For example --conf spark.executor.memory=2g."
            )
        parsed.append((key.strip(), value))
    return parsed


def run_batch_command(
    inputs: Sequence[str],
    out_dir: str,
    master: str | None,
    conf: Sequence[str],
    fail_on: str,
    select: Sequence[str],
    ignore: Sequence[str],
    output_format: str,
    show_progress: bool,
) -> int:
    from kafkadiag.findings import Severity
    from kafkadiag.pipeline.job import run_batch
    from kafkadiag.report.safe_text import json_printable

    result = run_batch(inputs, out_dir, master, parse_conf(conf), select, ignore, show_progress)
    if output_format == "json":
        with open(f"{result.out_dir}/summary.json", encoding="utf-8") as handle:
            summary = json.dumps(json.load(handle), ensure_ascii=False, indent=1)
            sys.stdout.write(json_printable(summary) + "\n")
    else:
        from kafkadiag.report.output import report_stream
        from kafkadiag.report.textpage import Page

        with report_stream(None, "text") as stream:  # wrapped at the terminal's width, paths whole
            Page(stream).paragraph(
                f"{result.units:,} inputs, {result.dumps:,} dumps, {result.findings:,} findings "
                f"(worst: {result.worst_severity or 'none'}), {result.lag_rows:,} lag rows, "
                f"{result.quarantined:,} quarantined; "
                f"results in {result.out_dir}/ (report.html, summary.json)"
            )
    if result.units == 0 or (result.dumps == 0 and result.lag_rows == 0):
        print("kafkadiag: error: nothing could be read: see quarantine.jsonl for why", file=sys.stderr)
        return int(ExitCode.INPUT_UNREADABLE)
    if result.worst_severity is not None and Severity(result.worst_severity).at_least(Severity(fail_on)):
        return int(ExitCode.FINDINGS)
    return int(ExitCode.OK)


@click.command("batch", short_help="Analyse many dumps and lag histories as a Spark job.")
@click.argument("inputs", nargs=-1, required=True, shell_complete=complete_paths)
@click.option(
    "--out",
    "out_dir",
    required=True,
    shell_complete=complete_directories,
    help="A new directory for the results.",
)
@click.option("--master", default=None, help="Spark master URL (default: local[*], embedded).")
@input_bound_options
@click.option("--conf", multiple=True, help="A Spark setting KEY=VALUE (repeatable).")
@rule_options(fail_on="error", example_prefix="KD2")
@format_option(("table", "json"), "What to print on stdout: one line, or summary.json.")
def batch_command(
    inputs: tuple[str, ...],
    out_dir: str,
    master: str | None,
    conf: tuple[str, ...],
    fail_on: str,
    select: tuple[str, ...],
    ignore: tuple[str, ...],
    output_format: str,
) -> int:
    """Analyse many dumps, capture bundles and lag histories as a Spark job.

    INPUT...: files, directories or globs of thread dumps, `kafkadiag capture` bundles and
    `kafkadiag lag --record` snapshot files; local paths or URLs Spark reads (hdfs://, s3a://).
    Writes findings, stuck threads, lag over time, quarantined inputs, a summary and report.html
    into --out (docs/batch.md). Exit 0, 1 findings at or above --fail-on, 3 nothing readable.
    """

    # Progress goes to stderr, on a terminal or not (kafkadiag.pipeline.progress decides how).
    return run_batch_command(inputs, out_dir, master, conf, fail_on, select, ignore, output_format, True)
