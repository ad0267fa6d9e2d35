"""The command-line options that raise the input bounds of kafkadiag.readlimits.

Each option is stored in its environment variable rather than passed down: the bounds apply in
the reading layer, which every command reaches by a different path (dump files, capture
bundles, `diagnose --from`, the batch job's Spark workers, which inherit the environment).
"""

from __future__ import annotations

import os
from typing import Any

import click
from click.core import ParameterSource

from kafkadiag.readlimits import (
    DEFAULT_MAX_EXPANSION,
    DEFAULT_MAX_INPUT_BYTES,
    DEFAULT_MAX_JSON_CHARS,
    DEFAULT_MAX_LINE_CHARS,
    DEFAULT_MAX_MEMORY_BYTES,
    ENV_MAX_EXPANSION,
    ENV_MAX_INPUT_SIZE,
    ENV_MAX_JSON_SIZE,
    ENV_MAX_LINE_LENGTH,
    ENV_MAX_MEMORY,
    format_size,
    parse_ratio,
    parse_size,
)


class _Bound(click.ParamType):
    """A bound given on the command line: checked like its environment variable, then stored in
    it (see the module's docstring for why the environment carries it)."""

    def __init__(self, name: str, parse: Any) -> None:
        self.name = name
        self._parse = parse

    def convert(self, value: Any, param: Any, ctx: Any) -> str:
        try:
            self._parse(str(value))
        except ValueError as error:
            self.fail(f"{error}{_from_environment(param, ctx)}", param, ctx)
        return str(value)


def _from_environment(param: Any, ctx: Any) -> str:
    """Where a bad value came from, when not from the command line: its environment variable."""
    if (
        ctx is None
        or param is None
        or ctx.get_parameter_source(param.name) is not ParameterSource.ENVIRONMENT
    ):
        return ""
    return f" (set by {param.envvar})"


def _store(variable: str) -> Any:
    def store(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
        if value is None:
            return
        # For this command only: the environment is given back as it was when the command ends
        # (tests and callers of main() run many commands in one process).
        previous = os.environ.get(variable)
        os.environ[variable] = value
        ctx.call_on_close(lambda: _restore(variable, previous))

    return store


def _restore(variable: str, previous: str | None) -> None:
    if previous is None:
        os.environ.pop(variable, None)
    else:
        os.environ[variable] = previous


def _size(size: int) -> str:
    return format_size(size).replace(" ", "")


def input_bound_options(command: Any) -> Any:
    """--max-input-size, --max-expansion, --max-line-length, --max-json-size and --max-memory."""
    options = [
        ("--max-input-size", ENV_MAX_INPUT_SIZE, _Bound("size", parse_size), _size(DEFAULT_MAX_INPUT_BYTES),
         "Most text read from one input, after decompression"),
        ("--max-expansion", ENV_MAX_EXPANSION, _Bound("factor", parse_ratio), str(DEFAULT_MAX_EXPANSION),
         "Most a gzip input may expand, as a multiple of its compressed size"),
        ("--max-line-length", ENV_MAX_LINE_LENGTH, _Bound("size", parse_size), _size(DEFAULT_MAX_LINE_CHARS),
         "Longest line of text read; longer lines are cut, with a caveat"),
        ("--max-json-size", ENV_MAX_JSON_SIZE, _Bound("size", parse_size), _size(DEFAULT_MAX_JSON_CHARS),
         "Most characters of one JSON dump document"),
        ("--max-memory", ENV_MAX_MEMORY, _Bound("size", parse_size), _size(DEFAULT_MAX_MEMORY_BYTES),
         "Most memory reading one input may take"),
    ]  # fmt: skip
    for flag, variable, kind, default, text in reversed(options):
        command = click.option(
            flag,
            type=kind,
            default=None,
            expose_value=False,
            is_eager=True,
            envvar=variable,
            callback=_store(variable),
            help=f"{text} [default: {default}]. Env: {variable}.",
        )(command)
    return command
