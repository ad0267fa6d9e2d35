"""Command-line conventions every command keeps: one `--format` vocabulary (table for people,
json for machines, the old `text` still accepted), `-V`, and whole-phrase command summaries.

Each case runs the installed CLI as its own process, as a shell or a script would.
"""

from __future__ import annotations

import os
import subprocess
import sys
from importlib.metadata import version
from pathlib import Path

import click
import pytest

from kafkadiag.cli import cli
from kafkadiag.exitcodes import ExitCode

STALL_DUMP = Path("real-old-consumer-stall-0.8.2.2") / "jstack-l.txt"


def kafkadiag(*args: str, columns: int = 80) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "COLUMNS": str(columns), "NO_COLOR": "1"}
    env.pop("KAFKADIAG_WIDTH", None)
    return subprocess.run(
        [sys.executable, "-m", "kafkadiag", *args], capture_output=True, text=True, env=env, timeout=120
    )


def every_command(
    group: click.Group = cli, path: tuple[str, ...] = ()
) -> list[tuple[tuple[str, ...], click.Command]]:
    found = []
    for name, command in sorted(group.commands.items()):
        found.append(((*path, name), command))
        if isinstance(command, click.Group):
            found += every_command(command, (*path, name))
    return found


def format_choices(command: click.Command) -> tuple[str, ...] | None:
    for param in command.params:
        if param.name == "output_format":
            assert isinstance(param.type, click.Choice)
            return tuple(param.type.choices)
    return None


def test_every_format_option_names_the_human_form_table_and_defaults_to_it() -> None:
    with_format = [(path, command) for path, command in every_command() if format_choices(command)]
    # GIVEN every command that takes --format (dump parse/analyze, check, lag, maxlag, diagnose ...)
    assert len(with_format) >= 8, [path for path, _ in with_format]
    for path, command in with_format:
        choices = format_choices(command)
        assert choices is not None and choices[0] == "table", (path, choices)
        assert "text" not in choices, (path, choices)
        default = next(param.default for param in command.params if param.name == "output_format")
        assert default == "table", (path, default)


def test_help_lists_table_and_not_the_old_word() -> None:
    result = kafkadiag("check", "--help")
    assert result.returncode == 0, result.stderr
    assert "[table|json|junit]" in result.stdout, result.stdout
    assert "text" not in result.stdout.split("--format", 1)[1].split("\n")[0], result.stdout


def test_the_old_word_text_still_gives_the_table_report(captured: Path) -> None:
    # GIVEN a script written when `check` called its human form `text`
    dump = str(captured / STALL_DUMP)
    # WHEN any command is given --format text
    as_text = kafkadiag("dump", "analyze", dump, "--format", "text")
    as_table = kafkadiag("dump", "analyze", dump, "--format", "table")
    # THEN it is the table report, byte for byte, with the same exit code
    assert as_table.returncode == ExitCode.FINDINGS, as_table.stderr
    assert (as_text.returncode, as_text.stdout) == (as_table.returncode, as_table.stdout), as_text.stderr


def test_check_accepts_text_as_before() -> None:
    # Nothing listens on port 1: the check cannot be made (3), but the option is taken (not 2).
    common = ("check", "--zookeeper", "127.0.0.1:1", "--group", "orders", "--timeout", "1s")
    as_text = kafkadiag(*common, "--format", "text")
    as_table = kafkadiag(*common, "--format", "table")
    assert as_text.returncode == ExitCode.INPUT_UNREADABLE, as_text.stderr
    assert as_text.stdout == as_table.stdout and as_text.stdout.strip(), as_text.stdout


def test_a_format_no_command_knows_is_a_usage_error(captured: Path) -> None:
    result = kafkadiag("dump", "analyze", str(captured / STALL_DUMP), "--format", "txt")
    assert result.returncode == ExitCode.USAGE, result.stderr
    assert "'txt' is not one of 'table', 'json'" in result.stderr, result.stderr


@pytest.mark.parametrize("flag", ["-V", "--version"])
def test_version_flags_print_the_installed_version(flag: str) -> None:
    result = kafkadiag(flag)
    assert result.returncode == 0, result.stderr
    assert result.stdout == f"kafkadiag, version {version('kafkadiag')}\n", result.stdout


@pytest.mark.parametrize("group", [(), ("dump",), ("lag",)])
@pytest.mark.parametrize("columns", [80, 120])
def test_command_summaries_are_whole_phrases(group: tuple[str, ...], columns: int) -> None:
    result = kafkadiag(*group, "--help", columns=columns)
    assert result.returncode == 0, result.stderr
    listing = result.stdout.split("Commands:\n", 1)[1]
    summaries = [line.split(None, 1) for line in listing.splitlines() if line.strip()]
    assert summaries, result.stdout
    for name, summary in summaries:
        # A summary cut by click ends in "..."; a whole one is a sentence, on one line.
        assert not summary.endswith("..."), (name, summary)
        assert summary.endswith("."), (name, summary)
        assert len(name) + len(summary) + 4 <= columns, (name, summary)


def test_every_command_has_a_short_help_of_its_own() -> None:
    for path, command in every_command():
        assert command.short_help, f"{' '.join(path)} has no short_help: --help would cut its docstring"
        assert len(command.short_help) <= 60, (path, command.short_help)


def test_every_help_fits_80_columns() -> None:
    from click.testing import CliRunner

    # GIVEN every command's --help, laid out by click at COLUMNS=80 (in this process: click reads
    # the width from COLUMNS, as it does in a shell)
    runner = CliRunner(env={"COLUMNS": "80"})
    commands = [(), *(path for path, _ in every_command())]
    for path in commands:
        result = runner.invoke(cli, [*path, "--help"])
        assert result.exit_code == 0, (path, result.output)
        # THEN no line is wider than the terminal
        wide = [line for line in result.output.splitlines() if len(line) > 80]
        assert not wide, (path, wide)
    assert ("dump", "analyze") in commands and len(commands) >= 14, commands


def test_input_format_names_its_formats_in_help_and_completes_them() -> None:
    from click.shell_completion import CompletionItem

    result = kafkadiag("dump", "analyze", "--help")
    assert "--input-format FORMAT" in result.stdout, result.stdout
    # The formats are named whole (not cut at a hyphen), and the shell still completes them
    assert "py-spy-json" in result.stdout and "guru-meditation" in result.stdout, result.stdout
    analyze = cli.commands["dump"].commands["analyze"]  # type: ignore[attr-defined]
    param = next(param for param in analyze.params if param.name == "input_format")
    completed = param.shell_complete(click.Context(analyze), "py-")
    assert [item.value for item in completed if isinstance(item, CompletionItem)] == [
        "py-spy",
        "py-spy-json",
        "py-traceback",
    ]
