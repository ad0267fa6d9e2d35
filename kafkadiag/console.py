"""The consoles: reports on stdout, diagnostics and progress on stderr.

markup=False and highlight=False everywhere: thread names such as "[main]" or
"pool-1-thread-[3]" are data, not rich markup, and must print exactly as they are.
"""

from __future__ import annotations

import functools
import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

    from kafkadiag.errors import KafkadiagError


def _width() -> int | None:
    value = os.environ.get("KAFKADIAG_WIDTH")
    from kafkadiag.digits import decimal

    return decimal(value)


@functools.lru_cache(maxsize=1)
def stdout_console() -> Console:
    from rich.console import Console

    return Console(markup=False, highlight=False, width=_width(), soft_wrap=False)


@functools.lru_cache(maxsize=1)
def stderr_console() -> Console:
    from rich.console import Console

    return Console(stderr=True, markup=False, highlight=False, width=_width())


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
