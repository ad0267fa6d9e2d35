"""`kafkadiag dump analyze` for people: the verdict, then the findings, then the details."""

from __future__ import annotations

import textwrap
from typing import TextIO

from kafkadiag.rules.clientthreads import describe as describe_client_threads
from kafkadiag.rules.engine import Report

WIDTH = 100
MARKS = {"error": "ERROR", "warning": "WARN ", "info": "info "}


def _wrapped(text: str, indent: str) -> str:
    # Never break inside a word: thread names ("ConsumerFetcherThread-group1_host-...") must stay
    # whole to be found with grep and copied into a search.
    return textwrap.fill(
        " ".join(text.split()),
        WIDTH,
        initial_indent=indent,
        subsequent_indent=indent,
        break_on_hyphens=False,
        break_long_words=False,
    )


def render_report(out: TextIO, report: Report, total_dumps: int) -> None:
    out.write(_wrapped(report.verdict, "") + "\n\n")
    if report.caveats:
        out.write("Caveats\n")
        for caveat in report.caveats:
            out.write(_wrapped(caveat, "  ") + "\n")
        out.write("\n")
    if report.findings:
        out.write("Findings\n")
    for finding in report.findings:
        seen = ""
        if total_dumps > 1 and len(finding.dumps) > 0:
            seen = f" [in {len(finding.dumps)} of {total_dumps} dumps]" if len(finding.dumps) > 1 else ""
        out.write(f"  {MARKS[finding.severity.value]} {finding.rule} {finding.name}: {finding.title}{seen}\n")
        out.write(_wrapped(finding.message, "        ") + "\n")
        if finding.threads:
            out.write(_wrapped("threads: " + ", ".join(finding.threads), "        ") + "\n")
        out.write("        evidence:\n")
        for item in finding.evidence:
            out.write(f"          {item.render()}\n")
        out.write(_wrapped("what to do: " + finding.remedy, "        ") + "\n\n")
    out.write("Details\n")
    for series in report.series:
        out.write(f"  {series.name}: {series.dumps} dump(s), {series.threads} threads in the latest\n")
        seen = describe_client_threads(series.kafka_threads) if series.kafka_threads else "none"
        out.write(_wrapped(f"Kafka client threads in the latest dump: {seen}", "    ") + "\n")
    out.write(f"  rules run: {', '.join(report.rules_run) or 'none'}\n")
    for skipped in report.skipped:
        out.write(f"  skipped {skipped.code} {skipped.name}: needs {'; '.join(skipped.missing)}\n")
