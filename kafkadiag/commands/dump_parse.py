"""`kafkadiag dump parse`: read dumps, summarise each, hand them to the chosen reporter."""

from __future__ import annotations

from typing import Any

from kafkadiag.dumps.summary import InputFailure, summarize_files
from kafkadiag.exitcodes import ExitCode
from kafkadiag.model import DumpFormat
from kafkadiag.progress import FileProgress
from kafkadiag.report.output import report_stream


def run_dump_parse(
    files: tuple[str, ...],
    input_format: str | None,
    output_format: str,
    output: str | None,
    show_progress: bool = False,
) -> int:
    fmt = DumpFormat(input_format) if input_format else None
    failures: list[InputFailure] = []
    inputs: dict[str, dict[str, Any]] = {}
    with FileProgress(files, enabled=show_progress) as progress, report_stream(output) as stream:
        results = summarize_files(files, fmt, progress.update)
        if output_format == "json":
            from kafkadiag.report.dump_json import JsonDumpWriter

            writer = JsonDumpWriter(stream)
            writer.begin()
            for result in results:
                if isinstance(result, InputFailure):
                    failures.append(result)
                    continue
                inputs.setdefault(result.dump.source, {"source": result.dump.source, "dumps": 0})["dumps"] += 1
                writer.write(result)
            for failure in failures:
                inputs[failure.source] = {
                    "source": failure.source,
                    "dumps": inputs.get(failure.source, {}).get("dumps", 0),
                    "error": failure.error.message,
                    "exit_code": int(failure.error.exit_code),
                }
            writer.end(inputs.values())
        else:
            from kafkadiag.console import stdout_console
            from kafkadiag.report.dump_table import render_dump

            console = stdout_console() if output in (None, "-") else _file_console(stream)
            for result in results:
                if isinstance(result, InputFailure):
                    failures.append(result)
                    continue
                render_dump(console, result)
    return _finish(failures)


def _file_console(stream: Any) -> Any:
    from rich.console import Console

    return Console(file=stream, markup=False, highlight=False, width=120, color_system=None)


def _finish(failures: list[InputFailure]) -> int:
    from kafkadiag.cli import report_error

    for failure in failures:
        report_error(failure.error)
    if failures:
        return int(max(failure.error.exit_code for failure in failures))
    return int(ExitCode.OK)
