"""Prose of the table reports (verdicts, findings, what to do) wrapped by rich at the report's
width, with severities and statuses in colour when the report is coloured.

A line is only ever broken at a space: a thread, group or host name ("ConsumerFetcherThread-
order-service_vm-1796181563131-50cf3449-0-0") stays whole to be copied and found with grep. A name
wider than the whole line is shortened in the middle ("Consumer…0-0"); the JSON report has it in
full. Outside text is escaped (safe_text.printable) before rich sees it, so that only the colour
codes reach the terminal as codes.
"""

from __future__ import annotations

import errno
import os
import re
from typing import TYPE_CHECKING, Any, TextIO

from kafkadiag.report.safe_text import printable

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

DEFAULT_WIDTH = 100
ELLIPSIS = "…"

# Words coloured wherever a report shows them as a severity or a status (whole words only).
STYLES = {
    "ERROR": "bold red",
    "STOP": "bold red",
    "STALL": "bold red",
    "ERR": "bold red",
    "Stalled": "bold red",
    "UNHEALTHY": "bold red",
    "NOT READ": "bold red",
    "BLOCKED": "yellow",
    "WARNING": "yellow",
    "WARN": "yellow",
    "LAGGING": "yellow",
    "At risk": "yellow",
    "Incomplete": "yellow",
    "UNCHECKED": "yellow",
    "info": "cyan",
    "INFO": "cyan",
    "OK": "green",
    "Healthy": "green",
    "HEALTHY": "green",
}

# The same styles as SGR parameters, for the tables laid out without rich (kafkadiag.report.texttable).
SGR = {"bold red": "1;31", "yellow": "33", "green": "32", "cyan": "36", "bold": "1"}


def shorten_middle(word: str, width: int) -> str:
    """`word` within `width` columns: its start and end kept, the middle replaced by an ellipsis."""
    if len(word) <= width:
        return word
    if width <= 1:
        return ELLIPSIS[:width]
    head = (width - 1 + 1) // 2
    tail = width - 1 - head
    return word[:head] + ELLIPSIS + (word[-tail:] if tail else "")


_WORD = re.compile(r"\S+")


def fit_words(text: str, width: int) -> str:
    """`text` with every word wider than `width` shortened in the middle, spaces collapsed."""
    words = text.split()
    if all(len(word) <= width for word in words):
        return " ".join(words)
    return " ".join(shorten_middle(word, width) for word in words)


def wrap_plain(text: str, width: int, indent: str = "", first: str | None = None) -> str:
    """`text` wrapped at `width` without rich (for the reports that must start fast: `dump
    parse`), broken only at spaces, each line after `indent` (the first after `first` if
    given); no trailing newline."""
    import textwrap

    fitted = fit_words(text, max(width - len(indent), 8))
    return "\n".join(
        textwrap.wrap(
            fitted,
            width,
            initial_indent=indent if first is None else first,
            subsequent_indent=indent,
            break_long_words=False,
            break_on_hyphens=False,
        )  # fmt: skip
    )


def paint(stream: TextIO, word: str, style: str | None = None, pad: int = 0) -> None:
    """Write `word` (a status, a verdict), padded to `pad` columns, in its colour (`style`, else
    the one STYLES gives it) when the report stream is coloured; plainly otherwise."""
    shown = word.ljust(pad)
    sgr = SGR.get(style or STYLES.get(word, ""))
    if sgr is None or not getattr(stream, "colour", False) or not hasattr(stream, "write_raw"):
        stream.write(shown)
        return
    stream.write_raw(f"\x1b[{sgr}m{printable(word)}\x1b[0m{' ' * (len(shown) - len(word))}")


class _RawWriter:
    """The file rich writes to: the report stream's raw side (colour codes pass as codes)."""

    def __init__(self, stream: TextIO) -> None:
        self._write = getattr(stream, "write_raw", stream.write)

    def write(self, text: str) -> int:
        self._write(text)
        return len(text)

    def flush(self) -> None:
        pass


class Page:
    """Paragraphs and lines written to one report stream at its width, in its colours."""

    def __init__(self, stream: TextIO, width: int | None = None) -> None:
        self.width = width or getattr(stream, "width", None) or _shown_width()
        self.colour = bool(getattr(stream, "colour", False))
        self._console = _console(_RawWriter(stream), self.width, self.colour)

    def styled(self, word: str, style: str | None = None) -> Text:
        """`word` (a severity, a status) in its colour: `style`, else the one STYLES gives it."""
        from rich.text import Text

        return Text(printable(word), style=style or STYLES.get(word, ""))

    def joined(self, *parts: Text | str) -> Text:
        """Words of a lead, plain and coloured, with a space between each."""
        from rich.text import Text

        spaced: list[Text | str] = []
        for part in parts:
            spaced += [" ", part] if spaced else [part]
        return Text.assemble(*[printable(p) if isinstance(p, str) else p for p in spaced])

    def paragraph(self, text: str, indent: int = 0, lead: Text | str = "") -> None:
        """`text` wrapped at the page's width, every line indented by `indent`; `lead` (a
        coloured word and a code) comes first on the first line."""
        from rich.text import Text

        room = max(self.width - indent, 8)
        body = Text(fit_words(printable(text), room))
        whole = Text.assemble(lead, " ", body) if lead and text else Text.assemble(lead or body)
        # Wrapped here, then indented: rich's Padding would fill every line out to the width.
        margin = " " * indent
        for line in whole.wrap(self._console, room):
            line.rstrip()
            self._console.print(Text.assemble(margin, line))

    def line(self, text: str = "", indent: int = 0) -> None:
        self.paragraph(text, indent) if text else self._console.print()

    def heading(self, text: str) -> None:
        from rich.text import Text

        self._console.print(Text(fit_words(printable(text), self.width), style="bold"))


def _shown_width() -> int:
    """The width of a buffer shown later on the terminal (`lag --watch`): standard output's, as
    kafkadiag.report.texttable lays out its tables in such a buffer."""
    import sys

    from kafkadiag.console import width_of

    try:
        return width_of(sys.stdout)
    except (AttributeError, ValueError):  # no standard output at all (a daemon)
        return DEFAULT_WIDTH


def _console(file: Any, width: int, colour: bool) -> Console:
    from rich.console import Console

    console = Console(
        file=file,
        width=width,
        markup=False,
        highlight=False,
        emoji=False,
        color_system="standard" if colour else None,
        force_terminal=colour,
        no_color=not colour,
        soft_wrap=False,
    )
    # rich ends the process with exit 1 when a reader leaves (`| head -1`); passed on instead,
    # the report stream ends the report and the command keeps its own exit code (output.py).
    console.on_broken_pipe = _reader_left  # type: ignore[method-assign]
    return console


def _reader_left() -> None:
    raise BrokenPipeError(errno.EPIPE, os.strerror(errno.EPIPE))
