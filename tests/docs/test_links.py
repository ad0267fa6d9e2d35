"""Every relative link of README.md and docs/ leads to a file that exists, and to a heading or
anchor that is in it: a page renamed or a heading reworded breaks the link, and fails here."""

from __future__ import annotations

import re
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
_LINK = re.compile(r"\]\((?P<target>[^)\s]+)\)")
_HEADING = re.compile(r"^#{1,6} (?P<text>.+?)\s*$", re.MULTILINE)
_ANCHOR = re.compile(r'<a id="(?P<id>[^"]+)"></a>')


def github_anchor(heading: str) -> str:
    """The id GitHub gives a heading: lower case, punctuation dropped, spaces as hyphens."""
    text = re.sub(r"[^\w\- ]", "", heading.lower())
    return text.replace(" ", "-")


def anchors_of(page: Path) -> set[str]:
    text = page.read_text(encoding="utf-8")
    text = re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)  # no headings in code
    return {github_anchor(m["text"]) for m in _HEADING.finditer(text)} | set(_ANCHOR.findall(text))


def broken_links(page: Path) -> list[str]:
    broken = []
    for match in _LINK.finditer(page.read_text(encoding="utf-8")):
        target = match["target"]
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        path, _, anchor = target.partition("#")
        linked = (page.parent / path).resolve() if path else page
        if not linked.exists():
            broken.append(f"{page.name}: {target}: no such file")
        elif anchor and linked.suffix == ".md" and anchor not in anchors_of(linked):
            broken.append(f"{page.name}: {target}: no such heading in {linked.name}")
    return broken


def test_github_anchors_are_made_as_github_makes_them() -> None:
    assert github_anchor("`kafkadiag ps`") == "kafkadiag-ps"
    assert github_anchor("`kafkadiag.lag.snapshot`") == "kafkadiaglagsnapshot"
    assert github_anchor("What DIR holds") == "what-dir-holds"


def test_every_relative_link_leads_somewhere() -> None:
    broken = [link for page in PAGES for link in broken_links(page)]
    assert not broken, "links to nothing:\n" + "\n".join(broken)
