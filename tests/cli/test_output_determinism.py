"""The same input gives byte-identical output in every run: no order may come from hashing,
which Python randomises per process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from ..conftest import CAPTURED

# Real captures: a jstack without -l (rules needing lock data, several dumps or CPU times are
# skipped, each listing what it misses), a kill -3 log of 50 dumps (gzipped), and a py-spy dump.
INPUTS = (
    CAPTURED / "real-old-consumer-stall-0.8.2.2" / "jstack.txt",
    CAPTURED / "real-old-consumer-stall-0.8.2.2" / "kill3-50-dumps.log.gz",
    CAPTURED / "py-poll-queue-full" / "py-spy-dump.txt",
)


def _analyze(path: Path, output_format: str, hash_seed: int) -> str:
    env = {**os.environ, "PYTHONHASHSEED": str(hash_seed)}
    result = subprocess.run(
        [sys.executable, "-m", "kafkadiag", "dump", "analyze", "--format", output_format, str(path)],
        capture_output=True,
        text=True,
        env=env,
        timeout=120,
    )
    assert result.returncode in (0, 1), result.stderr
    return result.stdout


@pytest.mark.parametrize("output_format", ["json", "table"])
@pytest.mark.parametrize("path", INPUTS, ids=lambda path: f"{path.parent.name}/{path.name}")
def test_analysis_is_the_same_whatever_the_hash_seed(path: Path, output_format: str) -> None:
    outputs = {_analyze(path, output_format, seed) for seed in (1, 2, 3, 4)}
    assert len(outputs) == 1
    assert "KD" in next(iter(outputs))
