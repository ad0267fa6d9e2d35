"""Real processes for the live tests: the reproducers in fixtures/, run and dumped for real.

The reproducers and the process handling come from fixtures/capture.py, so the tests exercise
exactly the programs whose captured dumps are committed. Every process is stopped by PID.
"""

from __future__ import annotations

import importlib.util
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType

import pytest

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _load_capture() -> ModuleType:
    # Run as a script, capture.py has its own directory on sys.path (it imports the modules beside
    # it); loaded from here it needs the same.
    if str(FIXTURES) not in sys.path:
        sys.path.append(str(FIXTURES))
    spec = importlib.util.spec_from_file_location("kafkadiag_fixture_capture", FIXTURES / "capture.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def _load_real_capture() -> ModuleType:
    # It imports capture.py's helpers as `capture`, from the directory beside it.
    if str(FIXTURES) not in sys.path:
        sys.path.append(str(FIXTURES))
    spec = importlib.util.spec_from_file_location(
        "kafkadiag_fixture_capture_real_kafka", FIXTURES / "capture_real_kafka.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


@pytest.fixture(scope="session")
def real_capture_module() -> ModuleType:
    """fixtures/capture_real_kafka.py: Apache Kafka's real old consumer with its cluster."""
    for tool in ("java", "javac", "jstack", "jcmd"):
        assert shutil.which(tool), f"{tool} is not on PATH: the live tests need a JDK"
    return _load_real_capture()


@pytest.fixture(scope="session")
def capture_module() -> ModuleType:
    for tool in ("java", "javac", "jstack", "jcmd"):
        assert shutil.which(tool), f"{tool} is not on PATH: the live tests need a JDK"
    return _load_capture()


@pytest.fixture(scope="session")
def reproducers(capture_module: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> Iterator:
    """A compiled Capture object whose Targets are all stopped at the end of the session."""
    work = tmp_path_factory.mktemp("reproducers")
    targets = capture_module.Targets()
    capture = capture_module.Capture(work, targets)
    capture.compile_java()
    try:
        yield capture
    finally:
        targets.stop_all()
