"""Spark's own output is kept in spark.log in --out; when Spark fails, its last lines are what
the user needs, so they are shown with the error (the results directory is not kept).

GIVEN a driver memory setting the JVM refuses; WHEN `kafkadiag batch` runs as its own process;
THEN it exits 3 saying Spark did not start, stderr carries the JVM's own reason as `spark:` lines,
and no results directory or staging directory is left behind.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from kafkadiag.exitcodes import ExitCode
from tests.conftest import CAPTURED


def test_a_spark_that_does_not_start_shows_the_jvms_reason(tmp_path: Path) -> None:
    out = tmp_path / "out"
    done = subprocess.run(
        [sys.executable, "-m", "kafkadiag", "batch", str(CAPTURED / "deadlock"), "--out", str(out),
         "--conf", "spark.driver.memory=lots"],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert done.returncode == ExitCode.INPUT_UNREADABLE, done.stderr
    assert "Spark did not start" in done.stderr
    assert "spark: Invalid maximum heap size: -Xmxlots" in done.stderr, done.stderr
    assert list(tmp_path.iterdir()) == [], list(tmp_path.iterdir())
