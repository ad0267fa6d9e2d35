"""The findings as `dump analyze` and `diagnose` print them: one headline each, its message, and
what to do said once: a finding whose remedy was already given points back to it instead of
repeating it (KD201 and KD202 give the same advice). Findings whose whole text another one
already printed (the same stall seen in several dumps of one bundle) are folded into it.
Evidence only with --verbose; the JSON report always has it."""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING

from kafkadiag.findings import Finding
from kafkadiag.report.textpage import Page

if TYPE_CHECKING:
    from rich.text import Text

MARKS = {"error": "ERROR", "warning": "WARN", "info": "info"}
BODY_INDENT = 6


class RemedyLedger:
    """The remedies already printed on a page, and the rule that printed each first."""

    def __init__(self) -> None:
        self._by_text: dict[str, str] = {}

    def told(self, remedy: str) -> str | None:
        return self._by_text.get(" ".join(remedy.split()))

    def record(self, remedy: str, rule: str) -> None:
        self._by_text.setdefault(" ".join(remedy.split()), rule)


def folded(findings: Iterable[tuple[str, Finding]]) -> list[tuple[str, Finding, int]]:
    """(label, finding, how many identical ones it stands for), in their order."""
    order: list[tuple[str, Finding]] = []
    counts: dict[tuple[str, str, str], int] = {}
    for label, finding in findings:
        key = (finding.rule, " ".join(finding.message.split()), finding.remedy)
        if key not in counts:
            order.append((label, finding))
        counts[key] = counts.get(key, 0) + 1
    return [
        (label, finding, counts[(finding.rule, " ".join(finding.message.split()), finding.remedy)])
        for label, finding in order
    ]


def render_finding(
    page: Page,
    finding: Finding,
    ledger: RemedyLedger,
    *,
    label: str = "",
    told: Sequence[str] = (),
    copies: int = 1,
    verbose: bool = False,
    brief: bool = False,
) -> None:
    """One finding, with no blank line after it (findings follow each other closely enough to
    keep one incident on one screen). `told`: paragraphs already printed (the story): a message
    among them is not printed again. `label`: where it came from ("[dump]", "[in 2 of 3 dumps]").
    `brief`: the headline alone, for a finding another one's story already tells."""
    mark = MARKS.get(finding.severity.value, finding.severity.value)
    headline = f"{finding.rule} {finding.name}: {finding.title}"
    extra = [label] if label else []
    if copies > 1:
        extra.append(f"(and {copies - 1} more like it)")
    message = " ".join(finding.message.split())
    is_story = message in {" ".join(paragraph.split()) for paragraph in told}
    if is_story:
        extra.append("(the story above)")
    elif brief:
        extra.append("(in the story above)")
    page.paragraph(" ".join([headline, *extra]), indent=2, lead=page.styled(mark, _style(mark)))
    if brief:
        return
    if not is_story:
        page.paragraph(message, indent=BODY_INDENT)
    unnamed = [name for name in finding.threads if name not in finding.message]
    if unnamed or (verbose and finding.threads):
        page.paragraph("threads: " + ", ".join(finding.threads), indent=BODY_INDENT)
    if verbose and finding.evidence:
        page.paragraph("evidence:", indent=BODY_INDENT)
        for item in finding.evidence:
            page.paragraph(item.render(), indent=BODY_INDENT + 2)
    earlier = ledger.told(finding.remedy)
    if earlier is None:
        page.paragraph("what to do: " + finding.remedy, indent=BODY_INDENT)
        ledger.record(finding.remedy, finding.rule)
    elif earlier != finding.rule:
        page.paragraph(f"what to do: as for {earlier} above", indent=BODY_INDENT)


def coded_lead(page: Page, code: str, unhealthy: bool = True, severity: str = "") -> Text:
    """The lead of a lag, check or maxlag finding: its severity word (`severity`, upper-cased)
    in the colour dump analyze gives it, then its rule code, red when it names a failure."""
    code_part = page.styled(code, "bold red" if unhealthy and not severity else "bold")
    if not severity:
        return code_part
    mark = severity.upper()
    return page.joined(page.styled(mark, _style(MARKS.get(severity.lower(), mark))), code_part)


def _style(mark: str) -> str:
    return {"ERROR": "bold red", "WARN": "yellow", "info": "cyan"}.get(mark, "")
