"""`kafkadiag diagnose` for people, the story told once: the verdict with the joined story, what
to do, then the findings (a finding that is the story points back to it, one about the story's
threads only is its headline, a remedy already given is not repeated), then what was read. Each
finding in full and its evidence with --verbose; the JSON report always has them. One incident
fits one screen of 120x40."""

from __future__ import annotations

from typing import TextIO

from kafkadiag.console import verbose as verbose_wanted
from kafkadiag.diagnosis import SOURCE_JOINED, Diagnosis
from kafkadiag.findings import Finding
from kafkadiag.report.findings_text import RemedyLedger, folded, render_finding
from kafkadiag.report.textpage import Page


def render_diagnosis(out: TextIO, diagnosis: Diagnosis, verbose: bool | None = None) -> None:
    page = Page(out)
    verbose = verbose_wanted() if verbose is None else verbose
    story = _story(diagnosis)
    _render_story(page, diagnosis.verdict, story)
    ledger = RemedyLedger()
    lead = _lead_finding(diagnosis)
    if lead is not None:
        page.heading("What to do")
        page.paragraph(lead.remedy, indent=2)
        ledger.record(lead.remedy, lead.rule)
        page.line()
    if diagnosis.findings:
        page.heading("Findings")
    told_threads = _story_threads(diagnosis)
    for source, finding, copies in folded(diagnosis.findings):
        brief = not verbose and source != SOURCE_JOINED and _within(finding.threads, told_threads)
        render_finding(
            page,
            finding,
            ledger,
            label=f"[{source}]",
            told=story,
            copies=copies,
            verbose=verbose,
            brief=brief,
        )
    if diagnosis.findings:
        page.line()
    caveats = getattr(diagnosis, "caveats", ())
    if caveats:
        page.heading("Caveats")
        for caveat in caveats:
            page.paragraph(caveat, indent=2)
        page.line()
    _render_sources(page, diagnosis)


def _story_threads(diagnosis: Diagnosis) -> set[str]:
    """The threads the joined story names: a finding about them only (the fetcher blocked, the
    streams starving, the stream not draining) is a part of that story, told in its headline."""
    return {
        name for source, finding in diagnosis.findings if source == SOURCE_JOINED for name in finding.threads
    }


def _within(threads: tuple[str, ...], told: set[str]) -> bool:
    return bool(threads) and set(threads) <= told


def _story(diagnosis: Diagnosis) -> list[str]:
    """The narrative's paragraphs, each once (two dumps of one stall tell the same story)."""
    seen: list[str] = []
    told: set[str] = set()  # a set: 100,000 empty files are as many paragraphs, each looked up
    for paragraph in diagnosis.narrative:
        words = " ".join(paragraph.split())
        if words not in told:
            told.add(words)
            seen.append(paragraph)
    return seen


def _render_story(page: Page, verdict: str, story: list[str]) -> None:
    """The verdict's label ("Stalled") in colour; when the story's first paragraph begins with
    the verdict's sentence, the two are one paragraph instead of the same sentence twice."""
    label, _, sentence = verdict.partition(": ")
    first = story[0] if story else ""
    if sentence and first.startswith(sentence.rstrip(".")):
        page.paragraph(first, lead=page.styled(label + ":", _label_style(label)))
        rest = story[1:]
    elif sentence:
        page.paragraph(sentence, lead=page.styled(label + ":", _label_style(label)))
        rest = story
    else:
        page.paragraph(verdict)
        rest = story
    page.line()
    for paragraph in rest:
        page.paragraph(paragraph)
        page.line()


def _label_style(label: str) -> str:
    return {"Stalled": "bold red", "At risk": "yellow", "Incomplete": "yellow", "Healthy": "green"}.get(
        label, "bold"
    )


def _lead_finding(diagnosis: Diagnosis) -> Finding | None:
    """The finding whose remedy is the one to act on first: the joined story's, else the worst."""
    joined = [finding for source, finding in diagnosis.findings if source == SOURCE_JOINED]
    if joined:
        return joined[0]
    ranked = sorted((finding for _, finding in diagnosis.findings), key=lambda f: -f.severity.rank)
    return ranked[0] if ranked else None


def _render_sources(page: Page, diagnosis: Diagnosis) -> None:
    page.heading("Sources")
    narrative = set(diagnosis.narrative)
    for status in diagnosis.sources:
        state = page.styled("read", "green") if status.ok else page.styled("NOT READ")
        # A source not read is told in the story above with its cause: named here, not retold.
        told = f"Not read: {status.target}: {status.detail}." in narrative
        detail = " (the cause is above)" if told else f": {status.detail}"
        page.paragraph(f"{status.target}{detail}", indent=2, lead=page.joined(f"{status.kind}:", state))
        if not status.ok and status.help_text:
            page.paragraph("what to do: " + status.help_text, indent=6)
