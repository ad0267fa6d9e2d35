"""Parsed-output goldens for every captured fixture.

Each golden holds the parse of one captured file in the documented JSON schema, together with the
sha256 of the input it was made from. When a fixture is recaptured, its hash no longer matches and
the test says so: regenerate with `pytest tests/dumps/test_goldens.py --update-goldens` and review
the diff. Goldens are never edited by hand.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from kafkadiag.dumps import read_dumps
from kafkadiag.dumps.summary import summarize
from kafkadiag.report.dump_json import dump_json

from ..conftest import CAPTURED, REPO

GOLDENS = Path(__file__).parent / "goldens"
CAPTURED_FILES = sorted(p for p in CAPTURED.glob("*/*") if p.is_file())


def parsed(path: Path) -> list[dict]:
    relative = path.relative_to(REPO).as_posix()
    result = []
    for dump in read_dumps(str(path)):
        document = dump_json(summarize(dump))
        document["source"] = relative
        result.append(document)
    return result


@pytest.mark.parametrize("path", CAPTURED_FILES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_parse_matches_golden(path: Path, request: pytest.FixtureRequest) -> None:
    golden_path = GOLDENS / path.parent.name / (path.name + ".json")
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    actual = parsed(path)
    if request.config.getoption("--update-goldens"):
        golden_path.parent.mkdir(parents=True, exist_ok=True)
        # One thread per line: compact, yet a recapture shows up as a readable diff.
        lines = [f'{{"input_sha256": "{digest}", "dumps": [']
        for index, dump in enumerate(actual):
            threads = dump.pop("threads")
            lines.append(json.dumps(dump, ensure_ascii=False)[:-1] + ', "threads": [')
            lines.append(",\n".join(json.dumps(thread, ensure_ascii=False) for thread in threads))
            lines.append("]}" + ("," if index < len(actual) - 1 else ""))
        lines.append("]}")
        golden_path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        return
    assert golden_path.is_file(), f"no golden for {path.name}: run pytest with --update-goldens"
    golden = json.loads(golden_path.read_text(encoding="utf-8"))
    assert golden["input_sha256"] == digest, (
        f"{path} changed since its golden was made: rerun with --update-goldens and review the diff"
    )
    assert actual == golden["dumps"]


def test_every_captured_file_has_a_golden_and_no_golden_is_orphaned() -> None:
    expected = {GOLDENS / p.parent.name / (p.name + ".json") for p in CAPTURED_FILES}
    present = set(GOLDENS.glob("*/*.json"))
    assert present == expected
