"""Every `kafkadiag COMMAND --option` that README.md and docs/ show is one kafkadiag has.

Each span of code starting with `kafkadiag` (inline, or a line of a code block) is read as a command
path, then options; the command must exist and each option must be in that command's --help.
"""

from __future__ import annotations

import functools
import os
import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
_INLINE = re.compile(r"`(kafkadiag [^`]+)`")
_FENCED = re.compile(r"^ *```[a-z]*\n(.*?)^ *```$", re.MULTILINE | re.DOTALL)
_BLOCK_LINE = re.compile(r"^\s*(?:\$ )?(?:\.venv/bin/)?(kafkadiag [^\n#]+)", re.MULTILINE)
_OPTION = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")


@functools.cache
def help_of(path: tuple[str, ...]) -> str:
    shown = subprocess.run(
        [sys.executable, "-m", "kafkadiag", *path, "--help"],
        capture_output=True,
        text=True,
        check=False,
        env={**os.environ, "COLUMNS": "300"},
    )
    assert shown.returncode == 0, f"kafkadiag {' '.join(path)} --help: {shown.stderr}"
    return shown.stdout


def subcommands(help_text: str) -> set[str]:
    _, _, listing = help_text.partition("\nCommands:\n")
    return {line.split()[0] for line in listing.splitlines() if line.startswith("  ") and line.split()}


def command_path(words: list[str]) -> tuple[str, ...]:
    path: tuple[str, ...] = ()
    for word in words:
        if word not in subcommands(help_of(path)):
            break
        path += (word,)
    return path


def named_commands() -> list[tuple[str, str]]:
    found = []
    for page in PAGES:
        text = page.read_text(encoding="utf-8")
        blocks = "\n".join(_FENCED.findall(text))
        for span in _INLINE.findall(text) + _BLOCK_LINE.findall(blocks):
            found.append((page.name, span.strip()))
    return found


def test_the_pages_name_commands_at_all() -> None:
    pages = {page for page, _ in named_commands()}
    assert {"README.md", "lag.md", "diagnose.md", "maxlag.md"} <= pages


def test_every_command_and_option_named_exists() -> None:
    wrong = []
    for page, span in named_commands():
        words = span.split()[1:]
        path = command_path(words)
        first = words[len(path)] if len(words) > len(path) else None
        if not path and first is not None:
            if re.fullmatch(r"[a-z][a-z-]*", first):
                wrong.append(f"{page}: `{span}`: no command {first!r}")
            if not first.startswith("-"):
                continue  # `kafkadiag ... --format json`, `kafkadiag COMMAND --help`: any command
        shown = help_of(path)
        wrong += [f"{page}: `{span}`: {option}" for option in _OPTION.findall(span) if option not in shown]
    assert not wrong, "commands or options the docs name that kafkadiag does not have:\n" + "\n".join(wrong)
