"""`kafkadiag batch` over input folders that hold what cannot be read, and --out directories that
are links. GIVEN a folder with a real captured dump beside a FIFO, a symlink to /dev/zero, a
folder that cannot be listed and capture bundles with crafted manifests, WHEN one batch job (a
real local Spark) analyses it into an --out that is a symlink to an empty folder, THEN it
finishes (a FIFO or /dev/zero read to the end would block it for ever), quarantines each of them
with the reason, still analyses every readable dump, and writes its results into the folder the
link names. A dangling --out link is refused before the job starts."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafkadiag.exitcodes import ExitCode
from tests.conftest import CAPTURED
from tests.infra.cli import run

DUMP = CAPTURED / "deadlock" / "jstack-l.txt"


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def bundle(directory: Path, manifest: str) -> None:
    directory.mkdir()
    (directory / "dump-001.txt").write_bytes(DUMP.read_bytes())
    (directory / "manifest.json").write_text(manifest, encoding="utf-8")


def unlistable(directory: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A folder this user cannot list. Root lists it whatever its mode, so for root the listing
    fails as the kernel fails it for anyone else (os.walk runs in the driver, in this process)."""
    directory.mkdir()
    (directory / "dump.txt").write_bytes(DUMP.read_bytes())
    directory.chmod(0)
    if os.geteuid() == 0:
        real_scandir = os.scandir

        def scandir(path: Any = ".") -> Any:
            if isinstance(path, (str, os.PathLike)) and os.path.realpath(path) == os.path.realpath(directory):
                raise PermissionError(13, "Permission denied", str(path))
            return real_scandir(path)

        monkeypatch.setattr(os, "scandir", scandir)


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Path]]:
    base = tmp_path_factory.mktemp("hostile")
    inputs = base / "inputs"
    inputs.mkdir()
    (inputs / "jstack-l.txt").write_bytes(DUMP.read_bytes())
    os.mkfifo(inputs / "pipe.fifo")
    (inputs / "zero.txt").symlink_to("/dev/zero")
    bundle(inputs / "bundle-list", "[1, 2]")
    bundle(inputs / "bundle-deep", '{"dumps": ' + "[" * 100_000 + "]" * 100_000 + "}")
    bundle(inputs / "bundle-escape", json.dumps({"dumps": [{"file": "../../../../../../etc/passwd"}]}))
    yield {"base": base, "inputs": inputs}
    locked = inputs / "locked"
    if locked.exists():
        locked.chmod(0o755)  # so that pytest can remove it


@pytest.fixture(scope="module")
def batch_run(hostile: dict[str, Path]) -> dict[str, Any]:
    monkeypatch = pytest.MonkeyPatch()
    try:
        unlistable(hostile["inputs"] / "locked", monkeypatch)
        empty = hostile["base"] / "results"
        empty.mkdir()
        link = hostile["base"] / "out"
        link.symlink_to(empty)
        started = time.monotonic()
        code, out, err = run(["batch", str(hostile["inputs"]), "--out", str(link)])
        return {"code": code, "out": out, "err": err, "seconds": time.monotonic() - started,
                "link": link, "results": empty}  # fmt: skip
    finally:
        monkeypatch.undo()


def quarantined(batch_run: dict[str, Any]) -> dict[str, str]:
    records = read_lines(batch_run["results"] / "quarantine.jsonl")
    return {Path(record["path"]).name: record["reason"] for record in records}


@pytest.mark.timeout(300)
def test_batch_with_a_fifo_and_dev_zero_in_its_input_finishes_and_quarantines_them(
    batch_run: dict[str, Any],
) -> None:
    assert batch_run["code"] == ExitCode.FINDINGS, batch_run["err"]
    reasons = quarantined(batch_run)
    assert "a FIFO, not a regular file" in reasons["pipe.fifo"]
    assert "a character device, not a regular file" in reasons["zero.txt"]


def test_batch_quarantines_a_folder_it_cannot_list(batch_run: dict[str, Any]) -> None:
    assert "cannot be listed: Permission denied" in quarantined(batch_run)["locked"]
    summary = json.loads((batch_run["results"] / "summary.json").read_text())
    assert summary["counts"]["quarantined"] == len(read_lines(batch_run["results"] / "quarantine.jsonl"))


def test_one_bad_bundle_manifest_does_not_abort_the_batch(batch_run: dict[str, Any]) -> None:
    records = read_lines(batch_run["results"] / "quarantine.jsonl")
    reasons = {Path(r["path"]).name: r["reason"] for r in records if r.get("kind") == "bundle"}
    assert "not a capture manifest" in reasons["bundle-list"]
    assert "nested deeper than 64 levels" in reasons["bundle-deep"]
    assert "leads outside the bundle (to /etc/passwd)" in reasons["bundle-escape"]
    findings = read_lines(batch_run["results"] / "findings.jsonl")
    units = {Path(f["unit"]).name for f in findings if f["rule"] == "KD101"}
    # every bundle's real dump is still analysed, and the loose one
    assert {"bundle-list", "bundle-deep", "jstack-l.txt"} <= units
    assert "root:x:0:0" not in (batch_run["results"] / "findings.jsonl").read_text()


def test_out_as_a_symlink_to_an_empty_folder_gets_the_results(batch_run: dict[str, Any]) -> None:
    link: Path = batch_run["link"]
    assert link.is_symlink() and os.path.realpath(link) == str(batch_run["results"])
    assert (batch_run["results"] / "summary.json").is_file()
    assert str(link) in batch_run["out"]


def test_out_as_a_dangling_symlink_is_refused_before_the_job_runs(tmp_path: Path) -> None:
    link = tmp_path / "out"
    link.symlink_to(tmp_path / "missing" / "results")
    started = time.monotonic()
    code, _, err = run(["batch", str(DUMP), "--out", str(link)])
    assert code == ExitCode.USAGE, err
    assert (
        f"--out {link} is a symbolic link to {tmp_path / 'missing' / 'results'}, which does not exist" in err
    )
    assert time.monotonic() - started < 5, "the check must come before Spark starts"
    assert os.listdir(tmp_path) == ["out"]
