"""The command-line options that raise the input bounds of kafkadiag.readlimits.

Each option is stored in its environment variable rather than passed down: the bounds apply in
the reading layer, which every command reaches by a different path (dump files, capture
bundles, `diagnose --from`, the batch job's Spark workers, which inherit the environment).
"""

from __future__ import annotations

import os
from typing import Any

import click

from kafkadiag.readlimits import (
    DEFAULT_MAX_EXPANSION,
    DEFAULT_MAX_INPUT_BYTES,
    DEFAULT_MAX_JSON_CHARS,
    DEFAULT_MAX_LINE_CHARS,
    ENV_MAX_EXPANSION,
    ENV_MAX_INPUT_SIZE,
    ENV_MAX_JSON_SIZE,
    ENV_MAX_LINE_LENGTH,
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
            self.fail(str(error), param, ctx)
        return str(value)


def _store(variable: str) -> Any:
    def store(ctx: click.Context, param: click.Parameter, value: str | None) -> None:
        if value is not None:
            os.environ[variable] = value

    return store


def _size(size: int) -> str:
    return format_size(size).replace(" ", "")


def input_bound_options(command: Any) -> Any:
    """--max-input-size, --max-expansion, --max-line-length and --max-json-size on a command."""
    options = [
        ("--max-input-size", ENV_MAX_INPUT_SIZE, _Bound("size", parse_size), _size(DEFAULT_MAX_INPUT_BYTES),
         "Most text read from one input, after decompression"),
        ("--max-expansion", ENV_MAX_EXPANSION, _Bound("factor", parse_ratio), str(DEFAULT_MAX_EXPANSION),
         "Most a gzip input may expand, as a multiple of its compressed size"),
        ("--max-line-length", ENV_MAX_LINE_LENGTH, _Bound("size", parse_size), _size(DEFAULT_MAX_LINE_CHARS),
         "Longest line of text read; longer lines are cut, with a caveat"),
        ("--max-json-size", ENV_MAX_JSON_SIZE, _Bound("size", parse_size), _size(DEFAULT_MAX_JSON_CHARS),
         "Most characters of one JSON dump document"),
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
