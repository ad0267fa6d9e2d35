"""`kafkadiag dump analyze` on thread dumps of REAL Apache Kafka brokers.

fixtures/capture_real_brokers.py started real brokers of four lines (0.8.2.2, 1.1.1 and 3.9.1 in
ZooKeeper mode, 4.1.1 in KRaft mode), idle and with a producer sending to them, and took
`jstack -l` of each. A broker's threads carry "kafka" in their names and wait on latches and
queues when idle: the 4.1.1 log cleaner ("kafka-log-cleaner-thread-0") is paused in
ShutdownableThread.pause, a CountDownLatch.await, the very shape of a consumer's poll thread
waiting for its workers.

GIVEN each real broker dump, WHEN it is analysed, THEN no finding is an error or a warning (no
broker thread is called a poll thread, stuck or blocked), the exit code is 0, and the report counts
the broker's threads as the broker's.
"""

from __future__ import annotations

import json

import pytest

from kafkadiag.dumps import read_dumps
from kafkadiag.exitcodes import ExitCode

from ..cli.test_dump_parse_cli import run
from ..conftest import CAPTURED

VERSIONS = ("0.8.2.2", "1.1.1", "3.9.1", "4.1.1")
SCENARIOS = [f"real-broker-{load}-{version}" for version in VERSIONS for load in ("idle", "busy")]
STUCK_SEVERITIES = {"error", "warning"}


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_a_real_broker_is_not_called_stuck(scenario: str) -> None:
    path = CAPTURED / scenario / "jstack-l.txt"
    code, out, err = run(["dump", "analyze", "--format", "json", str(path)])
    assert code == ExitCode.OK, (err, out)
    report = json.loads(out)
    stuck = [f for f in report["findings"] if f["severity"] in STUCK_SEVERITIES]
    assert stuck == [], stuck
    assert "Poll thread" not in report["verdict"]
    code, text, _ = run(["dump", "analyze", str(path)])
    assert code == ExitCode.OK
    assert "Kafka broker" in text  # its threads were seen, and seen as the broker's


@pytest.mark.parametrize("load", ["idle", "busy"])
def test_the_paused_log_cleaner_of_4_1_1_is_not_a_poll_thread(load: str) -> None:
    """The regression's shape is in the capture: the cleaner waits in CountDownLatch.await under
    ShutdownableThread.pause, and its name holds "kafka" as poll threads' names often do."""
    path = CAPTURED / f"real-broker-{load}-4.1.1" / "jstack-l.txt"
    (dump,) = read_dumps(str(path))
    (cleaner,) = [t for t in dump.threads if t.name == "kafka-log-cleaner-thread-0"]
    functions = [frame.function for frame in cleaner.frames]
    assert "java.util.concurrent.CountDownLatch.await" in functions
    assert "org.apache.kafka.server.util.ShutdownableThread.pause" in functions
    code, out, _ = run(["dump", "analyze", "--format", "json", str(path)])
    assert code == ExitCode.OK
    assert not [f for f in json.loads(out)["findings"] if f["rule"] == "KD301"]
