"""A parser that fails part-way is an input error naming the failure (exit 3), and the dumps read
before it are still analysed: exit 4 is for bugs the user can do nothing about, and a parser's
failure on an input nobody foresaw must not lose the dumps it had already read.

No input is known to make a parser fail any more (each one found became a total parse: see
test_bad_input_is_not_a_crash.py), so the failure is made here: the real HotSpot parser, told to
fail on the line after the third dump's banner of a real three-dump kill -3 log."""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from typing import Any

import pytest

import kafkadiag.dumps
from kafkadiag.exitcodes import ExitCode
from kafkadiag.model import DumpFormat
from tests.conftest import CAPTURED
from tests.infra.cli import run

LOG = CAPTURED / "deadlock" / "kill3-stdout.log"


@pytest.fixture
def parser_failing_at_third_banner(monkeypatch: pytest.MonkeyPatch) -> None:
    real_parser_for: Callable[[DumpFormat], Any] = kafkadiag.dumps._parser_for

    def failing_parser_for(fmt: DumpFormat) -> Any:
        parse = real_parser_for(fmt)

        def failing(batches: Iterable[list[str]], source: str) -> Iterator[Any]:
            def lines() -> Iterator[list[str]]:
                banners = 0
                for batch in batches:
                    for line in batch:
                        if banners == 3:  # after the third banner: two dumps are complete
                            raise ValueError("invalid literal for int() with base 10: '1313\u00b2'")
                        banners += line.startswith("Full thread dump")
                        yield [line]

            return parse(lines(), source)

        return failing

    monkeypatch.setattr(kafkadiag.dumps, "_parser_for", failing_parser_for)


def test_parser_failing_midway_exits_3_naming_it_and_still_analyses_what_was_read(
    parser_failing_at_third_banner: None,
) -> None:
    code, out, err = run(["dump", "analyze", str(LOG), "--format", "json"])
    assert code == ExitCode.INPUT_UNREADABLE, err
    assert "the hotspot parser failed (ValueError: invalid literal" in err and "Traceback" not in err
    assert "what follows was not read" in err and "bug in kafkadiag" in err
    report = json.loads(out)
    assert report["findings"], "the first dump, read before the failure, was not analysed"


def test_parser_failing_midway_in_dump_parse_lists_the_dumps_read(
    parser_failing_at_third_banner: None,
) -> None:
    code, out, err = run(["dump", "parse", str(LOG), "--format", "json"])
    assert code == ExitCode.INPUT_UNREADABLE, err
    document = json.loads(out)
    assert 1 <= len(document["dumps"]) < 3
    assert "parser failed" in document["inputs"][0]["error"]
