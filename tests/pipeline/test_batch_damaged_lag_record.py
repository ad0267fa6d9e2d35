"""batch reads a damaged lag record as lag history does: the damaged lines are quarantined, the
rest evaluated, and nothing is a crash."""

from __future__ import annotations

import json
from pathlib import Path

from tests.infra.cli import run

CORPUS = Path(__file__).resolve().parents[1] / "fuzz" / "crashes" / "lag-record--damaged-lines-of-every-kind"


def test_a_record_with_damaged_lines_is_evaluated_and_its_bad_lines_quarantined(tmp_path: Path) -> None:
    # GIVEN a record whose last line is a snapshot and the others each damaged in one way
    # (binary bytes, a list, taken_at_ms a string, null or list, fields of the wrong type)
    record = tmp_path / "lag-snapshots.jsonl"
    record.write_bytes(CORPUS.read_bytes()[1:])
    # WHEN batch reads it
    code, out, err = run(["batch", str(record), "--out", str(tmp_path / "out")])
    # THEN it finishes, with the good snapshot's rows and a quarantine record per line it refused
    assert code == 0, err
    rows = [json.loads(line) for line in (tmp_path / "out" / "lag.jsonl").read_text().splitlines()]
    assert rows and all(isinstance(row["time_ms"], int) for row in rows)
    reasons = [
        json.loads(line)["reason"]
        for line in (tmp_path / "out" / "quarantine.jsonl").read_text().splitlines()
    ]
    assert any("taken_at_ms missing" in reason for reason in reasons), reasons
    assert all("skipped, not a recorded snapshot" in reason for reason in reasons)
