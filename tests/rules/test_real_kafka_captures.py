"""`kafkadiag dump analyze` on thread dumps of Apache Kafka's REAL old consumer.

fixtures/capture_real_kafka.py ran an order service on the released jars of every Kafka release on
Maven Central with the old consumer worth telling apart (0.8.0-beta1, 0.8.2.2, 0.9.0.1, 0.10.2.2 and
1.1.1, the last one) against real brokers: one connector, one stream per
topic (orders, payments, shipments) iterated by the application's pool threads
`order-worker-<topic>`. In the stall the payments handler hangs on a gateway that never answers; in
the slow capture it sleeps 200 ms a record; in the healthy one every handler is fast and the
consumer has caught up. Beside each dump the capture kept what ZooKeeper held for the group, so
the fetcher's name is checked against the consumer id the connector registered, not against a name
copied into the test.

GIVEN each real stall dump (with and without lock data), WHEN it is analysed, THEN the real
ConsumerFetcherThread is reported blocked putting into a full queue, the payments worker is the
thread that stopped draining, the orders and shipments workers starve, and no Kafka, ZooKeeper or
JVM internal thread (leader finder, rebalance watcher, ZkClient and ZooKeeper client threads, the
commit scheduler, metrics ticks) is named at all. GIVEN the healthy dumps, THEN nothing is found,
alone or as a series.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafkadiag.dumps import read_dumps
from kafkadiag.exitcodes import ExitCode

from ..cli.test_dump_parse_cli import run
from ..conftest import CAPTURED

SCENARIOS = (
    "real-old-consumer-stall-0.8.0-beta1",
    "real-old-consumer-stall-0.8.2.2",
    "real-old-consumer-stall-0.9.0.1",
    "real-old-consumer-stall-0.10.2.2",
    "real-old-consumer-stall-1.1.1",
    # 0.8.2.2 on Java 25, dumped by Java 25's tools
    "real-old-consumer-stall-0.8.2.2-jdk25",
)
DUMP_FILES = ("jstack-l.txt", "jstack.txt", "jcmd-thread-print-l.txt")
CASES = [(scenario, name) for scenario in SCENARIOS for name in DUMP_FILES]
STALLED = "order-worker-payments"
STARVING = ["order-worker-orders", "order-worker-shipments"]
# The threads the application started; every other thread of the dumps is Kafka's, ZooKeeper's,
# metrics-core's or the JVM's own.
APPLICATION = {"main", STALLED, *STARVING}


def group_record(scenario: str) -> dict:
    return json.loads((CAPTURED / scenario / "group" / "zookeeper-group.json").read_text())


def consumer_id(scenario: str) -> str:
    (registered,) = [n["path"] for n in group_record(scenario)["nodes"] if "/ids/" in n["path"]]
    return registered.rsplit("/", 1)[1]


def fetcher_of(scenario: str) -> str:
    # ConsumerFetcherThread-<consumerId>-<fetcherId>-<brokerId>: one fetcher, broker 0.
    return f"ConsumerFetcherThread-{consumer_id(scenario)}-0-0"


def analyze_json(*paths: Path, exit_code: ExitCode = ExitCode.FINDINGS) -> dict:
    code, out, err = run(["dump", "analyze", "--format", "json", *map(str, paths)])
    assert code == exit_code, (err, out)
    return json.loads(out)


def by_rule(report: dict) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for finding in report["findings"]:
        found.setdefault(finding["rule"], []).append(finding)
    return found


@pytest.mark.parametrize(("scenario", "name"), CASES, ids=[f"{s}/{n}" for s, n in CASES])
def test_the_real_fetcher_is_blocked_putting_into_a_full_queue(scenario: str, name: str) -> None:
    findings = by_rule(analyze_json(CAPTURED / scenario / name))
    (blocked,) = findings["KD201"]
    assert blocked["threads"] == [fetcher_of(scenario)]
    put = "java.util.concurrent.LinkedBlockingQueue.put under kafka.consumer.PartitionTopicInfo.enqueue"
    assert f"parked in {put}" in blocked["message"]
    assert blocked["details"] == {
        "consumer_id": consumer_id(scenario),
        "group": "order-service",
        "broker": "0",
    }
    if name == "jstack.txt":
        # No lock data: the finding says where Kafka holds the lock instead of guessing its address:
        # in inLock, or in processFetchRequest itself before 0.8.0 (partitionMapLock.lock()).
        where = "processFetchRequest" if scenario.endswith("0.8.0-beta1") else "inLock"
        assert "no lock data" in blocked["message"] and f"inside {where}" in blocked["message"]
    else:
        assert "ReentrantLock$NonfairSync), its partition-map lock" in blocked["message"]


@pytest.mark.parametrize(("scenario", "name"), CASES, ids=[f"{s}/{n}" for s, n in CASES])
def test_the_payments_worker_is_the_thread_that_stopped_draining(scenario: str, name: str) -> None:
    report = analyze_json(CAPTURED / scenario / name)
    findings = by_rule(report)
    (stopped,) = findings["KD203"]
    assert stopped["threads"] == [STALLED, fetcher_of(scenario)]
    # What it does is told by the application's own frame, not by the JDK's socket read alone.
    assert stopped["details"]["doing"].endswith("under com.example.orderservice.PaymentGateway.authorize")
    assert stopped["details"]["stream_loop"] == "com.example.orderservice.StreamWorker.run"
    (starving,) = findings["KD202"]
    assert starving["threads"] == STARVING
    # One dump shows the worker away from its queue, not since when: not "stopped draining".
    assert f"Stream thread {STALLED} is not draining its queue" in report["verdict"]


@pytest.mark.parametrize(("scenario", "name"), CASES, ids=[f"{s}/{n}" for s, n in CASES])
def test_no_kafka_or_zookeeper_internal_thread_is_named(scenario: str, name: str) -> None:
    path = CAPTURED / scenario / name
    (dump,) = read_dumps(str(path))
    internal = {thread.name for thread in dump.threads} - APPLICATION - {fetcher_of(scenario)}
    # The capture holds the old consumer's own threads, so this test has something to get wrong.
    # The auto-commit thread: a KafkaScheduler from 0.8.0 on, 0.8.0-beta1's own executor before.
    commit = (
        "Kafka-consumer-autocommit-1" if scenario.endswith("0.8.0-beta1") else "kafka-consumer-scheduler-0"
    )
    assert {f"{consumer_id(scenario)}-leader-finder-thread", "main-EventThread", commit} <= internal
    report = analyze_json(path)
    for finding in report["findings"]:
        assert not internal & set(finding["threads"]), (finding["rule"], finding["threads"])
        # The fetcher is a victim: only the rule about the blocked fetcher puts it first.
        if finding["rule"] != "KD201":
            assert finding["threads"][0] != fetcher_of(scenario), (finding["rule"], finding["threads"])


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_three_dumps_of_the_process_blame_only_the_payments_worker(scenario: str) -> None:
    """The three files are one JVM taken one after the other: a series, so KD501 (a thread that
    does not move) runs too. The fetcher's idle neighbours in the connector do not move either, by
    design, and must not be reported."""
    report = analyze_json(*(CAPTURED / scenario / name for name in DUMP_FILES))
    assert report["series"][0]["dumps"] == 3
    fetcher = fetcher_of(scenario)
    subjects = {(finding["rule"], finding["threads"][0]) for finding in report["findings"]}
    assert subjects == {
        ("KD201", fetcher),  # blocked in put (once per kind of dump: with and without lock data)
        ("KD202", STARVING[0]),  # the starving streams, victims
        ("KD203", STALLED),  # the culprit
        ("KD501", fetcher),  # the same stack in all three dumps
        ("KD501", STALLED),
    }
    (fetcher_still,) = [f for f in report["findings"] if f["rule"] == "KD501" and f["threads"][0] == fetcher]
    assert "blocked putting into a full queue" in fetcher_still["message"]


@pytest.mark.parametrize("scenario", SCENARIOS)
def test_every_stream_of_the_connector_is_thread_0_of_its_topic(scenario: str) -> None:
    """One stream per topic: ZooKeeper names every partition's owner <consumerId>-0, whatever the
    topic, and nothing in the owner tells which application thread iterates the stream."""
    owners = {
        node["path"].split("/owners/")[1]: node["value"]
        for node in group_record(scenario)["nodes"]
        if "/owners/" in node["path"]
    }
    assert owners == {
        f"{topic}/{partition}": f"{consumer_id(scenario)}-0"
        for topic in ("orders", "payments", "shipments")
        for partition in (0, 1)
    }


HEALTHY = ("real-old-consumer-healthy-0.8.2.2", "real-old-consumer-healthy-1.1.1")
HEALTHY_CASES = [(scenario, name) for scenario in HEALTHY for name in DUMP_FILES]


@pytest.mark.parametrize(("scenario", "name"), HEALTHY_CASES, ids=[f"{s}/{n}" for s, n in HEALTHY_CASES])
def test_a_caught_up_consumer_is_no_stall(scenario: str, name: str) -> None:
    report = analyze_json(CAPTURED / scenario / name, exit_code=ExitCode.OK)
    assert report["findings"] == []
    assert report["verdict"].startswith("No stall found")
    # Recognised for what it is: the connector's fetcher and the three streams waiting in take.
    roles = report["series"][0]["kafka_threads"]
    assert roles["old-consumer-fetcher"] == 1 and roles["old-consumer-stream"] == 3, roles


@pytest.mark.parametrize("scenario", HEALTHY)
def test_an_idle_fetcher_waiting_on_the_broker_is_not_a_thread_that_does_not_move(scenario: str) -> None:
    """A caught-up fetcher sends a fetch that the broker holds for fetch.wait.max.ms, again and
    again: every dump finds it RUNNABLE in the same socket read under SimpleConsumer.fetch. KD501
    took that for a thread stuck in native I/O (the imitation's fetcher slept instead, which KD501
    skips), and the verdict of a healthy consumer read "At risk"."""
    paths = [CAPTURED / scenario / name for name in DUMP_FILES]
    fetcher = fetcher_of(scenario)
    for path in paths:  # the shape the regression needs: the same idle read in every dump
        (dump,) = read_dumps(str(path))
        (thread,) = [t for t in dump.threads if t.name == fetcher]
        assert thread.status.value == "RUNNABLE", (path, thread.status)
        assert any(frame.function == "kafka.consumer.SimpleConsumer.fetch" for frame in thread.frames)
    report = analyze_json(*paths, exit_code=ExitCode.OK)
    assert report["series"][0]["dumps"] == 3
    assert report["findings"] == [], [(f["rule"], f["threads"]) for f in report["findings"]]
    assert report["verdict"].startswith("No stall found")


def test_a_slow_handler_is_named_without_claiming_it_stopped() -> None:
    """Payments sleeps 200 ms a record: the fetcher waits in put most of the time, the other topics
    get a chunk now and then. The dump names the slow worker, and says a sleep may be slow, not
    stopped (the offsets tell, the stacks do not)."""
    scenario = "real-old-consumer-slow-0.8.2.2"
    for name in DUMP_FILES:
        report = analyze_json(CAPTURED / scenario / name)
        findings = by_rule(report)
        (stopped,) = findings["KD203"]
        assert stopped["threads"] == [STALLED, fetcher_of(scenario)]
        assert stopped["details"]["doing"] == (
            "sleeping in java.lang.Thread.sleep under com.example.orderservice.PaymentHandler.handle"
        )
        assert "drains the queue slowly rather than not at all" in stopped["message"]
        assert f"Stream thread {STALLED} drains its queue slowly or not at all" in report["verdict"]
        assert findings["KD202"][0]["threads"] == STARVING


LEADER_MOVED = "real-old-consumer-leader-moved-0.8.2.2"


def leader_finder_of(scenario: str) -> str:
    return f"{consumer_id(scenario)}-leader-finder-thread"


@pytest.mark.parametrize("name", ["jstack-l.txt", "jcmd-thread-print-l.txt"])
def test_a_leader_move_leaves_the_leader_finder_waiting_for_the_blocked_fetchers_lock(name: str) -> None:
    """Two brokers; the stall blocks broker 0's fetcher; then broker 1, leading orders, stops. The
    leader finder re-adds orders and, shutting idle fetchers down, asks every fetcher for its
    partition count: AbstractFetcherThread.partitionCount takes the blocked fetcher's partition-map
    lock, so it parks there and the consumer never follows the leader move."""
    findings = by_rule(analyze_json(CAPTURED / LEADER_MOVED / name))
    fetcher, finder = fetcher_of(LEADER_MOVED), leader_finder_of(LEADER_MOVED)
    (queued,) = findings["KD204"]
    assert queued["threads"] == [finder]
    assert queued["message"] == f"{finder} waits for the lock {fetcher} holds."
    quoted = [item["text"] for item in queued["evidence"]]
    assert any("kafka.server.AbstractFetcherThread.partitionCount" in line for line in quoted), quoted
    assert any("ReentrantLock$NonfairSync" in line for line in quoted), quoted
    # KD107 tells the same in generic terms: a put under a lock another thread waits for, and the
    # thread of the stream loop that is not taking (the culprit of KD203) as the busy consumer.
    (put,) = findings["KD107"]
    assert put["threads"] == [fetcher, finder, STALLED]
    assert put["details"]["waiting"] == [finder] and put["details"]["busy_consumers"] == [STALLED]
    assert findings["KD201"][0]["threads"] == [fetcher]
    assert findings["KD203"][0]["threads"] == [STALLED, fetcher]


def test_without_lock_data_the_leader_finder_is_told_by_its_frames() -> None:
    findings = by_rule(analyze_json(CAPTURED / LEADER_MOVED / "jstack.txt"))
    fetcher, finder = fetcher_of(LEADER_MOVED), leader_finder_of(LEADER_MOVED)
    (queued,) = findings["KD204"]
    assert queued["threads"] == [finder]
    assert "the dump has no lock data to show it is" in queued["message"] and fetcher in queued["message"]
    (put,) = findings["KD107"]
    assert put["severity"] == "info" and put["threads"][:2] == [fetcher, finder]


def test_the_stall_alone_leaves_the_leader_finder_idle() -> None:
    """Without a leader move the real leader finder waits on its own condition: nothing queues
    behind the blocked fetcher's lock, and KD204 and KD107 stay silent."""
    for scenario in SCENARIOS:
        for name in DUMP_FILES:
            findings = by_rule(analyze_json(CAPTURED / scenario / name))
            assert "KD204" not in findings and "KD107" not in findings, (scenario, name)


