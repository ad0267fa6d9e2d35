"""`kafkadiag diagnose` for people: the verdict and the story, then each finding with its
evidence (each item naming the source it came from), then what was read."""

from __future__ import annotations

import textwrap
from typing import TextIO

from kafkadiag.diagnose.model import Diagnosis

WIDTH = 100


def _wrapped(text: str, indent: str = "") -> str:
    return "\n".join(textwrap.wrap(text, WIDTH, initial_indent=indent, subsequent_indent=indent)) or indent


def render_diagnosis(out: TextIO, diagnosis: Diagnosis) -> None:
    out.write(_wrapped(diagnosis.verdict) + "\n\n")
    for paragraph in diagnosis.narrative:
        out.write(_wrapped(paragraph) + "\n\n")
    if diagnosis.findings:
        out.write("Findings\n")
    for source, finding in diagnosis.findings:
        out.write(
            _wrapped(
                f"{finding.severity.value.upper()} {finding.rule} {finding.name} [{source}]: {finding.title}",
                "  ",
            )
            + "\n"
        )
        out.write(_wrapped(finding.message, "        ") + "\n")
        if finding.threads:
            out.write(_wrapped("threads: " + ", ".join(finding.threads), "        ") + "\n")
        if finding.evidence:
            out.write("        evidence:\n")
            for item in finding.evidence:
                out.write(f"          {item.render()}\n")
        out.write(_wrapped("what to do: " + " ".join(finding.remedy.split()), "        ") + "\n\n")
    if diagnosis.caveats:
        out.write("Caveats\n")
        for caveat in diagnosis.caveats:
            out.write(_wrapped(caveat, "  ") + "\n")
        out.write("\n")
    out.write("Sources\n")
    for status in diagnosis.sources:
        state = "read" if status.ok else "NOT READ"
        out.write(_wrapped(f"{status.kind}: {status.target}: {state}: {status.detail}", "  ") + "\n")
        if not status.ok and status.help_text:
            out.write(_wrapped("what to do: " + status.help_text, "      ") + "\n")
