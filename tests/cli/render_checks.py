"""What every report for people must hold at a width: no line wider than the terminal, no name
broken across two lines, no colour unless asked for. Shared by the render tests."""

from __future__ import annotations

import re
from collections.abc import Iterable

from rich.cells import cell_len

from tests.infra.cli import run

WIDTHS = (80, 120)
SGR = re.compile(r"\x1b\[[0-9;]*m")


def render(args: list[str], width: int, env: dict[str, str] | None = None) -> tuple[int, str, str]:
    """`kafkadiag ARGS` piped, laid out at COLUMNS=width (KAFKADIAG_WIDTH, which the other tests
    pin to 200, is emptied so that COLUMNS decides, as in a shell script)."""
    return run(args, env={"KAFKADIAG_WIDTH": "", "COLUMNS": str(width), **(env or {})})


def too_wide(text: str, width: int) -> list[str]:
    return [line for line in SGR.sub("", text).splitlines() if cell_len(line) > width]


def split_names(text: str, names: Iterable[str]) -> list[str]:
    """The names that two consecutive lines hold between them, cut at the line break (at a
    hyphen, or inside a word), when neither line holds them whole."""
    lines = [line.strip() for line in SGR.sub("", text).splitlines()]
    broken = []
    for first, second in zip(lines, lines[1:]):
        for name in names:
            if name in first or name in second:
                continue
            if name in first + second:
                broken.append(f"{name!r} between {first!r} and {second!r}")
    return broken


def assert_fits(text: str, width: int, names: Iterable[str] = ()) -> None:
    """No line wider than `width`; every name (shorter than the width) whole where it appears."""
    assert not too_wide(text, width), "\n".join([f"wider than {width}:", *too_wide(text, width), "", text])
    names = [name for name in names if len(name) < width - 8]
    assert not split_names(text, names), "\n".join(split_names(text, names)) + "\n\n" + text
    for name in names:
        assert name in text, f"{name!r} is not shown whole at {width} columns:\n{text}"
