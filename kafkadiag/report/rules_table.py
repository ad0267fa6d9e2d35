"""`kafkadiag rules` and `kafkadiag explain` for people, at the terminal's width."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any, TextIO

from kafkadiag.report.textpage import Page
from kafkadiag.report.texttable import render_table
from kafkadiag.rules.base import Rule

SEVERITY_WORDS = {"error": "ERROR", "warning": "WARNING", "info": "info"}


def render_rules(stream: TextIO, rules: Sequence[type[Rule[Any]]]) -> None:
    render_table(
        stream,
        f"Rules ({len(rules)}; `kafkadiag explain CODE` tells one in full)",
        ("CODE", "NAME", "SEVERITY", "TITLE"),
        [(rule.code, rule.name, SEVERITY_WORDS[rule.severity.value], rule.title) for rule in rules],
        caps=(8, 60, 8, 120),
        stacked=(3,),  # the title under its rule when code, name and title do not fit one line
    )


def render_explanation(stream: TextIO, rule: type[Rule[Any]]) -> None:
    """The rule's text (Rule.describe) wrapped at the width: its heading lines as they are, then
    its paragraphs, whose line breaks are those of its source, not of the reader's terminal (a
    line that starts with "- " starts a paragraph of its own)."""
    page = Page(stream)
    heading, *blocks = "\n".join(rule.describe()).split("\n\n")
    for line in heading.splitlines():
        page.paragraph(line)
    for block in blocks:
        page.line()
        for paragraph in re.split(r"\n(?=\s*[-*] )", block.strip("\n")):
            page.paragraph(paragraph)
