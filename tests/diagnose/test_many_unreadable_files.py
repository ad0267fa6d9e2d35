"""Directories given to `diagnose --from` that are not what a bundle is. GIVEN 20,000 empty
files beside one real dump, WHEN `diagnose --from` reads them, THEN it answers in seconds, naming
the first files not read and counting the rest. Each file was a source of its own, told in the
story and again under Sources, each looked up in all the others: 8,000 files took 23 s, 100,000
over 5 minutes. A bundle that is a symlink loop is named as one, not as missing."""

from __future__ import annotations

import json
import time
from pathlib import Path

from kafkadiag.app.diagnose import NAMED_UNREAD_FILES
from kafkadiag.exitcodes import ExitCode
from tests.conftest import CAPTURED
from tests.infra.cli import run

EMPTY_FILES = 20_000


def _bundle(tmp_path: Path) -> Path:
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    for number in range(EMPTY_FILES):
        (bundle / f"empty-{number:05d}.txt").touch()
    (bundle / "zz-jstack.txt").write_bytes((CAPTURED / "deadlock" / "jstack-l.txt").read_bytes())
    return bundle


def test_20000_empty_files_are_counted_in_seconds(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path)
    started = time.monotonic()
    code, out, err = run(["diagnose", "--from", str(bundle)])
    assert time.monotonic() - started < 60
    assert code == ExitCode.FINDINGS, err
    more = f"{EMPTY_FILES - NAMED_UNREAD_FILES:,} more file(s) of {bundle}"
    said = " ".join(out.split())  # lines wrapped at spaces, joined back
    assert f"Not read: {more}: `kafkadiag dump parse {bundle}` names each and why." in said, out
    assert f"{bundle}/empty-00000.txt" in said and f"{bundle}/empty-00020.txt" not in said


def test_the_json_report_names_as_many_and_counts_the_rest(tmp_path: Path) -> None:
    bundle = _bundle(tmp_path)
    code, out, err = run(["diagnose", "--from", str(bundle), "--format", "json"])
    assert code == ExitCode.FINDINGS, err
    unread = [source["target"] for source in json.loads(out)["sources"] if not source["ok"]]
    assert len(unread) == NAMED_UNREAD_FILES + 1, unread
    assert unread[-1] == f"{EMPTY_FILES - NAMED_UNREAD_FILES:,} more file(s) of {bundle}"


def test_a_bundle_that_is_a_symlink_loop_is_named_as_one(tmp_path: Path) -> None:
    # It was said to be missing ("no such file or directory"): os.path.exists is False for a loop
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    code, _, err = run(["diagnose", "--from", str(tmp_path / "a")])
    assert code == ExitCode.INPUT_UNREADABLE, err
    assert f"bundle {tmp_path / 'a'} not read: too many levels of symbolic links" in err, err
