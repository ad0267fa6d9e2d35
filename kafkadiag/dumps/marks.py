"""Marks a reporter puts in front of the lines that matter in a pasted dump, and the markup
around a pasted block.

People point at the decisive line of an excerpt by writing an arrow or stars before it:

    ---> 2013-05-22 20:23:11.95771 	- locked <0x00007f1a2ae92510> (a java.lang.Object)
    ==> 	at kafka.server.AbstractFetcherManager.removeFetcher(AbstractFetcherManager.scala:57)
    *** "worker-3" #31 prio=5 os_prio=0 tid=0x.. nid=0x.. waiting for monitor entry [0x..]

(KAFKA-916 marks its two lock lines so). The mark hides the line from the parser: it is neither
indented like a frame or lock line nor starts with a log prefix or a quote. A mark is only taken
off when what follows it is a line of the dump, so a line of prose that happens to start with
an arrow stays prose.

The markup that opens or closes a pasted block hides a line the same way when it is typed on
that line instead of its own: "```\"main\" #1 prio=5 ...", "...(Thread.java:748)```".
"""

from __future__ import annotations

import re
from collections.abc import Callable

# Arrows (--->, ==>, >>>), stars, or arrows pointing back (<---), then a space or a tab. A single
# ">" is an e-mail quote (read elsewhere) and a single "-" starts a lock line of its own.
_MARK = re.compile(r"(?:-+>|=+>|>{2,}|\*+|<-+|<=+)(?=[ \t])")
# The markup that opens a pasted block, typed straight before the first line of the block
# ("```\"main\" #1 prio=5 ...", "{code}\tat ..."): no space need follow it.
# Tildes are left out: pytest-timeout frames its stacks with rows of them ("~~~ Stack of ...").
_GLUED_MARKUP = re.compile(r"(?:`{3,}|\{(?:code|noformat|quote)(?::[^}]*)?\})(?=\S)")
FIRST_CHARACTERS = frozenset("-=>*<`{")
# What a dump line starts with once the indentation is gone: a frame, a lock line, a header.
_DUMP_LINE = ("at ", "- ", '"')


def unmarked(line: str, strip_prefix: Callable[[str], str]) -> str:
    """`line` without its mark when a line of the dump follows the mark; else `line` unchanged.

    `strip_prefix` removes the log prefix the dump's lines carry (after the mark, as in
    KAFKA-916), returning its argument when there is none.
    """
    glued = _GLUED_MARKUP.match(line)
    if glued is not None:
        # Markup is never part of a dump: what follows it is the block's first line.
        rest = line[glued.end() :]
        if not rest.strip():
            return line  # the markup line itself
        body = rest.lstrip(" \t")
        return "\t" + body if body.startswith(("at ", "- ")) else rest
    mark = _MARK.match(line)
    if mark is None:
        return line
    rest = line[mark.end() :].lstrip(" \t")
    if rest.startswith(_DUMP_LINE):
        # A frame or lock line loses its indentation with the mark: give it back.
        return rest if rest.startswith('"') else "\t" + rest
    after_prefix = strip_prefix(rest)
    if after_prefix != rest and after_prefix.lstrip(" \t").startswith(_DUMP_LINE):
        return after_prefix
    return line


# The lines that open or close a pasted block: Markdown fences of three or more backticks or
# tildes (with a language, also after a space), Jira's and
# Confluence's {code}/{noformat}/{quote} tags (with options).
_BLOCK_MARKUP = re.compile(r"^(?:(?:`{3,}|~{3,}) *[\w+-]*|\{(?:code|noformat|quote)(?::[^}]*)?\})$")


# The markup that closes a pasted block, typed straight after its last line ("...java:748)```").
_TRAILING_MARKUP = re.compile(r"(?<=\S)(?:`{3,}|\{(?:code|noformat|quote)\})\s*$")


def without_trailing_markup(line: str) -> str:
    """`line` without a block's closing markup glued to its end; else `line` unchanged."""
    if line[-1:] not in "`}" and not line[-1:].isspace():
        return line
    closing = _TRAILING_MARKUP.search(line)
    return line if closing is None else line[: closing.start()]


# Where a paste's opening fence or tag is looked for: its first lines, not a whole sample.
MARKUP_SEARCHED_CHARS = 65_536


def holds_block_markup(text: str) -> bool:
    """The start of `text` holds a fence or a tracker's code tag."""
    return any(
        text.find(markup, 0, MARKUP_SEARCHED_CHARS) >= 0 for markup in ("```", "{code", "{noformat", "{quote")
    )


def unglued(batch: list[str]) -> list[str]:
    """`batch` with every block markup typed on a line of the dump taken off that line; markup on
    a line of its own stays (every parser passes over it)."""
    return [_unglued(line) if line[:1] in "`{" or line[-1:] in "`}" else line for line in batch]


def _unglued(line: str) -> str:
    opening = _GLUED_MARKUP.match(line)
    if opening is not None and line[opening.end() :].strip():
        line = line[opening.end() :]
    trimmed = without_trailing_markup(line)
    return trimmed if trimmed.strip() else line


def is_block_markup(stripped: str) -> bool:
    """`stripped` (a line without its surrounding whitespace) only opens or closes a pasted block."""
    return stripped[:1] in "`~{" and _BLOCK_MARKUP.match(stripped) is not None
