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


def test_one_dump_of_an_event_loop_in_a_blocking_call_does_not_say_it_is_stuck() -> None:
    # GIVEN one py-spy --native dump of an asyncio loop whose coroutine is in socket.recv
    (finding,) = findings_of(CAPTURED / "py-asyncio-blocking-recv" / "py-spy-dump-native.txt", "KD406")
    # THEN the loop is held in the callback now; how long is for a second dump to tell
    assert "stuck" not in finding.message
    assert "is held in one of its callbacks" in finding.message
    assert "One dump shows the call in progress, not how long it lasts" in finding.message


def test_a_consumer_waiting_for_its_first_coordinator_answer_is_not_called_retrying() -> None:
    # GIVEN one dump of real kafka-clients 4.1.1 in ensureCoordinatorReady, in the network poll
    # waiting for the FindCoordinator answer (no back-off sleep), its heartbeat thread behind it
    dump = CAPTURED / "real-new-consumer-coordinator-lost-4.1.1" / "jstack-l.txt"
    (finding,) = findings_of(dump, "KD304")
    # THEN it is looking for its coordinator; nothing in one dump shows a retry
    assert finding.message.startswith("fulfilment-poll is looking for its group coordinator")
    assert "retrying" not in finding.story and "One dump does not show how long" in finding.message


def test_a_consumer_asleep_in_the_lookups_back_off_is_retrying() -> None:
    # GIVEN real kafka-clients 3.9.1 asleep in ensureCoordinatorReady's retry back-off
    dump = CAPTURED / "real-new-consumer-coordinator-unavailable-3.9.1" / "jstack-l.txt"
    (finding,) = findings_of(dump, "KD304")
    # THEN the sleep after a failed lookup shows it retrying
    assert finding.message.startswith("fulfilment-poll is retrying coordinator discovery")
    assert finding.story.endswith("keeps retrying to find the group coordinator")


def test_one_dump_of_a_blocked_heartbeat_thread_does_not_say_the_member_will_be_evicted() -> None:
    # GIVEN the same dump: the heartbeat thread blocked on the coordinator the poll thread holds
    dump = CAPTURED / "real-new-consumer-coordinator-unavailable-3.9.1" / "jstack-l.txt"
    (finding,) = findings_of(dump, "KD303")
    # THEN eviction is told as what follows if the wait lasts past session.timeout.ms
    assert "will be evicted" not in finding.message
    assert "if the holder keeps the monitor past session.timeout.ms" in finding.message


def test_one_dump_of_a_stream_thread_away_from_its_queue_does_not_say_it_stopped() -> None:
    # GIVEN one dump of the old consumer whose payments worker is in a gateway read
    (finding,) = findings_of(CAPTURED / "real-old-consumer-stall-0.8.2.2" / "jstack-l.txt", "KD203")
    # THEN it is not draining its queue now; since when is not in one dump
    assert finding.story.startswith("Stream thread order-worker-payments is not draining its queue")


def test_a_lock_one_thread_needs_is_told_in_the_singular() -> None:
    # GIVEN a CompletableFuture.join under a lock that one thread is blocked on
    dump = CAPTURED / "completable-join-deadlock" / "jstack-l.txt"
    (finding,) = findings_of(dump, "KD103")
    # THEN the story counts one thread: "needs"
    assert finding.story.endswith("holding a lock that catalog-loader-1 needs")


def test_a_thread_named_event_loop_that_runs_another_loop_is_not_told_as_a_netty_loop() -> None:
    # GIVEN SPARK-6492's dag-scheduler-event-loop: its whole stack is in the dump, down to its body,
    # org.apache.spark.util.EventLoop$$anon$1.run, a queue taker with no channels
    dump = WILD / "spark-6492-sparkcontext-stop-deadlock.txt"
    # THEN KD110 does not call it an event loop whose stack was cut, nor speak of its channels
    assert findings_of(dump, "KD110") == []


def test_a_vertx_loop_whose_stack_is_cut_is_still_known_by_its_name() -> None:
    # GIVEN a Vert.x loop thread quoted from its blocking call down, without the loop's frames
    (finding,) = findings_of(WILD / "strimzi-4855-reconcile-kubernetes-call-on-event-loop.txt", "KD110")
    # THEN it is named by the name Vert.x gives its loops, the cut stack said
    assert finding.threads == ("vert.x-eventloop-thread-1",)
    assert "the stack is cut before the loop's frames" in finding.message


def test_no_taker_in_an_excerpt_is_told_as_an_excerpts_absence() -> None:
    # GIVEN KAFKA-1305's four quoted threads: the scheduler parked in LinkedBlockingQueue.put with
    # the controller lock held, two threads waiting for the lock, no thread taking from the queue
    (finding,) = findings_of(WILD / "kafka-1305-controller-shutdown-hang.txt", "KD107")
    # THEN the finding says the queue's consumer may be a thread the excerpt left out
    assert "No thread of the dump takes from a queue of class LinkedBlockingQueue." in finding.message
    assert "The input is an excerpt (no 'Full thread dump' banner)" in finding.message


def test_no_taker_in_a_full_dump_needs_no_excerpt_note() -> None:
    # GIVEN a full jstack -l dump whose snapshot-writer puts into a deque that no thread takes from
    findings = findings_of(CAPTURED / "put-under-lock" / "jstack-l.txt", "KD107")
    (writer,) = [finding for finding in findings if finding.threads[0] == "snapshot-writer"]
    # THEN the absence is the dump's, and no excerpt is spoken of
    assert "No thread of the dump takes from a queue of class LinkedBlockingDeque." in writer.message
    assert "excerpt" not in writer.message


def test_a_thread_taken_for_a_poll_thread_by_its_name_alone_is_told_so() -> None:
    # GIVEN SPARK-10125: a ScalaTest thread (its name ends in StreamingListenerSuite) joins the
    # JobGenerator thread; no frame of either is Kafka's
    (finding,) = findings_of(WILD / "spark-10125-jobgenerator-stop-deadlock.txt", "KD301")
    # THEN KD301 says it is a poll thread by its name only, which the reader can weigh
    assert finding.message.startswith(
        "pool-1-thread-1-ScalaTest-running-StreamingListenerSuite, a consumer's poll thread by its "
        "name (no dump read shows it in KafkaConsumer.poll), waits in Thread.join"
    )


def test_a_blocked_fetcher_does_not_presume_a_stream_thread_the_input_lacks() -> None:
    # GIVEN KAFKA-914's excerpt: the fetcher parked in put, no stream thread among the threads quoted
    (finding,) = findings_of(WILD / "kafka-914-rebalance-fetcher-full-queue.txt", "KD201")
    # THEN the queue is full and nothing takes from it now; whose thread that is, KD203 tells
    assert "its stream thread is not taking" not in finding.message
    assert "a stream queue is full and no thread is taking from it at this moment" in finding.message
