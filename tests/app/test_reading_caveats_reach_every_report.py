"""What reading a dump file had to repair is said by every command that analyses it: `dump
analyze`, `diagnose --from` (a dump file, or a capture bundle) and `batch` read their files through
the same `kafkadiag.app.analyze.analyze_dumps`, so none of them drops "decoded as UTF-16" or "an
HTML page, read as its text" (both once lost by `diagnose --from` and `batch`)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from kafkadiag.exitcodes import ExitCode
from tests.conftest import CAPTURED
from tests.dumps import mangle
from tests.infra.cli import run, run_json

JSTACK = CAPTURED / "deadlock" / "jstack-l.txt"
UTF16 = "decoded as utf-16"
HTML = "an HTML page, read as its text"


@pytest.fixture()
def repaired(tmp_path: Path) -> dict[str, Path]:
    """GIVEN a captured jstack -l (a deadlock) saved as UTF-16 by a Windows editor, and the same
    dump inside a blog page's highlighted block."""
    text = JSTACK.read_text(encoding="utf-8")
    utf16 = tmp_path / "windows-notepad.txt"
    utf16.write_bytes(text.encode("utf-16"))
    page = tmp_path / "post.html"
    page.write_text(mangle.html_page_highlighted(text), encoding="utf-8")
    return {"utf16": utf16, "page": page}


def _said(caveats: list[str], path: Path, what: str) -> bool:
    return any(caveat.startswith(f"{path}:") and what.lower() in caveat.lower() for caveat in caveats)


def test_dump_analyze_says_what_reading_repaired(repaired: dict[str, Path]) -> None:
    report = run_json(["dump", "analyze", str(repaired["utf16"]), str(repaired["page"])], ExitCode.FINDINGS)
    assert _said(report["caveats"], repaired["utf16"], UTF16), report["caveats"]
    assert _said(report["caveats"], repaired["page"], HTML), report["caveats"]


def test_diagnose_from_dump_files_says_what_reading_repaired(repaired: dict[str, Path]) -> None:
    # WHEN the files are diagnosed offline
    args = ["diagnose", "--from", str(repaired["utf16"]), "--from", str(repaired["page"])]
    diagnosis = run_json(args, ExitCode.FINDINGS)
    # THEN the deadlock is found and the caveats are those of `dump analyze`
    assert any(finding["rule"] == "KD101" for finding in diagnosis["findings"]), diagnosis["findings"]
    assert _said(diagnosis["caveats"], repaired["utf16"], UTF16), diagnosis["caveats"]
    assert _said(diagnosis["caveats"], repaired["page"], HTML), diagnosis["caveats"]
    code, table, err = run(args)
    assert code == ExitCode.FINDINGS, err
    unwrapped = " ".join(table.split())
    assert "Caveats\n" in table and f"{repaired['utf16']}: decoded as utf-16" in unwrapped, table


def test_diagnose_from_a_bundle_says_what_reading_its_dumps_repaired(
    repaired: dict[str, Path], tmp_path: Path
) -> None:
    # GIVEN a capture bundle whose dump was saved as UTF-16
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    shutil.copy(repaired["utf16"], bundle / "dump-001.txt")
    (bundle / "manifest.json").write_text(json.dumps({"dumps": [{"file": "dump-001.txt"}]}))
    diagnosis = run_json(["diagnose", "--from", str(bundle)], ExitCode.FINDINGS)
    assert _said(diagnosis["caveats"], bundle / "dump-001.txt", UTF16), diagnosis["caveats"]


def test_batch_says_what_reading_each_input_repaired(repaired: dict[str, Path], tmp_path: Path) -> None:
    # WHEN both files are analysed as a batch on a real local Spark
    out = tmp_path / "out"
    code, _, err = run(["batch", str(repaired["utf16"]), str(repaired["page"]), "--out", str(out)])
    assert code == ExitCode.FINDINGS, err
    # THEN summary.json lists each input's caveats, as `dump analyze` words them
    caveats = json.loads((out / "summary.json").read_text())["caveats"]
    by_unit = {entry["unit"]: entry["caveat"] for entry in caveats if UTF16 in entry["caveat"].lower()}
    assert str(repaired["utf16"]) in by_unit, caveats
    page = str(repaired["page"])
    assert any(entry["unit"] == page and HTML in entry["caveat"] for entry in caveats), caveats


def test_a_missing_bundle_beside_a_readable_one_is_named_and_the_rest_diagnosed(
    repaired: dict[str, Path], tmp_path: Path
) -> None:
    # GIVEN a --from that names nothing beside one that holds a deadlock
    missing = tmp_path / "missing"
    args = ["diagnose", "--from", str(missing), "--from", str(repaired["utf16"])]
    # WHEN diagnosed THEN the missing one is a source not read (exit 3 would be the code without a
    # finding), and the readable one is still read, its caveat said
    diagnosis = run_json(args, ExitCode.FINDINGS)
    failed = {source["target"]: source["detail"] for source in diagnosis["sources"] if not source["ok"]}
    assert failed == {f"bundle {missing}": "no such file or directory"}, diagnosis["sources"]
    assert any(finding["rule"] == "KD101" for finding in diagnosis["findings"])
    assert _said(diagnosis["caveats"], repaired["utf16"], UTF16), diagnosis["caveats"]
