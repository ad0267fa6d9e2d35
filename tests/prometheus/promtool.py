"""The real Prometheus tools from Debian's `prometheus` package; an AssertionError, never a skip,
when they are missing (.ci/run installs the package)."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

REPOSITORY = Path(__file__).resolve().parents[2]
RULES = REPOSITORY / "contrib" / "prometheus" / "kafkadiag-alerts.yml"
RULE_TESTS = REPOSITORY / "contrib" / "prometheus" / "kafkadiag-alerts.test.yml"


def tool(name: str) -> str:
    found = shutil.which(name) or (f"/usr/bin/{name}" if Path(f"/usr/bin/{name}").exists() else None)
    if found is None:
        raise AssertionError(
            f"{name} is not installed: `apt-get install -y prometheus` (.ci/run installs it)"
        )
    return found


def promtool(
    *args: str, cwd: Path | None = None, stdin: str | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [tool("promtool"), *args],
        cwd=cwd,
        input=stdin,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
