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

import html
import re

# Tags that end a line where the browser would: a break, and the start or end of a block.
_LINE_BREAKS = re.compile(
    r"<br\s*/?>|</?(?:p|div|pre|tr|li|ul|ol|table|tbody|thead|figure|figcaption|blockquote|"
    r"h[1-6]|section|article|header|footer|hr|dd|dt|dl)(?:\s[^>]*)?/?>",
    re.IGNORECASE,
)
# Every other tag of HTML's, dropped without a break (inline markup, table cells, the page's head).
_TAGS = re.compile(
    r"<!--.*?-->|<!DOCTYPE[^>]*>|</?(?:a|abbr|b|body|button|code|col|colgroup|del|em|font|form|"
    r"head|html|i|img|input|ins|kbd|label|link|main|mark|meta|nav|noscript|s|samp|script|small|"
    r"span|strong|style|sub|sup|td|th|time|title|tt|u|var|wbr)(?:\s[^>]*)?/?>",
    re.IGNORECASE,
)
# How an HTML page starts: a doctype, or one of HTML's tags on the first line that is not blank.
_PAGE_START = re.compile(
    r"^\s*<(?:!DOCTYPE\s+html|html|head|body|div|pre|code|p|table|figure|span|blockquote|article|"
    r"section|meta|br)\b",
    re.IGNORECASE,
)


def is_html_page(head: list[list[str]]) -> bool:
    """The sample is an HTML page's source: its first non-blank line opens with an HTML tag (no
    dump format and no log starts that way) and some line breaks lines the HTML way."""
    lines = (line for batch in head for line in batch if line.strip())
    first = next(lines, "")
    if not _PAGE_START.match(first):
        return False
    return any(_LINE_BREAKS.search(line) for batch in head for line in batch)


def page_text(batch: list[str]) -> list[str]:
    """The lines a browser shows for these source lines."""
    text: list[str] = []
    for line in batch:
        if "<" not in line and "&" not in line:
            text.append(line)
            continue
        shown = _TAGS.sub("", _LINE_BREAKS.sub("\n", line))
        # A non-breaking space is how pages keep a dump's indentation; the dump means a space.
        text.extend(html.unescape(shown).replace("\xa0", " ").split("\n"))
    return text
