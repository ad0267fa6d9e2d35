"""`--format`, one vocabulary for every command: `table` is the report for people, `json` the one
for machines, and a command adds its own machine forms (junit, prometheus).

`check` once called its human form `text`; the word is still accepted, as a hidden alias, so
scripts written for it keep working. Aliases are neither listed in --help nor completed.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import click

HUMAN_FORMAT = "table"
# Older words for a format -> the word every command now uses.
FORMAT_ALIASES = {"text": HUMAN_FORMAT}


class FormatChoice(click.Choice):  # type: ignore[type-arg]
    """A click.Choice that also takes the old words in FORMAT_ALIASES, as their new one."""

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, str) and FORMAT_ALIASES.get(value.lower()) in self.choices:
            value = FORMAT_ALIASES[value.lower()]
        return super().convert(value, param, ctx)


def format_option(
    formats: Sequence[str], help_text: str | None = None
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """--format FORMATS, defaulting to the human form, passed to the command as `output_format`."""
    if HUMAN_FORMAT not in formats:
        raise ValueError(f"every command's --format offers {HUMAN_FORMAT!r}; {tuple(formats)} does not")
    return click.option(
        "--format",
        "output_format",
        type=FormatChoice(tuple(formats)),
        default=HUMAN_FORMAT,
        show_default=True,
        help=help_text or f"{HUMAN_FORMAT} for people, the others for machines.",
    )
