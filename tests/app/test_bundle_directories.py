"""A directory of dumps is read by one rule everywhere: `dump analyze DIR` and `diagnose --from
DIR` read the same files, with or without a manifest, and a subdirectory is not an error."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from kafkadiag.exitcodes import ExitCode
from tests.conftest import CAPTURED
from tests.infra.cli import run, run_json

# A capture with three dumps and a subdirectory of kafka-consumer-groups' output, no manifest.
HEALTHY = CAPTURED / "real-new-consumer-healthy-4.1.1"
DUMPS = ["jcmd-thread-print-l.txt", "jstack-l.txt", "jstack.txt"]


def _inputs_of_analyze(directory: Path) -> list[str]:
    report = run_json(["dump", "analyze", str(directory)])
    return [os.path.basename(entry["source"]) for entry in report["inputs"]]


def test_dump_analyze_reads_a_directory_without_a_manifest_as_diagnose_does() -> None:
    assert not (HEALTHY / "manifest.json").exists() and (HEALTHY / "group").is_dir()
    assert _inputs_of_analyze(HEALTHY) == DUMPS
    diagnosis = run_json(["diagnose", "--from", str(HEALTHY)])
    assert diagnosis["sources"] == [
        {"kind": "dump", "target": f"bundle {HEALTHY}", "ok": True, "detail": "3 dump(s)", "help": None}
    ]


def test_a_subdirectory_of_a_bundle_is_skipped_not_reported_as_unread() -> None:
    code, table, err = run(["diagnose", "--from", str(HEALTHY)])
    assert code == ExitCode.OK, (table, err)
    assert table.startswith("Healthy"), table
    assert "NOT READ" not in table and "directory" not in table, table
    assert table.count(f"bundle {HEALTHY}") == 1, table


def test_a_manifest_that_lists_nothing_reads_the_same_files_as_none(tmp_path: Path) -> None:
    bundle = tmp_path / "bundle"
    shutil.copytree(HEALTHY, bundle)
    (bundle / "manifest.json").write_text(json.dumps({"host": "h", "dumps": []}))
    (bundle / "metrics.json").write_text(json.dumps({"beans": []}))
    assert _inputs_of_analyze(bundle) == DUMPS


def test_a_directory_with_no_dump_in_it_is_a_clear_error(tmp_path: Path) -> None:
    (tmp_path / "only-a-subdirectory").mkdir()
    code, _, err = run(["dump", "analyze", str(tmp_path)])
    assert code == ExitCode.INPUT_UNREADABLE, err
    assert f"no dump file could be read from {tmp_path}" in err, err


def test_a_directory_of_subdirectories_says_they_are_not_searched(tmp_path: Path) -> None:
    # The help spoke of a manifest and of warnings above, when there was neither.
    (tmp_path / "only-a-subdirectory").mkdir()
    code, _, err = run(["dump", "analyze", str(tmp_path)])
    assert code == ExitCode.INPUT_UNREADABLE, err
    assert "not in its subdirectories" in err and "warnings above" not in err, err
