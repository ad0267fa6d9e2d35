"""The consoles: reports on stdout, diagnostics and progress on stderr, each at its stream's width
and with colour only where a person reads it.

markup=False and highlight=False everywhere: thread names such as "[main]" or
"pool-1-thread-[3]" are data, not rich markup, and must print exactly as they are.

Width: a terminal's own width, or COLUMNS when piped (else 100), kept within 40..200 columns
(past 200 a line is no longer read in one sweep of the eye, and below 40 a table has no room).
KAFKADIAG_WIDTH is the explicit override and is taken as it is.
Colour: `--color always|auto|never`; auto colours a terminal unless NO_COLOR is set
(https://no-color.org), and never a pipe or a file.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from typing import TYPE_CHECKING, TextIO

if TYPE_CHECKING:
    from rich.console import Console

    from kafkadiag.errors import KafkadiagError

COLOR_MODES = ("auto", "always", "never")
PIPED_WIDTH = 100
MIN_WIDTH = 40
MAX_WIDTH = 200


@dataclass
class _Settings:
    color: str = "auto"
    verbose: bool = False


_SETTINGS = _Settings()


def set_color_mode(mode: str) -> None:
    """`--color`: decided once per run, before anything is printed."""
    if mode not in COLOR_MODES:
        raise ValueError(f"colour mode {mode!r} is not one of {', '.join(COLOR_MODES)}")
    _SETTINGS.color = mode


def set_verbose(verbose: bool) -> None:
    """`--verbose`: the evidence and the rules run and skipped in table reports."""
    _SETTINGS.verbose = verbose


def verbose() -> bool:
    return _SETTINGS.verbose


def _is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def _env_width(name: str) -> int | None:
    from kafkadiag.digits import decimal

    value = decimal(os.environ.get(name))
    return value if value is not None and value > 0 else None


def width_of(stream: TextIO) -> int:
    """The columns a report on `stream` is laid out in."""
    forced = _env_width("KAFKADIAG_WIDTH")
    if forced is not None:
        return forced
    if _is_terminal(stream):
        try:
            columns = os.get_terminal_size(stream.fileno()).columns
        except (OSError, ValueError, AttributeError):
            columns = shutil.get_terminal_size((PIPED_WIDTH, 24)).columns
    else:
        columns = _env_width("COLUMNS") or PIPED_WIDTH
    return min(max(columns, MIN_WIDTH), MAX_WIDTH)


def colour_on(stream: TextIO) -> bool:
    """Whether what goes to `stream` is coloured."""
    if _SETTINGS.color != "auto":
        return _SETTINGS.color == "always"
    if "NO_COLOR" in os.environ and os.environ["NO_COLOR"] != "":
        return False
    return _is_terminal(stream) and os.environ.get("TERM") != "dumb"


def _console(stream: TextIO, **options: object) -> Console:
    from rich.console import Console

    colour = colour_on(stream)
    return Console(
        markup=False,
        highlight=False,
        emoji=False,
        width=width_of(stream),
        color_system="standard" if colour else None,
        force_terminal=True if colour else None,
        no_color=not colour,
        **options,  # type: ignore[arg-type]
    )


# Made on each call, not cached: the consoles follow sys.stdout and sys.stderr as they are when
# asked for (a test runner replaces them per command) with the width and colour of that moment.
def stdout_console() -> Console:
    import sys

    return _console(sys.stdout, soft_wrap=False)


def stderr_console() -> Console:
    import sys

    return _console(sys.stderr, stderr=True)


def shown(text: str) -> str:
    """Outside text (a file name, a server's answer) as it may reach a terminal: its control
    characters escaped (kafkadiag.report.safe_text)."""
    from kafkadiag.report.safe_text import printable

    return printable(text)


def say(message: str) -> None:
    """A line on stderr (`kafkadiag: note: ...`, a progress line); its control characters are
    escaped (it may quote outside text)."""
    import sys

    print(shown(message), file=sys.stderr, flush=True)


def warn(message: str) -> None:
    """A warning on stderr; its control characters are escaped (it may quote outside text)."""
    import sys

    from kafkadiag.report.safe_text import printable

    print(f"kafkadiag: warning: {printable(message)}", file=sys.stderr)


def report_error(error: KafkadiagError) -> None:
    """An error and what to do about it, on stderr. Messages quote paths, znode data and server
    answers: their control characters are escaped."""
    import sys

    from kafkadiag.report.safe_text import printable

    print(f"kafkadiag: error: {printable(error.message)}", file=sys.stderr)
    if error.help_text:
        print(f"kafkadiag: what to do: {printable(error.help_text)}", file=sys.stderr)
