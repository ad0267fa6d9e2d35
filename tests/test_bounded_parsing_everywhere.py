"""Two kinds of crash made impossible by construction, not fixed one place at a time: GIVEN the
package's source, THEN every JSON document from outside is read through kafkadiag.boundedjson
(depth and number size bounded: 100,000 nested brackets were a RecursionError, 5,000 digits the
interpreter's int-size ValueError) and every decimal number of text through kafkadiag.digits
(`str.isdigit()` accepts "1313²", which `int()` refuses)."""

from __future__ import annotations

import re

from tests.conftest import REPO

PACKAGE = REPO / "kafkadiag"

# JSON that kafkadiag itself wrote a moment before, in the same run: not input from outside.
OWN_JSON = {
    "kafkadiag/commands/batch.py": "summary.json, written by the batch job just run",
    "kafkadiag/commands/demo.py": "the diagnosis a child kafkadiag printed",
    "kafkadiag/pipeline/work.py": "a finding serialised a line before, with names replaced",
    "kafkadiag/sandbox/child.py": "the sandbox's own child process's status line",
}
# Digit checks that belong to another part of issue 32 still in progress.
PENDING_DIGITS: dict[str, str] = {}
UNBOUNDED_JSON = re.compile(r"\bjson\.loads?\(")
UNICODE_DIGITS = re.compile(r"\.is(?:digit|decimal|numeric)\(\)")


def sources() -> list[tuple[str, str]]:
    return [
        (str(path.relative_to(REPO)), path.read_text(encoding="utf-8"))
        for path in sorted(PACKAGE.rglob("*.py"))
    ]


def test_every_json_input_is_read_through_boundedjson() -> None:
    offenders = [
        name
        for name, text in sources()
        if UNBOUNDED_JSON.search(text) and name not in OWN_JSON and name != "kafkadiag/boundedjson.py"
    ]
    assert offenders == [], f"json.load(s) on outside input: use kafkadiag.boundedjson.loads in {offenders}"


def test_no_number_is_read_with_str_isdigit() -> None:
    offenders = [
        f"{name}:{number}"
        for name, text in sources()
        if name not in ("kafkadiag/digits.py", *PENDING_DIGITS)
        for number, line in enumerate(text.split("\n"), start=1)
        if UNICODE_DIGITS.search(line) and not _checked_ascii_or_comment(line)
    ]
    assert offenders == [], f"str.isdigit() takes '²': use kafkadiag.digits in {offenders}"


def _checked_ascii_or_comment(line: str) -> bool:
    """`part.isascii() and part.isdigit()` on one line is ASCII digits; a comment is no code."""
    return ".isascii()" in line or line.lstrip().startswith("#")
