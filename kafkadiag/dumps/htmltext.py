"""The text of an HTML page that carries a dump: a blog page or a bug tracker's page saved from
the browser, an HTML mail, a static site's generated page.

Such a page holds the dump inside `<pre>`/`<code>` blocks, often one source line for the whole
block with `<br>` between the dump's lines and every token wrapped in a highlighter's `<span>`;
quotes and angle brackets are entities (`&quot;main&quot;`, `&lt;0x..&gt;`). Reading it as the
browser shows it — line breaks where the markup breaks lines, tags dropped, entities decoded —
gives the dump as its author pasted it. Only HTML's own tags are dropped: a frame such as
`Thread.<init>` that a page failed to escape keeps its `<init>`.
"""

from __future__ import annotations

import bisect
import html
import re

_BLOCK_NAMES = (
    r"p|div|pre|tr|li|ul|ol|table|tbody|thead|tfoot|figure|figcaption|blockquote|h[1-6]|section|"
    r"article|header|footer|hr|dd|dt|dl|details|summary|nav|main|aside"
)
# Where the browser ends a line: a run of block boundaries (opening or closing tags, with the
# page's own indentation between them) is one line end, a <br> just before it included; another
# <br> is a line end of its own.
# Linear by construction: a run of whitespace is entered only at its start (`(?<!\s)`; split tried
# every position of it, and a 64 KB line of spaces took seconds), and a tag's attributes stop at
# the next `<` (an unclosed `<div ` no longer scans the rest of the line for every `<div `).
_BOUNDARY = re.compile(
    r"(?<!\s)(?:<br(?:\s[^<>]*)?/?>\s*)?(?:\s*</?(?:"
    + _BLOCK_NAMES
    + r")(?:\s[^<>]*)?/?>)+|<br(?:\s[^<>]*)?/?>",
    re.IGNORECASE,
)
# Every other tag of HTML's, dropped without a break (inline markup, table cells, the page's head).
# Comments are dropped before (`_without_comments`): `<!--.*?-->` scanned to the end of the line
# from every unclosed `<!--`.
_TAGS = re.compile(
    r"<!DOCTYPE[^<>]*>|<\?xml[^<>]*\?>|</?(?:a|abbr|b|body|button|code|col|colgroup|del|em|"
    r"font|form|head|html|i|img|input|ins|kbd|label|link|mark|meta|noscript|s|samp|script|small|"
    r"span|strong|style|sub|sup|td|th|time|title|tt|u|var|wbr)(?:\s[^<>]*)?/?>",
    re.IGNORECASE,
)
# How an HTML page starts: a doctype, the comment a browser's "save as" writes, an XML prolog,
# or one of HTML's tags on the first line that is not blank.
_PAGE_START = re.compile(
    r"^\s*<(?:!DOCTYPE\s+html|!--|\?xml|html|head|body|div|pre|code|p|table|figure|span|blockquote|"
    r"article|section|meta|br)\b",
    re.IGNORECASE,
)
_HTML_TAG = re.compile(r"<(?:html|body|br|pre|div|p|table)\b", re.IGNORECASE)


def is_html_page(head: list[list[str]]) -> bool:
    """The sample is an HTML page's source: its first non-blank line opens with a tag, a doctype or
    a comment (no dump format and no log starts that way), and HTML's own tags follow."""
    lines = (line for batch in head for line in batch if line.strip())
    first = next(lines, "")
    if not _PAGE_START.match(first):
        return False
    return any(_HTML_TAG.search(line) for batch in head for line in batch)


# Between two cells of a row the browser shows a gap, and a copy from the page holds a tab there.
_CELL_END = re.compile(r"</t[dh]>(?=\s*<t[dh][\s>])", re.IGNORECASE)
# Elements whose content the browser never shows: a page's scripts and style sheets. The tag is
# bare or has attributes with values (`<script src="..">`); a self-closing one hides nothing, and
# `<Style object at 0x7f>` in a frame a page failed to escape is text, not a tag.
_HIDDEN_OPEN = re.compile(r"<(script|style)((?:\s[^<>]*)?)>", re.IGNORECASE)
_HIDDEN_CLOSE = {
    "script": re.compile(r"</script\s*>", re.IGNORECASE),
    "style": re.compile(r"</style\s*>", re.IGNORECASE),
}


