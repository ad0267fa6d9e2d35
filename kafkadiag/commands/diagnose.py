"""`kafkadiag diagnose`: read every source, join, report, pick the exit code (0 healthy, 1 a
finding at or above --fail-on, 3 a source could not be read and nothing worse was found)."""

from __future__ import annotations

from kafkadiag.app.diagnose import DiagnoseOptions, diagnose
from kafkadiag.exitcodes import ExitCode
from kafkadiag.report.output import report_stream
from kafkadiag.rules.base import Severity


def run_diagnose(options: DiagnoseOptions, output_format: str, output: str | None, fail_on: str) -> int:
    diagnosis = diagnose(options)
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
