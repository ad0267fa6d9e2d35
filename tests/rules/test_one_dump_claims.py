"""Findings say no more than their input shows: one dump shows where threads are, not how long
they have been there, and an excerpt leaves threads out. Each case is the real dump on which a
finding once claimed more (a stop that "hangs", a call that "does not return", workers that
"stopped taking", a stream nobody iterates, an idle hub named as a queue's consumer)."""

from __future__ import annotations

from pathlib import Path

from kafkadiag.dumps import read_dumps
from kafkadiag.rules.base import Finding, Severity
from kafkadiag.rules.engine import analyze

from ..conftest import CAPTURED, REPO

WILD = REPO / "tests" / "wild" / "dumps"


def findings_of(path: Path, code: str) -> list[Finding]:
    report = analyze(list(read_dumps(str(path))), select=[code])
    return [finding for finding in report.findings if finding.rule == code]


def test_eventlet_hub_and_idle_green_threads_are_not_named_as_the_queues_consumers() -> None:
    # GIVEN eventlet's Guru Meditation Report of a poll loop blocked on a full queue: two workers in
    # worker_loop, the hub's OS thread idle in hubs/poll.py, a heartbeat green thread in a timed
    # Condition.wait and the main green thread waiting for the poll loop to end
    report = CAPTURED / "pyfmt-eventlet-poll-queue-full" / "guru-meditation-report.txt"
    # WHEN KD401 reads it
    (finding,) = findings_of(report, "KD401")
    # THEN only the two workers are named as the queue's likely consumers
    assert finding.threads == ("Green Thread 1", "Green Thread 2", "Green Thread 3"), finding.message
    assert "Thread #" not in finding.message


def test_one_python_dump_does_not_say_the_workers_stopped_taking() -> None:
    # GIVEN one py-spy dump of a poll loop blocked in Queue.put while its workers run their own code
    (finding,) = findings_of(CAPTURED / "py-poll-queue-full" / "py-spy-dump.txt", "KD401")
    # THEN the workers are named as busy when the dump was taken, not as stuck or stopped
    assert "stuck" not in finding.message and "stopped taking" not in finding.story
    assert "One dump cannot tell whether they stopped taking or take slowly" in finding.message
    assert finding.story.endswith("are in application code, not taking from it")


def test_a_stream_missing_from_an_excerpt_is_not_called_dead() -> None:
    # GIVEN KAFKA-914's four quoted threads (no 'Full thread dump' banner): a fetcher blocked on a
    # full chunk queue, and no stream thread among the four
    (finding,) = findings_of(WILD / "kafka-914-rebalance-fetcher-full-queue.txt", "KD203")
    # THEN KD203 says the stream's thread may be one left out, as a warning, not that it died
    assert finding.severity is Severity.WARNING
    assert "the input is an excerpt" in finding.message
    assert "nobody iterating" not in finding.message and "died" not in finding.story


def test_a_full_dump_without_a_stream_thread_still_says_nobody_iterates(tmp_path: Path) -> None:
    # GIVEN the same threads under a 'Full thread dump' banner: all of the process's threads
    text = (WILD / "kafka-914-rebalance-fetcher-full-queue.txt").read_text(encoding="utf-8")
    full = tmp_path / "full.txt"
    full.write_text(
        "Full thread dump OpenJDK 64-Bit Server VM (25.0-b70 mixed mode):\n\n" + text, encoding="utf-8"
    )
    # THEN the absence of a stream thread is an error of its own
    (finding,) = findings_of(full, "KD203")
    assert finding.severity is Severity.ERROR
    assert "the stream has nobody iterating it" in finding.message


def test_one_dump_of_a_stop_waiting_does_not_say_the_shutdown_hangs() -> None:
    # GIVEN one jcmd dump of IngestService.stop waiting on a latch for its fetcher, in a socket read
    (finding,) = findings_of(CAPTURED / "shutdown-waits-running" / "jcmd-thread-print-l.txt", "KD109")
    # THEN it waits, and the fetcher has not ended: neither "hangs" nor "still running" beside its
    # own state line
    assert finding.story.startswith("A shutdown waits: main waits in")
    assert "hangs:" not in finding.story and "still running" not in finding.message
    assert "it has not ended: ingest-fetcher-0 is runnable" in finding.message


def test_one_dump_of_a_consumer_call_does_not_say_it_never_returns() -> None:
    # GIVEN one dump of a consumer's close() waiting for its offset commit
    (finding,) = findings_of(
        CAPTURED / "real-new-consumer-close-hang-4.1.1" / "jcmd-thread-print-l.txt", "KD309"
    )
    # THEN the story says the call waits on the cluster, not that it does not return
    assert finding.story.startswith("A consumer call waits on the cluster: fulfilment-poll waits in")
    assert "does not return" not in finding.story
