"""Which files of a capture bundle are dumps is one rule (kafkadiag.collect.bundle.dump_like_names),
whether the bundle is read locally without a usable manifest or listed by name on a remote
filesystem by `batch`: never the manifest, the per-thread CPU files or the metrics (a remote
bundle's metrics.json and threads-cpu files were once read as dumps, and quarantined)."""

from __future__ import annotations

import json
from pathlib import Path

from kafkadiag.collect.bundle import dump_like_names, read_bundle
from tests.conftest import CAPTURED

# The files `kafkadiag capture --count 2` writes (kafkadiag/collect/capture.py).
CAPTURE_LAYOUT = (
    "manifest.json", "dump-001.txt", "threads-cpu-001.json", "dump-002.txt", "threads-cpu-002.json",
    "metrics.json",
)  # fmt: skip


def test_the_dumps_of_a_capture_layout_are_its_dump_files_in_order() -> None:
    assert dump_like_names(CAPTURE_LAYOUT) == ["dump-001.txt", "dump-002.txt"]


def test_a_bundle_whose_manifest_lists_nothing_takes_its_dumps_by_the_same_rule(tmp_path: Path) -> None:
    # GIVEN a capture's files, real dumps, and a manifest that lists no dump
    dump = (CAPTURED / "deadlock" / "jstack-l.txt").read_text(encoding="utf-8")
    for name in CAPTURE_LAYOUT:
        (tmp_path / name).write_text(dump if name.startswith("dump-") else json.dumps({"pid": 4711}))
    # WHEN the bundle is read THEN its dumps are those the remote listing would take
    bundle = read_bundle(str(tmp_path))
    assert [Path(path).name for path in bundle.files] == dump_like_names(CAPTURE_LAYOUT)
    assert any("lists no dumps" in reason for reason in bundle.refused)
