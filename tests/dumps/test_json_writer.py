"""`dump parse --format json` writes its text straight from the model (report/dump_json.py,
`dump_text`) rather than through json.dumps of the documented dicts; the goldens check the dicts.

GIVEN every captured fixture and every file of the shared corpus; WHEN each dump is written by
the text writer; THEN the text is exactly json.dumps(dump_json(...)): the same members, order,
spacing, escaping and numbers, so the goldens hold for what the command writes.
"""

from __future__ import annotations

import json
from pathlib import Path

from kafkadiag.dumps.summary import InputFailure, summarize_files
from kafkadiag.report.dump_json import dump_json, dump_text

from ..conftest import CAPTURED


def _first_difference(expected: str, actual: str) -> str:
    index = next(
        (i for i, (a, b) in enumerate(zip(expected, actual)) if a != b), min(len(expected), len(actual))
    )
    return (
        f"expected ...{expected[index - 60 : index + 60]!r}\n  actual ...{actual[index - 60 : index + 60]!r}"
    )


def test_the_text_writer_writes_what_json_dumps_writes(corpus: Path) -> None:
    files = sorted(p for root in (CAPTURED, corpus) for p in root.rglob("*") if p.is_file())
    compared = 0
    for path in files:
        for result in summarize_files((str(path),), None, lambda *_: None):
            if isinstance(result, InputFailure):
                continue
            expected = json.dumps(dump_json(result), ensure_ascii=False)
            actual = dump_text(result)
            assert actual == expected, f"{path}: {_first_difference(expected, actual)}"
            compared += 1
    assert compared > 400


def test_special_numbers_and_escapes_are_written_as_json_dumps_writes_them() -> None:
    from kafkadiag.report.dump_json import _scalar

    for value in (
        None,
        True,
        False,
        0,
        -3,
        2**70,
        1.5,
        1e-7,
        float("nan"),
        float("inf"),
        'a"b\\\n\u0001é\u2028',
    ):
        assert _scalar(value) == json.dumps(value, ensure_ascii=False), value
