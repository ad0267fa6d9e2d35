"""Fuzzing in the suite: a bounded coverage-guided run, and every crash it found replayed.

`test_a_minute_of_coverage_guided_fuzzing_finds_nothing` runs tests/fuzz/fuzz_inputs.py (atheris,
libFuzzer) for FUZZ_SECONDS over every dump format and the capture-bundle manifest reader, seeded
from the captured fixtures (and the public and wild dumps for formats nobody here captured). An
input that crashes, that a parser stops on part-way, that crashes a rule, or that takes longer
than PER_INPUT_TIMEOUT_S fails it; the input is copied into tests/fuzz/crashes/, where
`test_every_input_the_fuzzer_ever_found_is_read_without_a_bug` replays it on every run from then
on (commit it with the fix), named by the format it was read as. Set KAFKADIAG_FUZZ_SECONDS to run
longer.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from .harness import read_as, target_name, target_named, target_of, write_seeds

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
CRASHES = HERE / "crashes"
FUZZ_SECONDS = int(os.environ.get("KAFKADIAG_FUZZ_SECONDS", "60"))
# An input of at most MAX_LEN bytes that takes longer than this is a finding (linear time).
PER_INPUT_TIMEOUT_S = 10
MAX_LEN = 16384


def _regressions() -> list[Path]:
    return sorted(path for path in CRASHES.iterdir() if path.is_file() and not path.name.startswith("."))


@pytest.mark.parametrize("case", _regressions(), ids=lambda path: path.name)
def test_every_input_the_fuzzer_ever_found_is_read_without_a_bug(case: Path, tmp_path: Path) -> None:
    # GIVEN an input that once made kafkadiag fail, named "<format, auto or manifest>--<what>"
    # (its first byte is the fuzzer's choice of target, which the name fixes)
    target = target_named(case.name.split("--", 1)[0])
    # WHEN it is read as that target THEN nothing but a named input error comes of it
    read_as(target, case.read_bytes()[1:], tmp_path)


def test_a_minute_of_coverage_guided_fuzzing_finds_nothing(tmp_path: Path) -> None:
    pytest.importorskip("atheris", reason="the dev extra's atheris runs the fuzzer")
    # GIVEN seeds from the captured fixtures
    seeds = tmp_path / "seeds"
    seeds.mkdir()
    assert write_seeds(REPO, seeds) > 100
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    artifacts = tmp_path / "artifacts"
    artifacts.mkdir()
    # WHEN the fuzzer runs for its time
    done = subprocess.run(
        [
            sys.executable,
            str(HERE / "fuzz_inputs.py"),
            f"-max_total_time={FUZZ_SECONDS}",
            f"-max_len={MAX_LEN}",
            f"-timeout={PER_INPUT_TIMEOUT_S}",
            "-rss_limit_mb=3072",
            f"-artifact_prefix={artifacts}/",
            str(corpus),
            str(seeds),
        ],
        capture_output=True,
        text=True,
        timeout=FUZZ_SECONDS + 300,
        cwd=tmp_path,
    )
    # THEN it found nothing; what it found is kept for the regression test above
    found = sorted(artifacts.iterdir())
    for artifact in found:
        shutil.copy(
            artifact, CRASHES / f"{target_name(target_of(artifact.read_bytes() or b'0'))}--{artifact.name}"
        )
    assert done.returncode == 0 and not found, (
        f"the fuzzer found {len(found)} input(s), kept in {CRASHES} (exit {done.returncode}):\n"
        + done.stderr[-4000:]
    )
