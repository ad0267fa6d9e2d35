"""KD107 names the whole chain of a bounded put under a lock: the putter, the lock, the threads
waiting for it, the queue's class and condition, and the candidates that may drain the queue."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from kafkadiag.dumps import read_dumps
from kafkadiag.rules.base import Finding
from kafkadiag.rules.engine import analyze

from ..conftest import CAPTURED
from .dumptext import thread_block
from .test_real_kafka_captures import SCENARIOS as REAL_STALLS
from .test_real_kafka_captures import consumer_id, fetcher_of

# Apache Kafka 0.8.2.2's real old consumer, stalled on two brokers, after the broker leading orders
# stopped: the leader finder parks on the blocked fetcher's partition-map lock.
LEADER_MOVED = "real-old-consumer-leader-moved-0.8.2.2"


def kd107(relative: str) -> dict[str, Finding]:
    report = analyze(list(read_dumps(str(CAPTURED / relative))), select=["KD107"])
    return {finding.threads[0]: finding for finding in report.findings}


def dump_text(relative: str) -> str:
    return (CAPTURED / relative).read_text()


def test_every_kind_of_bounded_insert_under_a_monitor_or_lock_is_found() -> None:
    findings = kd107("put-under-lock/jstack-l.txt")
    assert {name: finding.details["queue_class"] for name, finding in findings.items()} == {
        "controller-event-thread": "java.util.concurrent.ArrayBlockingQueue",
        "handoff-producer": "java.util.concurrent.SynchronousQueue",
        "snapshot-writer": "java.util.concurrent.LinkedBlockingDeque",
        "metrics-publisher": "java.util.concurrent.ArrayBlockingQueue",
    }
    # Ordered as every report orders findings (severity, rule, first thread): the same every run.
    assert list(findings) == sorted(findings)


def test_the_finding_quotes_the_condition_and_the_lock_of_the_dump() -> None:
    relative = "put-under-lock/jstack-l.txt"
    finding = kd107(relative)["controller-event-thread"]
    block = thread_block(dump_text(relative), "controller-event-thread")
    (condition,) = re.findall(r"parking to wait for\s+<0x0*([0-9a-f]+)>", block)
    (monitor,) = re.findall(r"- locked <0x0*([0-9a-f]+)>", block)
    assert finding.details["condition"] == f"0x{condition}"
    assert finding.details["locks"] == [f"0x{monitor}"]
    assert finding.details["waiting"] == ["request-handler-0", "request-handler-1"]
    # metrics-drain is parked taking from another ArrayBlockingQueue: mentioned, not blamed.
    assert finding.details["idle_takers_of_other_queues"] == ["metrics-drain"]
    assert finding.details["busy_consumers"] == []
    assert "cannot show which thread drains which queue" in finding.message


def test_a_hand_off_whose_consumer_waits_for_the_lock_names_that_consumer() -> None:
    finding = kd107("put-under-lock/jstack-l.txt")["handoff-producer"]
    assert finding.details["waiting"] == ["handoff-consumer"]
    assert "ReentrantLock" in finding.message and "SynchronousQueue$TransferStack" in finding.message


def test_the_old_consumer_fetcher_with_the_leader_finder_behind_its_lock_is_the_chain() -> None:
    finding = kd107(f"{LEADER_MOVED}/jstack-l.txt")[fetcher_of(LEADER_MOVED)]
    assert finding.details["queue_class"] == "java.util.concurrent.LinkedBlockingQueue"
    assert finding.details["waiting"] == [f"{consumer_id(LEADER_MOVED)}-leader-finder-thread"]
    # The stream loop the starving workers take in, run by the one worker that is not taking.
    assert finding.details["busy_consumers"] == ["order-worker-payments"]
    # Parked taking from other LinkedBlockingQueues: the starving workers, and zkclient's and
    # ZooKeeper's event threads (mentioned, never blamed).
    assert {"order-worker-orders", "order-worker-shipments"} <= set(
        finding.details["idle_takers_of_other_queues"]
    )
    assert finding.details["named_after_consumer_id"] == [f"{consumer_id(LEADER_MOVED)}_watcher_executor"]


@pytest.mark.parametrize("scenario", REAL_STALLS)
def test_the_old_consumer_fetcher_that_nobody_waits_for_is_not_chained(scenario: str) -> None:
    """In every release's real stall the fetcher holds its partition-map lock in put, but while no
    leader moves no thread waits for that lock: KD201 reports the fetcher, KD107 has nothing to add."""
    assert kd107(f"{scenario}/jstack-l.txt") == {}
    assert fetcher_of(scenario) in dump_text(f"{scenario}/jstack-l.txt")


# -- a bounded put that holds nobody up, and that no thread of the dump could take from -------------

WILD = Path(__file__).resolve().parents[1] / "wild" / "dumps"


def test_a_put_into_a_queue_whose_consumer_is_gone_is_a_warning_naming_the_putter() -> None:
    # GIVEN journal-closer parked putting a stop marker into a queue whose only consumer exited
    # WHEN KD107 runs
    findings = kd107("queue-ring/jstack-l.txt")
    # THEN it names the closer alone, as a warning quoting the Journal's monitor it holds
    finding = findings["journal-closer"]
    assert finding.severity.value == "warning" and finding.threads == ("journal-closer",)
    assert finding.details["channel"] == "com.example.RequestRingApp$Journal"
    assert finding.details["queue_class"] == "java.util.concurrent.LinkedBlockingQueue"
    assert len(finding.details["locks"]) == 1 and "excerpt" not in finding.message
    # ...and the two threads of the channel's ring are left to KD108
    assert set(findings) == {"journal-closer"}


def test_a_thread_running_in_the_queue_owner_may_be_its_consumer(tmp_path: Path) -> None:
    # GIVEN the same dump with one more thread, busy inside the Journal (as a writer between takes)
    text = dump_text("queue-ring/jstack-l.txt")
    closer = thread_block(text, "journal-closer")
    frames = closer.split("\n")
    journal_frame = next(i for i, line in enumerate(frames) if "RequestRingApp$Journal.close" in line)
    busy = "\n".join(
        [
            frames[0].replace('"journal-closer"', '"journal-writer"').replace("nid=0x", "nid=0x1"),
            "   java.lang.Thread.State: RUNNABLE",
            frames[journal_frame].replace("Journal.close", "Journal.write"),
            *frames[journal_frame + 2 :],
        ]
    )
    path = tmp_path / "with-writer.txt"
    path.write_text(text.replace(closer, closer + "\n\n" + busy))
    # WHEN KD107 runs
    report = analyze(list(read_dumps(str(path))), select=["KD107"])
    # THEN the closer is not reported: a thread of the dump may be taking from its queue
    assert not [finding for finding in report.findings if "journal-closer" in finding.threads]


def test_kafka_1764_shutdown_thread_is_named_and_the_excerpt_is_said() -> None:
    # GIVEN KAFKA-1764's one-thread excerpt: the connector's shutdown putting into a full stream queue
    report = analyze(
        list(read_dumps(str(WILD / "kafka-1764-shutdown-command-full-queue.txt"))), select=["KD107"]
    )
    # WHEN KD107 runs THEN it names the shutdown thread as a warning, and says the input is an excerpt
    (finding,) = report.findings
    assert finding.threads == ("Thread-23",) and finding.severity.value == "warning"
    assert finding.details["channel"] == "kafka.consumer.ZookeeperConsumerConnector"
    assert "excerpt" in finding.message
