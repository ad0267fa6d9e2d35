"""The forms a dump takes on its way from jstack to a bug report, made from a real dump.

Each function takes the text of a captured dump and returns it as a person would hand it over:
hard-wrapped by a mail client, quoted in a reply, fenced in Markdown, put in a Jira {code} block
and copied from the rendered page (HTML entities), with CRLF line ends, or re-encoded. They
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


def crlf(text: str) -> str:
    return text.replace("\n", "\r\n")


def utf16_with_bom(text: str) -> bytes:
    return text.encode("utf-16")  # Python writes the BOM, as Windows editors do


def utf8_with_bom(text: str) -> bytes:
    return b"\xef\xbb\xbf" + text.encode("utf-8")
