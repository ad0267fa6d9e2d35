"""`kafkadiag dump analyze` for people: the verdict, then the findings (what to do said once),
then the details. Evidence and the rules run and skipped with --verbose; the JSON report always
has them."""

from __future__ import annotations

from typing import TextIO

from kafkadiag.console import verbose as verbose_wanted
from kafkadiag.report.findings_text import RemedyLedger, render_finding
from kafkadiag.report.textpage import Page
from kafkadiag.rules.clientthreads import describe as describe_client_threads
from kafkadiag.rules.engine import Report

VERDICT_STYLES = {"Stalled": "bold red", "At risk": "yellow", "No stall found": "green"}


def render_report(out: TextIO, report: Report, total_dumps: int, verbose: bool | None = None) -> None:
    page = Page(out)
    verbose = verbose_wanted() if verbose is None else verbose
    _render_verdict(page, report.verdict)
    if report.caveats:
        page.heading("Caveats")
        for caveat in report.caveats:
            page.paragraph(caveat, indent=2)
        page.line()
    if report.findings:
        page.heading("Findings")
    ledger = RemedyLedger()
    for finding in report.findings:
        seen = ""
        if total_dumps > 1 and len(finding.dumps) > 1:
            seen = f"[in {len(finding.dumps)} of {total_dumps} dumps]"
        render_finding(page, finding, ledger, label=seen, verbose=verbose)
    if report.findings:
        page.line()
    _render_details(page, report, verbose)


def _render_verdict(page: Page, verdict: str) -> None:
    for label, style in VERDICT_STYLES.items():
        if verdict.startswith(label):
            rest = verdict[len(label) :]
            shown = label + ":" if rest.startswith(":") else label
            page.paragraph(rest.removeprefix(":").lstrip(), lead=page.styled(shown, style))
            break
    else:
        page.paragraph(verdict)
    page.line()


def _render_details(page: Page, report: Report, verbose: bool) -> None:
    page.heading("Details")
    for series in report.series:
        page.paragraph(f"{series.name}: {series.dumps} dump(s), {series.threads} threads in the latest", 2)
        seen = describe_client_threads(series.kafka_threads) if series.kafka_threads else "none"
        page.paragraph(f"Kafka client threads in the latest dump: {seen}", indent=4)
    if not verbose:
        page.paragraph(
            f"{len(report.rules_run)} rules run, {len(report.skipped)} skipped for want of input "
            "(--verbose lists them)",
            indent=2,
        )
        return
    page.paragraph(f"rules run: {', '.join(report.rules_run) or 'none'}", indent=2)
    for skipped in report.skipped:
        page.paragraph(f"skipped {skipped.code} {skipped.name}: needs {'; '.join(skipped.missing)}", indent=2)