def test_fifty_kill_3_dumps_name_the_fetcher_and_the_payments_worker() -> None:
    scenario = "real-old-consumer-stall-0.8.2.2"
    report = analyze_json(CAPTURED / scenario / "kill3-50-dumps.log.gz")
    assert report["series"][0]["dumps"] == 50
    findings = by_rule(report)
    assert {finding["threads"][0] for finding in findings["KD201"]} == {fetcher_of(scenario)}
    assert {finding["threads"][0] for finding in findings["KD501"]} == {fetcher_of(scenario), STALLED}


@pytest.mark.parametrize("name", ["kill3-stdout.log", "kill3-stdout-concurrent-locks.log"])
def test_kill_3_logs_of_the_stall_hold_three_dumps_after_the_programs_own_lines(name: str) -> None:
    path = CAPTURED / "real-old-consumer-stall-0.8.2.2" / name
    dumps = list(read_dumps(str(path)))
    assert len(dumps) == 3 and all(dump.unparsed_count == 0 for dump in dumps)
    # -XX:+PrintConcurrentLocks adds the synchronizers a thread owns; plain kill -3 does not.
    assert all(dump.has_lock_data == (name == "kill3-stdout-concurrent-locks.log") for dump in dumps)
    fetchers = {t.name for dump in dumps for t in dump.threads if t.name.startswith("ConsumerFetcherThread-")}
    assert len(fetchers) == 1
    report = analyze_json(path)
    assert by_rule(report)["KD201"][0]["threads"] == sorted(fetchers)


@pytest.mark.parametrize("name", ["thread-dump.txt", "thread-dump.json"])
def test_jcmd_dump_to_file_of_the_stall_names_the_fetcher_and_says_what_it_cannot_show(name: str) -> None:
    scenario = "real-old-consumer-stall-0.8.2.2-jdk25"
    report = analyze_json(CAPTURED / scenario / name)
    findings = by_rule(report)
    assert findings["KD201"][0]["threads"] == [fetcher_of(scenario)]
    assert findings["KD203"][0]["threads"] == [STALLED, fetcher_of(scenario)]
    assert findings["KD202"][0]["threads"] == STARVING
    caveats = " ".join(str(caveat) for caveat in report["caveats"])
    assert "does not say who owns a java.util.concurrent lock" in caveats
