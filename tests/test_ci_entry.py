"""CI runs `.ci/run` as a program from a fresh clone: the mode git records is what it gets."""

import subprocess
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def test_ci_entry_point_is_committed_executable():
    staged = subprocess.run(
        ["git", "ls-files", "--stage", ".ci/run"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    assert staged, ".ci/run is not tracked"
    assert staged[0] == "100755", (
        f".ci/run is committed with mode {staged[0]}; run `git update-index --chmod=+x .ci/run`"
    )