class PageText:
    """The lines a browser shows for a page's source lines, batch after batch.

    A source line break is a line break too (a dump sits in a <pre> block, where it is one), so a
    boundary at either edge of a source line adds none, and a line of tags alone shows nothing.
    A script or a style sheet may span lines and batches: what is open is remembered.
    """

    def __init__(self) -> None:
        self._hidden: str | None = None  # the element whose content is being skipped

    def __call__(self, batch: list[str]) -> list[str]:
        text: list[str] = []
        for line in batch:
            if self._hidden is not None or "<" in line:
                shown = self._visible(line)
                if shown is None:
                    continue
                line = shown
            if "<" not in line and "&" not in line:
                # A non-breaking space is how pages keep a dump's indentation; the dump means a space.
                text.append(line.replace("\xa0", " ") if "\xa0" in line else line)
                continue
            pieces = _BOUNDARY.split(_CELL_END.sub("\t", line))
            if len(pieces) > 1:
                if not pieces[0].strip():
                    pieces = pieces[1:]
                if len(pieces) > 1 and not pieces[-1].strip():
                    pieces = pieces[:-1]
            shown_pieces = [_shown(piece) for piece in pieces]
            if len(shown_pieces) == 1 and not shown_pieces[0].strip() and shown_pieces[0] != line:
                continue  # tags alone ("</pre>", '<div class="highlight">'): no line of the text
            text.extend(shown_pieces)
        return text

    def _visible(self, line: str) -> str | None:
        """The line without script and style content; None when all of it is such content."""
        kept = []
        rest = line
        inside = self._hidden is not None
        while True:
            if self._hidden is not None:
                closing = _HIDDEN_CLOSE[self._hidden].search(rest)
                if closing is None:
                    break
                rest = rest[closing.end() :]
                self._hidden = None
            opening = _hidden_element(rest)
            if opening is None:
                kept.append(rest)
                break
            kept.append(rest[: opening.start()])
            rest = rest[opening.end() :]
            self._hidden = opening.group(1).lower()
        shown = "".join(kept)
        if not shown.strip() and (inside or shown != line):
            return None
        return shown


def _hidden_element(text: str) -> re.Match[str] | None:
    """The first opening tag of a script or a style sheet in `text`, outside comments."""
    comments = _comment_spans(text)
    starts = [start for start, _ in comments]
    for opening in _HIDDEN_OPEN.finditer(text):
        attributes = opening.group(2)
        if attributes.rstrip().endswith("/"):
            continue  # <script src=".." />: nothing inside
        if attributes.strip() and "=" not in attributes:
            continue  # words after the name, no attribute values: text that looks like a tag
        # The comment that starts last before the tag is the only one that can hold it.
        before = bisect.bisect_left(starts, opening.start()) - 1
        if before >= 0 and opening.start() < comments[before][1]:
            continue
        return opening
    return None


def _comment_spans(text: str) -> list[tuple[int, int]]:
    """Where `text` holds a whole `<!-- ... -->` comment: (start, end) pairs, in order. Found with
    str.find, one pass: a comment left open ends the search, as nothing after it can close."""
    spans = []
    position = 0
    while (start := text.find("<!--", position)) >= 0:
        end = text.find("-->", start + 4)
        if end < 0:
            break
        spans.append((start, end + 3))
        position = end + 3
    return spans


def _shown(piece: str) -> str:
    """A piece of a line between boundaries, as the browser shows it."""
    return html.unescape(_TAGS.sub("", _without_comments(piece))).replace("\xa0", " ")


def _without_comments(text: str) -> str:
    if "<!--" not in text:
        return text
    kept = []
    position = 0
    for start, end in _comment_spans(text):
        kept.append(text[position:start])
        position = end
    kept.append(text[position:])
    return "".join(kept)
