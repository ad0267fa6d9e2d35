"""Real JVMs for the maxlag tests: the reproducer compiled once, started per test, stopped by PID."""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.maxlag.reproducer import Reproducer, compile_reproducer, start_reproducer


@pytest.fixture(scope="session", autouse=True)
def jmx_client_cache(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """kafkadiag compiles its JMX client into $XDG_CACHE_HOME; keep the tests' copy out of $HOME."""
    for tool in ("java", "javac", "jcmd"):
        assert shutil.which(tool), f"{tool} is not on PATH: the maxlag tests need a JDK"
    cache = tmp_path_factory.mktemp("xdg-cache")
    cache.chmod(0o777)  # one test runs kafkadiag as `nobody`
    previous = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(cache)
    try:
        yield cache
    finally:
        if previous is None:
            os.environ.pop("XDG_CACHE_HOME", None)
        else:
            os.environ["XDG_CACHE_HOME"] = previous


@pytest.fixture(scope="session")
def reproducer_classes(tmp_path_factory: pytest.TempPathFactory) -> Path:
    directory = tmp_path_factory.mktemp("maxlag-classes")
    directory.chmod(0o755)
    return compile_reproducer(directory)


@pytest.fixture
def start(reproducer_classes: Path) -> Iterator[Callable[..., Reproducer]]:
    """start(group, topics, settings=..., ...) -> a READY reproducer, stopped after the test."""
    started: list[Reproducer] = []

    def _start(*args: Any, **kwargs: Any) -> Reproducer:
        reproducer = start_reproducer(reproducer_classes, *args, **kwargs)
        started.append(reproducer)
        return reproducer

    try:
        yield _start
    finally:
        for reproducer in started:
            reproducer.stop()
