"""Key paths of docs/json.md's skeletons, and of the documents kafkadiag writes, to compare them.

A skeleton is JSON-like text with comments: after a value, two or more spaces start what the key
means, and a line that does not start with a quote or a bracket is all comment. A key path is
`groups[].partitions[].lag`; `{...}` in an object, or `...` among its keys, makes every path
below it documented (`findings[].details.*`), as a rule's facts or a count per state are.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

_HEADING = re.compile(r"^#{2,3} `(?P<id>[^`]+)`", re.MULTILINE)
_TOKEN = re.compile(r'"(?:[^"\\]|\\.)*"|\.\.\.|[{}\[\]:,]|[^\s{}\[\]:,"]+')
_COMMENT_GAP = re.compile(r"\s{2,}")


@dataclass
class Skeleton:
    paths: set[str] = field(default_factory=set)
    open_below: set[str] = field(default_factory=set)  # "x" documents every "x.…" and "x[]…"

    def undocumented(self, emitted: Iterable[str]) -> list[str]:
        return sorted(path for path in emitted if not self._documents(path))

    def _documents(self, path: str) -> bool:
        if path in self.paths:
            return True
        return any(path.startswith((prefix + ".", prefix + "[]")) for prefix in self.open_below)


def skeletons(page: Path) -> dict[str, Skeleton]:
    """Each heading's id (the first backticked text of a `##`/`###` heading) with its first block."""
    text = page.read_text(encoding="utf-8")
    found: dict[str, Skeleton] = {}
    headings = list(_HEADING.finditer(text))
    for number, heading in enumerate(headings):
        end = headings[number + 1].start() if number + 1 < len(headings) else len(text)
        block = re.search(r"^```\n(.*?)^```$", text[heading.end() : end], re.MULTILINE | re.DOTALL)
        if block is not None:
            found[heading["id"]] = parse(block[1])
    return found


def parse(block: str) -> Skeleton:
    tokens = list(_tokens(block))
    skeleton = Skeleton()
    _value(tokens, 0, "", skeleton)
    return skeleton


def _tokens(block: str) -> Iterator[str]:
    for line in block.splitlines():
        line = line.strip()
        if not line or line[0] not in '"{}[]':
            continue  # a comment line
        yield from _TOKEN.findall(_json_part(line))


def _json_part(line: str) -> str:
    """The line up to its comment: the first run of two spaces outside a string."""
    in_string = escaped = False
    for position, char in enumerate(line):
        if in_string:
            in_string = not (char == '"' and not escaped)
            escaped = char == "\\" and not escaped
        elif char == '"':
            in_string = True
        elif _COMMENT_GAP.match(line, position):
            return line[:position]
    return line


def _value(tokens: list[str], at: int, path: str, skeleton: Skeleton) -> int:
    if at >= len(tokens):
        return at
    if tokens[at] == "{":
        return _object(tokens, at + 1, path, skeleton)
    if tokens[at] == "[":
        at += 1
        while at < len(tokens) and tokens[at] != "]":
            if tokens[at] in (",", "..."):
                at += 1
            else:
                at = _value(tokens, at, path + "[]", skeleton)
        return at + 1
    return at + 1  # a scalar


def _object(tokens: list[str], at: int, path: str, skeleton: Skeleton) -> int:
    while at < len(tokens) and tokens[at] != "}":
        token = tokens[at]
        if token == "...":
            skeleton.open_below.add(path)
            at += 1
        elif token.startswith('"') and at + 1 < len(tokens) and tokens[at + 1] == ":":
            key = f"{path}.{token[1:-1]}" if path else token[1:-1]
            skeleton.paths.add(key)
            at = _value(tokens, at + 2, key, skeleton)
        else:
            at += 1  # a comma
    return at + 1


def emitted_paths(document: Any, path: str = "") -> set[str]:
    """Every key path of a document kafkadiag wrote."""
    found: set[str] = set()
    if isinstance(document, dict):
        for key, value in document.items():
            below = f"{path}.{key}" if path else key
            found.add(below)
            found |= emitted_paths(value, below)
    elif isinstance(document, list):
        for value in document:
            found |= emitted_paths(value, path + "[]")
    return found
