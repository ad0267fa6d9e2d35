"""Capture bundles with crafted manifests and files: GIVEN a bundle made of a real captured dump
and a manifest or file someone else wrote, WHEN `dump analyze DIR` or `diagnose --from DIR` reads
it, THEN nothing outside the bundle's directory is opened or quoted, no FIFO is waited on, each
refused entry is named, and the bundle's real dump is still analysed (its deadlock found)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from kafkadiag.exitcodes import ExitCode
from tests.conftest import CAPTURED
from tests.infra.cli import run

DUMP = CAPTURED / "deadlock" / "jstack-l.txt"
# A line of /etc/passwd that any Linux has: quoted as evidence, it would show the file was read.
PASSWD_LINE = "root:x:0:0:"


def bundle(directory: Path, manifest: str | None) -> Path:
    """A bundle directory holding the real dump as dump-001.txt and `manifest` as written."""
    directory.mkdir()
    (directory / "dump-001.txt").write_bytes(DUMP.read_bytes())
    if manifest is not None:
        (directory / "manifest.json").write_text(manifest, encoding="utf-8")
    return directory


def listing(*names: object) -> str:
    return json.dumps({"schema": "kafkadiag.capture", "version": 1, "pid": 4711, "dumps": list(names)})


def analyze(path: Path) -> tuple[int, dict[str, object], str]:
    code, out, err = run(["dump", "analyze", str(path), "--format", "json"])
    assert "Traceback" not in err and "internal error" not in err, err
    return code, json.loads(out) if out.strip() else {}, err


def rules_found(report: dict[str, object]) -> set[str]:
    return {finding["rule"] for finding in report.get("findings", [])}  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("manifest", "named"),
    [
        ("[1, 2]", "holds a JSON array, not a capture manifest"),
        ('"dumps"', "holds a string, not a capture manifest"),
        ("null", "holds null, not a capture manifest"),
        ('{"dumps": ' + "[" * 100_000 + "]" * 100_000 + "}", "nested deeper than 64 levels"),
        ('{"dumps": [null, {"file": null}, "dump-001.txt"]}', "dump entry 1 names no file (it holds null)"),
        (
            listing({"file": "dump\x00.txt"}, {"file": "dump-001.txt"}),
            "'dump\\x00.txt' holds a NUL character",
        ),
    ],
    ids=["list", "string", "null", "deeply-nested", "null-entries", "nul-in-name"],
)
def test_malformed_manifest_is_a_named_caveat_and_the_dump_is_still_analysed(
    tmp_path: Path, manifest: str, named: str
) -> None:
    path = bundle(tmp_path / "bundle", manifest)
    code, report, err = analyze(path)
    assert code == ExitCode.FINDINGS, err
    assert named in err
    assert "KD101" in rules_found(report)


def test_manifest_holding_file_names_as_strings_is_read(tmp_path: Path) -> None:
    code, report, err = analyze(bundle(tmp_path / "bundle", '{"dumps": ["dump-001.txt"]}'))
    assert code == ExitCode.FINDINGS and "warning" not in err, err
    assert "KD101" in rules_found(report)


@pytest.mark.parametrize(
    ("name", "named"),
    [
        ("/etc/passwd", "'/etc/passwd' is an absolute path, outside the bundle"),
        ("../../../../../../../../etc/passwd", "leads outside the bundle (to /etc/passwd)"),
    ],
    ids=["absolute", "climbing"],
)
def test_manifest_path_outside_the_bundle_is_refused_not_read(tmp_path: Path, name: str, named: str) -> None:
    path = bundle(tmp_path / "bundle", listing({"file": name}, {"file": "dump-001.txt"}))
    code, report, err = analyze(path)
    assert code == ExitCode.FINDINGS, err
    assert named in err
    assert PASSWD_LINE not in json.dumps(report)
    assert "KD101" in rules_found(report)


def test_dump_file_that_is_a_symlink_out_of_the_bundle_is_refused_not_read(tmp_path: Path) -> None:
    path = bundle(tmp_path / "bundle", listing({"file": "dump-000.txt"}, {"file": "dump-001.txt"}))
    (path / "dump-000.txt").symlink_to("/etc/passwd")
    code, report, err = analyze(path)
    assert code == ExitCode.FINDINGS, err
    assert "'dump-000.txt' leads outside the bundle (to /etc/passwd)" in err
    assert PASSWD_LINE not in json.dumps(report)


def test_symlink_out_of_a_bundle_without_manifest_is_refused_in_diagnose(tmp_path: Path) -> None:
    # GIVEN a directory of dumps without a manifest (diagnose --from reads it by file names)
    path = bundle(tmp_path / "dumps", None)
    (path / "dump-000.txt").symlink_to("/etc/passwd")
    # WHEN diagnosed
    code, out, err = run(["diagnose", "--from", str(path), "--format", "json"])
    # THEN the link is a source not read, named, and nothing of the file it names is quoted
    assert code == ExitCode.FINDINGS, err
    diagnosis = json.loads(out)
    assert PASSWD_LINE not in out
    refusals = [s for s in diagnosis["sources"] if not s["ok"] and "leads outside the bundle" in s["detail"]]
    assert refusals, diagnosis["sources"]


def test_fifo_in_a_bundle_is_refused_not_waited_on(tmp_path: Path) -> None:
    path = bundle(tmp_path / "bundle", listing({"file": "dump-000.txt"}, {"file": "dump-001.txt"}))
    os.mkfifo(path / "dump-000.txt")
    code, report, err = analyze(path)  # with the FIFO opened, this would never return
    assert code == ExitCode.FINDINGS, err
    assert "'dump-000.txt' is a FIFO, not a regular file" in err


def test_bundle_whose_every_entry_is_refused_is_an_input_error(tmp_path: Path) -> None:
    path = bundle(tmp_path / "bundle", listing({"file": "/etc/passwd"}))
    code, _, err = analyze(path)
    assert code == ExitCode.INPUT_UNREADABLE, err
    assert "no dump file could be read" in err and "'/etc/passwd' is an absolute path" in err
