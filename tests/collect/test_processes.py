"""`ps` recognises a Python consumer by the program it runs, not by any word on its command
line: a real kafka-python consumer of the suite's broker is listed, a process or a test run that
merely mentions Kafka among its arguments is not."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafkadiag.collect.processes import find_consumers
from kafkadiag.collect.pyprogram import kafka_python_trace
from tests.infra.servers import ServerProcess

READY = "import sys; print('READY', flush=True); "


def started(*arguments: str, cwd: Path | None = None) -> subprocess.Popen[str]:
    process = subprocess.Popen([sys.executable, *arguments], stdout=subprocess.PIPE, text=True, cwd=cwd)
    assert process.stdout is not None and process.stdout.readline().strip() == "READY"
    return process


@pytest.fixture
def processes() -> Iterator[list[subprocess.Popen[str]]]:
    running: list[subprocess.Popen[str]] = []
    yield running
    for process in running:
        process.kill()
        process.wait()


def test_a_kafka_python_consumer_is_listed_and_a_mention_of_kafka_is_not(
    broker: ServerProcess, tmp_path: Path, processes: list[subprocess.Popen[str]]
) -> None:
    # GIVEN a kafka-python consumer of the real broker, started as -c code, and the same consumer
    # as a script run from its own directory by a relative path
    consume = (
        "from kafka import KafkaConsumer; "
        f"c = KafkaConsumer('t', bootstrap_servers='{broker.address}', group_id='g'); "
        "c.poll(timeout_ms=1000); " + READY + "import time; time.sleep(120)"
    )
    (tmp_path / "billing.py").write_text(consume.replace("; ", "\n"))
    inline = started("-c", consume)
    script = started("billing.py", cwd=tmp_path)
    # and processes whose command lines mention kafka but that load no Kafka client: a sleeper
    # with a kafka argument, and a test runner asked to run the real-Kafka tests
    sleeper = started("-c", READY + "import time; time.sleep(120)", "kafka-thing")
    (tmp_path / "tests" / "realkafka").mkdir(parents=True)
    (tmp_path / "tests" / "realkafka" / "test_kafka_wait.py").write_text(
        "import time\n\ndef test_wait():\n    print('READY', flush=True)\n    time.sleep(120)\n"
    )
    runner = started(
        "-m", "pytest", "-q", "-s", "-p", "no:cacheprovider", "tests/realkafka/test_kafka_wait.py",
        cwd=tmp_path,
    )  # fmt: skip
    processes += [inline, script, sleeper, runner]
    # WHEN ps looks for consumers
    listed = {consumer.pid: consumer for consumer in find_consumers()}
    # THEN both consumers are kafka-python consumers, with what showed it
    assert listed[inline.pid].kind == "kafka-python", listed[inline.pid]
    assert listed[inline.pid].evidence == ("command line: -c code imports kafka",)
    assert listed[script.pid].kind == "kafka-python"
    assert listed[script.pid].evidence == ("script imports kafka: billing.py",)
    # and neither the sleeper nor the test runner is listed
    assert sleeper.pid not in listed and runner.pid not in listed


@pytest.mark.parametrize(
    "cmdline, trace",
    [
        (["python3", "-u", "-m", "kafka_worker", "--x"], "command line: -m kafka_worker"),
        (["python3", "app.py", "--bootstrap-servers=b:9092"], "command line: --bootstrap-servers"),
        (["python3", "-c", "import os, kafka"], "command line: -c code imports kafka"),
        (["python3", "-W", "ignore", "-c", "pass", "--topic", "kafka-orders"], None),
        (["python3", "-m", "pytest", "tests/realkafka", "--bootstrap-servers=b:9092"], None),
        (["python3", "/usr/bin/tox", "-e", "kafka"], None),
        (["python3"], None),
    ],
)
def test_the_program_not_its_arguments_tells_kafka_python(cmdline: list[str], trace: str | None) -> None:
    assert kafka_python_trace(cmdline) == trace
