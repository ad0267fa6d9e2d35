"""The forms a dump takes on its way from jstack to a bug report, made from a real dump.

Each function takes the text of a captured dump and returns it as a person would hand it over:
hard-wrapped by a mail client, quoted in a reply, fenced in Markdown, put in a Jira {code} block
and copied from the rendered page (HTML entities), saved as an HTML page's source, with CRLF
line ends, or re-encoded. They
only ever add what those tools add; they never touch what the dump says.
"""

from __future__ import annotations

import html


def hard_wrap(text: str, width: int, strip_trailing: bool = False) -> str:
    """What mail clients and `fold -s` do: break at the last space within `width`, else anywhere."""
    out = []
    for line in text.split("\n"):
        while len(line) > width:
            cut = line.rfind(" ", 0, width)
            if cut <= 0:
                piece, line = line[:width], line[width:]
            else:
                piece, line = line[: cut + 1], line[cut + 1 :]
            out.append(piece.rstrip() if strip_trailing else piece)
        out.append(line)
    return "\n".join(out)


def email_quoted(text: str) -> str:
    return "On Tue, a colleague wrote:\n" + "\n".join(
        "> " + line if line else ">" for line in text.split("\n")
    )


def markdown_fenced(text: str) -> str:
    return (
        "Our consumer stopped this morning. Here is the dump:\n\n```\n"
        + text.rstrip("\n")
        + "\n```\n\nAny idea what is going on? Restarting fixes it for a day.\n"
    )


def markdown_fenced_glued(text: str) -> str:
    """Fences typed on the dump's first and last lines, as GitHub's editor lets people paste."""
    return "Here is the dump:\n```" + text.strip("\n") + "```\nIt happens every night.\n"


def jira_code_glued(text: str) -> str:
    """A Jira {code:java} tag typed on the dump's first line, {code} after its last."""
    return "Stack of the stuck process:\n{code:java}" + text.strip("\n") + "{code}\n"


def markdown_indented(text: str) -> str:
    """A Markdown code block by indentation (four spaces), as blogs and READMEs carry dumps."""
    return "".join("    " + line if line.strip() else line for line in text.splitlines(keepends=True))


def markdown_indented_in_prose(text: str) -> str:
    """A blog post: prose flush left, the dump indented as a code block in between."""
    return (
        "The nightly job stopped running. This is what jstack printed:\n\n"
        + markdown_indented(text).rstrip("\n")
        + "\n\nNo deadlock, and the scheduler thread is idle.\n"
    )


def jira_code_rendered(text: str) -> str:
    """A {code} block as it reads when copied from the rendered issue page: entities and all."""
    return "Attached the jstack output:\n{code}\n" + html.escape(text, quote=True) + "{code}\nThanks!\n"


_PAGE_HEAD = (
    '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8"><title>Consumer stuck</title></head>\n'
    "<body>\n<p>Our consumer stopped this morning. Here is the dump:</p>\n"
)
_PAGE_TAIL = "<p>Restarting fixes it for a day.</p>\n</body></html>\n"


def html_page_highlighted(text: str, drop_tabs: bool = False) -> str:
    """A static blog's generated page (hexo's highlight block): the whole dump on one source line,
    a gutter of line numbers, every line in a <span>, lines joined by <br>, entities escaped.
    Some generators also drop every tab of the block (`drop_tabs`)."""
    lines = text.rstrip("\n").split("\n")
    if drop_tabs:
        lines = [line.replace("\t", "") for line in lines]
    gutter = "<br>".join(f'<span class="line">{number}</span>' for number in range(1, len(lines) + 1))
    code = "<br>".join(f'<span class="line">{html.escape(line)}</span>' for line in lines)
    return (
        _PAGE_HEAD
        + f'<figure class="highlight plain"><table><tr><td class="gutter"><pre>{gutter}</pre></td>'
        + f'<td class="code"><pre>{code}</pre></td></tr></table></figure>\n'
        + _PAGE_TAIL
    )


def html_page_pre(text: str) -> str:
    """A page saved from the browser with the dump in a <pre><code> block: its lines as they
    are, entities escaped (`&quot;`, `&lt;`), non-breaking spaces where the page kept indents."""
    body = html.escape(text.rstrip("\n"), quote=True).replace("    ", "&nbsp;&nbsp;&nbsp;&nbsp;")
    return _PAGE_HEAD + '<pre><code class="language-text">' + body + "\n</code></pre>\n" + _PAGE_TAIL


def html_mail(text: str) -> str:
    """An HTML mail: every line ends in <br> before the source's own newline, entities escaped."""
    lines = text.rstrip("\n").split("\n")
    return (
        '<div dir="ltr">Here is the dump:<br>\n'
        + "".join(f"{html.escape(line)}<br>\n" for line in lines)
        + "</div>\n"
    )


def html_div_lines(text: str) -> str:
    """A highlighter that puts every line of the block in a <div> of its own, one per source line."""
    lines = text.rstrip("\n").split("\n")
    return (
        _PAGE_HEAD
        + '<div class="highlight"><pre>\n'
        + "".join(f'<div class="line">{html.escape(line)}</div>\n' for line in lines)
        + "</pre></div>\n"
        + _PAGE_TAIL
    )


def crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


def utf16_with_bom(text: str) -> bytes:
    return text.encode("utf-16")  # Python writes the BOM, as Windows editors do


def utf8_with_bom(text: str) -> bytes:
    return b"\xef\xbb\xbf" + text.encode("utf-8")
