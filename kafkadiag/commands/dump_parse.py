"""`kafkadiag dump parse`: read dumps, summarise each, hand them to the chosen reporter."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import click

from kafkadiag.commands.options import bundles_expanded, dump_inputs, reader_may_leave
from kafkadiag.exitcodes import ExitCode
from kafkadiag.model import DumpFormat

if TYPE_CHECKING:
    from kafkadiag.dumps.summary import InputFailure


def run_dump_parse(
    files: tuple[str, ...],
    input_format: str | None,
    output_format: str,
    output: str | None,
) -> int:
    from kafkadiag.dumps.summary import InputFailure, summarize_files
    from kafkadiag.progress import AnalysisProgress
    from kafkadiag.report.output import report_stream

    fmt = DumpFormat(input_format) if input_format else None
    failures: list[InputFailure] = []
    inputs: dict[str, dict[str, Any]] = {}
    with (
        AnalysisProgress(files) as progress,
        report_stream(output, output_format) as stream,
    ):
        results = summarize_files(files, fmt, progress.update)
        if output_format == "json":
            from kafkadiag.report.dump_json_text import JsonDumpWriter

            writer = JsonDumpWriter(stream)
            writer.begin()
            try:
                for result in results:
                    if isinstance(result, InputFailure):
                        failures.append(result)
                        continue
                    source = result.dump.source
                    inputs.setdefault(source, {"source": source, "dumps": 0})["dumps"] += 1
                    writer.write(result)
            except BaseException as error:
                # Keep the document valid and say it is incomplete, then let main() report it.
                writer.end(_inputs(inputs, failures), error={"message": str(error) or type(error).__name__})
                raise
            writer.end(_inputs(inputs, failures))
        else:
            from kafkadiag.report.dump_table import render_dump

            for result in results:
                if isinstance(result, InputFailure):
                    failures.append(result)
                    continue
                render_dump(stream, result)
    return _finish(failures)


def _inputs(inputs: dict[str, dict[str, Any]], failures: list[InputFailure]) -> list[dict[str, Any]]:
    merged = dict(inputs)
    for failure in failures:
        merged[failure.source] = {
            "source": failure.source,
            "dumps": inputs.get(failure.source, {}).get("dumps", 0),
            "error": failure.error.message,
            "exit_code": int(failure.error.exit_code),
        }
    return list(merged.values())


def _finish(failures: list[InputFailure]) -> int:
    from kafkadiag.console import report_error

    for failure in failures:
        report_error(failure.error)
    if failures:
        return int(max(failure.error.exit_code for failure in failures))
    return int(ExitCode.OK)


@click.command("parse", short_help="Show what was understood in each dump.")
@dump_inputs(schema="kafkadiag.dumps")
def dump_parse(files: tuple[str, ...], input_format: str, output_format: str, output: str | None) -> int:
    """Show what was understood in FILE... (use - for stdin; gzip is read transparently; a
    `kafkadiag capture` bundle directory stands for its dumps).

    Per dump: threads by status, threads with identical stacks, locks with their holders and
    waiters, deadlocks, and the count of lines that were not understood.
    """

    files = bundles_expanded(files)

    return reader_may_leave(
        lambda: run_dump_parse(
            files,
            None if input_format == "auto" else input_format,
            output_format,
            output,
        )
    )
