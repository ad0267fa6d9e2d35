from __future__ import annotations

from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"
CAPTURED = FIXTURES / "captured"
# Other projects' thread dumps, copied with their licences (tests/corpus/SOURCES).
CORPUS = REPO / "tests" / "corpus"


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--update-goldens",
        action="store_true",
        default=False,
        help="Rewrite parsed-output goldens from the captured fixtures (then review the diff).",
    )


@pytest.fixture(scope="session")
def corpus() -> Path:
    if not CORPUS.is_dir():
        pytest.fail(
            f"the thread-dump corpus is missing: expected it at {CORPUS}",
            pytrace=False,
        )
    return CORPUS


@pytest.fixture(scope="session")
def captured() -> Path:
    assert CAPTURED.is_dir(), f"captured fixtures missing at {CAPTURED}: run python fixtures/capture.py"
    return CAPTURED


# Real ZooKeeper and Kafka-protocol broker fixtures (tests/infra), for every test directory.
pytest_plugins = ("tests.infra.fixtures",)
