"""kafkadiag says which threads it recognised as a Kafka client's, and says so when there is none.

GIVEN captured dumps of real JVMs and Python processes (consumers, producers, the old consumer,
a JVM with no Kafka client at all) WHEN they are analysed THEN each series lists its Kafka client
threads by role, and "No stall found" on a dump without any says that no rule had a client to look at.
"""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest

from kafkadiag.dumps import read_dumps
from kafkadiag.rules.clientthreads import client_threads, describe

from ..conftest import CAPTURED

EXPECTED = {
    "real-new-consumer-coordinator-unavailable-3.9.1/jstack-l.txt": {
        "consumer-heartbeat": 1,
        "consumer-poll": 1,
    },
    "real-producer-callback-deadlock-4.1.1/jstack-l.txt": {"producer-io": 1, "producer-call": 3},
    "real-producer-callback-deadlock-1.1.1/jstack-l.txt": {"producer-io": 1, "producer-call": 3},
    "real-old-consumer-stall-0.8.2.2/jstack-l.txt": {
        "old-consumer-fetcher": 1,
        "old-consumer-stream": 2,
        "old-consumer-other": 2,
    },
    "real-new-consumer-close-hang-4.1.1/jstack-l.txt": {"consumer-heartbeat": 1, "consumer-call": 1},
    "real-new-consumer-position-hang-1.1.1/jstack-l.txt": {
        "consumer-heartbeat": 1,
        "consumer-poll": 1,
        "consumer-call": 1,
    },
    "py-heartbeat-blocked/py-spy-dump.txt": {"python-client-io": 1, "consumer-poll": 1},
    "healthy/jstack-l.txt": {},
    # confluent-kafka waits in C: only py-spy --native shows its frames.
    "py-confluent-poll-idle/py-spy-dump-native.txt": {"consumer-poll": 1},
    "py-confluent-poll-idle/py-spy-dump.txt": {},
}


@pytest.mark.parametrize("fixture", sorted(EXPECTED))
def test_client_threads_are_counted_by_role(fixture: str) -> None:
    dump = list(read_dumps(str(CAPTURED / fixture)))[-1]
    assert client_threads(dump) == EXPECTED[fixture]


def analyze_json(path: str) -> dict:  # type: ignore[type-arg]
    done = subprocess.run(
        [sys.executable, "-m", "kafkadiag", "dump", "analyze", "--format", "json", path],
        capture_output=True,
        text=True,
        check=False,
    )
    return json.loads(done.stdout)


def test_no_stall_without_any_client_thread_says_so() -> None:
    # GIVEN a JVM with thread pools and no Kafka client WHEN analysed THEN the verdict says that no
    # rule had a client to look at, and the series lists no client thread
    report = analyze_json(str(CAPTURED / "healthy" / "jstack-l.txt"))
    assert report["verdict"].startswith("No stall found")
    assert "No thread in it is a Kafka client's" in report["verdict"]
    assert report["series"][0]["kafka_threads"] == {}


def test_no_stall_with_client_threads_lists_them() -> None:
    # GIVEN a caught-up consumer idle in poll(), with its heartbeat thread WHEN analysed THEN its roles
    # are listed and the verdict does not say that no client was seen
    path = CAPTURED / "real-new-consumer-healthy-4.1.1" / "jstack-l.txt"
    report = analyze_json(str(path))
    roles = report["series"][0]["kafka_threads"]
    assert roles == client_threads(list(read_dumps(str(path)))[-1]) and roles
    assert "No thread in it is a Kafka client's" not in report["verdict"]
    assert describe({"consumer-poll": 2, "producer-io": 1}) == "2 consumer poll, 1 producer I/O"


@pytest.mark.parametrize(
    "name, role",
    [
        ("task-thread-orders-sink-0", "connect-task"),  # Kafka Connect's WorkerTask
        ("WorkerSinkTask-http_request-connector-2", "connect-task"),  # older Connect releases
        ("WorkerSourceTask-jdbc-source-1", "connect-task"),
        ("task-thread", None),  # no connector and task number: not Connect's
        ("pool-1-thread-1", None),
    ],
)
def test_connect_task_threads_are_known_by_name(name: str, role: str | None) -> None:
    # GIVEN a pasted excerpt cut above the task's Kafka frames WHEN its threads are counted THEN the
    # name Connect gives a task's thread is enough (the healthy capture's stacks, renamed)
    dump = list(read_dumps(str(CAPTURED / "healthy" / "jstack-l.txt")))[-1]
    worker = next(thread for thread in dump.threads if thread.name.startswith("pool-"))
    renamed = dataclasses.replace(dump, threads=(worker._replace(name=name),))
    assert client_threads(renamed) == ({role: 1} if role else {})
