"""`kafkadiag dump analyze` on thread dumps of Apache Kafka's REAL Java consumer and Kafka Streams.

fixtures/capture_real_new_consumer.py ran a fulfilment service (fixtures/java-real/com/example/
fulfilment) on the released jars of kafka-clients 4.1.1 (classic protocol and KIP-848's
group.protocol=consumer, on a KRaft 4.1.1 broker), 3.9.1, 2.8.2 and 1.1.1 (on a 3.9.1 broker, two of
them when the coordinator's is lost), and a Kafka Streams 4.1.1 application (com.example.stocklevels).
Every scenario's poll thread is
`fulfilment-poll`; workers are `fulfilment-worker-<n>` (a pool) or `picking-worker-<n>` (one lane per
partition). Which pool worker got stuck in a call is the pool's choice: the tests read it from the
dump (the one in SilentService.call), never from a name copied here. Beside each dump the capture
kept what the broker release's kafka-consumer-groups printed for the group.

GIVEN each real capture, WHEN it is analysed, THEN the rule the scenario is about names the right
thread first, and no Kafka or JVM internal thread (heartbeat, consumer_background_thread, the
Streams producer, admin client, state updater and cleanup threads, the JVM's own) is ever named.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kafkadiag.dumps import read_dumps
from kafkadiag.exitcodes import ExitCode

from ..cli.test_dump_parse_cli import run
from ..conftest import CAPTURED

DUMP_FILES = ("jstack-l.txt", "jstack.txt", "jcmd-thread-print-l.txt")
MEMBER_DUMP = "member-jstack-l.txt"  # listener-blocks: the second member's JVM
POLL = "fulfilment-poll"
HEARTBEAT = "kafka-coordinator-heartbeat-thread | fulfilment"
BACKGROUND = "consumer_background_thread"
KIP848 = "-consumer-protocol"

HANDOFF = (
    "real-new-consumer-handoff-full-4.1.1",
    "real-new-consumer-handoff-full-4.1.1-consumer-protocol",
    "real-new-consumer-handoff-full-3.9.1",
    "real-new-consumer-handoff-full-2.8.2",
    "real-new-consumer-handoff-full-1.1.1",
)
HEALTHY = ("real-new-consumer-healthy-4.1.1", "real-new-consumer-healthy-4.1.1-consumer-protocol")
WAITS_WORKERS = "real-new-consumer-waits-workers-4.1.1"
SINGLE_WORKER = "real-new-consumer-single-worker-4.1.1"
POLL_INTERVAL = (
    "real-new-consumer-poll-interval-4.1.1",
    "real-new-consumer-poll-interval-4.1.1-consumer-protocol",
)
LISTENER = (
    "real-new-consumer-listener-blocks-4.1.1",
    "real-new-consumer-listener-blocks-4.1.1-consumer-protocol",
    "real-new-consumer-listener-blocks-1.1.1",
)
STREAMS = "real-kafka-streams-punctuator-4.1.1"
COORDINATOR_LOST = "real-new-consumer-coordinator-lost-4.1.1"
COORDINATOR_UNAVAILABLE = "real-new-consumer-coordinator-unavailable-3.9.1"
SHARED = "real-new-consumer-shared-consumer-4.1.1"
POSITION = "real-new-consumer-position-hang-1.1.1"
CLOSING = "real-new-consumer-close-hang-4.1.1"
ALL = (
    *HANDOFF,
    *HEALTHY,
    WAITS_WORKERS,
    SINGLE_WORKER,
    *POLL_INTERVAL,
    *LISTENER,
    STREAMS,
    COORDINATOR_LOST,
    COORDINATOR_UNAVAILABLE,
    SHARED,
    POSITION,
    CLOSING,
)
STREAM_THREAD = re.compile(r"^stock-levels-[0-9a-f-]{36}-StreamThread-1$")


def analyze_json(*paths: Path, exit_code: ExitCode | None = ExitCode.FINDINGS) -> dict:
    """The JSON report; `exit_code` None takes either (information alone exits 0)."""
    code, out, err = run(["dump", "analyze", "--format", "json", *map(str, paths)])
    assert code in ((ExitCode.OK, ExitCode.FINDINGS) if exit_code is None else (exit_code,)), (err, out)
    return json.loads(out)


def by_rule(report: dict) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for finding in report["findings"]:
        found.setdefault(finding["rule"], []).append(finding)
    return found


def cases(scenarios: tuple[str, ...]) -> list[tuple[str, str]]:
    return [(scenario, name) for scenario in scenarios for name in DUMP_FILES]


def ids(cases: list[tuple[str, str]]) -> list[str]:
    return [f"{scenario}/{name}" for scenario, name in cases]


def threads_of(path: Path) -> dict[str, list[str]]:
    """Thread name -> the functions of its frames, from kafkadiag's own parse."""
    (dump,) = read_dumps(str(path))
    return {thread.name: [frame.function for frame in thread.frames] for thread in dump.threads}


def in_the_call(path: Path) -> list[str]:
    """The threads the dump shows in the downstream call that never answers."""
    return [
        name
        for name, frames in threads_of(path).items()
        if "com.example.fulfilment.SilentService.call" in frames
    ]


def stream_thread(path: Path) -> str:
    (name,) = [name for name in threads_of(path) if STREAM_THREAD.match(name)]
    return name


def application_threads(path: Path) -> set[str]:
    """The threads the application started (the rest are Kafka's, Kafka Streams' or the JVM's)."""
    names = set(threads_of(path))
    ours = {"main", POLL, "metrics-reporter", "offset-monitor-1", "fulfilment-shutdown"}
    ours |= {n for n in names if n.startswith(("fulfilment-worker-", "picking-worker-"))}
    # The stream thread is Kafka Streams', but it runs the application's punctuator: the culprit.
    return ours | {n for n in names if STREAM_THREAD.match(n)}


@pytest.mark.parametrize(("scenario", "name"), cases(HANDOFF), ids=ids(cases(HANDOFF)))
def test_the_poll_thread_is_blocked_on_the_full_handoff_queue_on_every_client_line(
    scenario: str, name: str
) -> None:
    path = CAPTURED / scenario / name
    report = analyze_json(path)
    (blocked,) = by_rule(report)["KD302"]
    assert blocked["severity"] == "error"
    assert blocked["threads"][0] == POLL
    assert "parked in java.util.concurrent.ArrayBlockingQueue.put" in blocked["message"]
    # The worker in the inventory call that never answers, and the two blocked behind it on the
    # shared client, are the workers that do not take from the queue.
    (calling,) = in_the_call(path)
    assert set(blocked["threads"][1:]) == {
        "fulfilment-worker-1",
        "fulfilment-worker-2",
        "fulfilment-worker-3",
    }
    assert (
        f"{calling} (runnable in sun.nio.ch.SocketDispatcher.read0 under com.example.fulfilment."
        in blocked["message"]
    )
    assert report["verdict"].startswith("Stalled")
    assert f"Poll thread {POLL} is blocked on a full hand-off queue" in report["verdict"]
    # The client's own thread that keeps the member in the group is recognised for what it is.
    roles = report["series"][0]["kafka_threads"]
    assert roles == ({"consumer-background": 1} if scenario.endswith(KIP848) else {"consumer-heartbeat": 1})


EVERY_DUMP = cases(ALL) + [(scenario, MEMBER_DUMP) for scenario in LISTENER]


@pytest.mark.parametrize(("scenario", "name"), EVERY_DUMP, ids=ids(EVERY_DUMP))
def test_no_kafka_or_jvm_internal_thread_is_named(scenario: str, name: str) -> None:
    path = CAPTURED / scenario / name
    internal = set(threads_of(path)) - application_threads(path)
    # The capture holds the client's own threads, so this test has something to get wrong.
    client = (
        BACKGROUND
        if scenario.endswith(KIP848)
        else ("kafka-coordinator-heartbeat-thread | stock-levels" if scenario == STREAMS else HEARTBEAT)
    )
    assert client in internal
    report = analyze_json(path, exit_code=None)
    for finding in report["findings"]:
        if finding["rule"] in ("KD303", "KD304"):
            # The heartbeat thread blocked behind the poll thread is named as its victim, never first.
            assert finding["threads"][0] not in internal, finding["threads"]
            continue
        assert not internal & set(finding["threads"]), (finding["rule"], finding["threads"])


@pytest.mark.parametrize(("scenario", "name"), cases(HEALTHY), ids=ids(cases(HEALTHY)))
def test_a_caught_up_consumer_is_no_stall(scenario: str, name: str) -> None:
    """The poll thread idles inside poll(): classic, RUNNABLE in the selector's epoll wait; with
    group.protocol=consumer, TIMED_WAITING (parking) in FetchBuffer.awaitNotEmpty while the
    background thread does the network I/O. The workers wait in take()."""
    path = CAPTURED / scenario / name
    report = analyze_json(path, exit_code=ExitCode.OK)
    assert report["findings"] == []
    assert report["verdict"].startswith("No stall found")
    kip848 = scenario.endswith(KIP848)
    poll_frames = threads_of(path)[POLL]
    idle = (
        "org.apache.kafka.clients.consumer.internals.FetchBuffer.awaitNotEmpty"
        if kip848
        else "sun.nio.ch.EPoll.wait"
    )
    assert idle in poll_frames[:6]
    client = "consumer-background" if kip848 else "consumer-heartbeat"
    assert report["series"][0]["kafka_threads"] == {client: 1, "consumer-poll": 1}


@pytest.mark.parametrize("scenario", HEALTHY)
def test_three_dumps_of_a_caught_up_consumer_are_no_stall(scenario: str) -> None:
    report = analyze_json(*(CAPTURED / scenario / name for name in DUMP_FILES), exit_code=ExitCode.OK)
    assert report["series"][0]["dumps"] == 3
    assert report["findings"] == [], [(f["rule"], f["threads"]) for f in report["findings"]]


def test_a_heartbeat_thread_waiting_its_turn_on_the_network_client_lock_does_not_count_as_stuck() -> None:
    """The caught-up 4.1.1 consumer's heartbeat thread sat parked in ReentrantLock.lock under
    ConsumerNetworkClient.poll in all three dumps: the poll thread, idle in its own network poll,
    holds that (fair) lock for up to its poll timeout, and never while application code runs.
    KD501 called the heartbeat thread stuck "waiting for a lock" and the verdict read "At risk"."""
    paths = [CAPTURED / HEALTHY[0] / name for name in DUMP_FILES]
    for path in paths:  # the shape the regression needs, in every dump
        frames = threads_of(path)[HEARTBEAT]
        assert frames[5:7] == [
            "java.util.concurrent.locks.ReentrantLock.lock",
            "org.apache.kafka.clients.consumer.internals.ConsumerNetworkClient.poll",
        ], frames
    report = analyze_json(*paths, exit_code=ExitCode.OK)
    assert report["findings"] == []
    assert report["verdict"].startswith("No stall found")


def test_a_member_waiting_in_the_rebalance_is_told_by_its_disabled_heartbeat_thread() -> None:
    """The second member of listener-blocks waits for the rebalance the stuck listener holds up.
    KD307 looked for AbstractCoordinator.joinGroupIfNeeded, where clients before 2.0 wait; a 4.1.1
    member waits for its JoinGroup answer in pollForFetches' network poll, like an idle consumer,
    and KD307 said nothing. Its heartbeat thread, disabled until the member has its assignment,
    tells it."""
    path = CAPTURED / LISTENER[0] / MEMBER_DUMP
    frames = threads_of(path)[POLL]
    assert "org.apache.kafka.clients.consumer.internals.AbstractCoordinator.joinGroupIfNeeded" not in frames
    assert "org.apache.kafka.clients.consumer.internals.ClassicKafkaConsumer.pollForFetches" in frames
    report = analyze_json(path, exit_code=ExitCode.OK)
    (rebalancing,) = report["findings"]
    assert (rebalancing["rule"], rebalancing["threads"], rebalancing["severity"]) == ("KD307", [POLL], "info")
    assert f"its heartbeat thread ({HEARTBEAT}) waits with no timeout" in rebalancing["message"]


def test_a_kip848_member_has_no_join_to_wait_in() -> None:
    """With group.protocol=consumer the broker assigns partitions as members come and go: the
    second member idles in poll() and nothing is found."""
    report = analyze_json(CAPTURED / LISTENER[1] / MEMBER_DUMP, exit_code=ExitCode.OK)
    assert report["findings"] == []
    assert report["series"][0]["kafka_threads"] == {"consumer-background": 1, "consumer-poll": 1}


@pytest.mark.parametrize("name", DUMP_FILES)
def test_the_poll_thread_waits_on_its_batch_while_one_payment_never_settles(name: str) -> None:
    path = CAPTURED / WAITS_WORKERS / name
    findings = by_rule(analyze_json(path))
    (waiting,) = findings["KD301"]
    (stuck,) = in_the_call(path)
    # Only the worker in the call is named; the two that finished their payments wait for tasks.
    assert waiting["threads"] == [POLL, stuck]
    assert waiting["severity"] == "error"
    # No dump shows it in poll(): it is a poll thread by its name, and the finding says so.
    told = f"{POLL}, a consumer's poll thread by its name (no dump read shows it in KafkaConsumer.poll)"
    assert f"{told}, waits in Future.get instead of calling poll()" in waiting["message"]


@pytest.mark.parametrize("name", DUMP_FILES)
def test_one_lane_carries_the_backlogged_partition_while_the_others_idle(name: str) -> None:
    findings = by_rule(analyze_json(CAPTURED / SINGLE_WORKER / name, exit_code=ExitCode.OK))
    (lone,) = findings["KD305"]
    assert lone["threads"] == ["picking-worker-1"]
    assert lone["severity"] == "info"  # one dump can catch a pool at a quiet moment
    assert lone["details"]["idle_workers"] == ["picking-worker-2", "picking-worker-3", "picking-worker-4"]
    # The poll thread keeps polling (the busy lane's partition is paused): it is not a culprit.
    assert all(POLL not in finding["threads"] for found in findings.values() for finding in found)


def test_the_same_lane_busy_in_three_dumps_is_a_warning() -> None:
    report = analyze_json(*(CAPTURED / SINGLE_WORKER / name for name in DUMP_FILES), exit_code=None)
    (lone,) = by_rule(report)["KD305"]
    assert (lone["threads"], lone["severity"]) == (["picking-worker-1"], "warning")


@pytest.mark.parametrize(("scenario", "name"), cases(POLL_INTERVAL), ids=ids(cases(POLL_INTERVAL)))
def test_a_poll_loop_held_past_max_poll_interval_is_named(scenario: str, name: str) -> None:
    """The label printer never answers and the poll loop calls it inline. No rule said anything
    about one dump of it (KD501 needs several). The classic member's heartbeat thread, once
    max.poll.interval.ms passed, sent LeaveGroup and waits disabled, with no timeout: the dump
    alone shows the member has left, which kafka-consumer-groups confirms."""
    path = CAPTURED / scenario / name
    kip848 = scenario.endswith(KIP848)
    report = analyze_json(path, exit_code=ExitCode.OK if kip848 else ExitCode.FINDINGS)
    (held,) = by_rule(report)["KD310"]
    assert held["threads"] == [POLL]
    assert held["details"]["called_for"] == "between-polls"
    assert (
        "com.example.fulfilment.SilentService.call <- com.example.fulfilment.LabelPrinter.print"
        in held["message"]
    )
    members = (CAPTURED / scenario / "group" / "consumer-groups-members.txt").read_text()
    assert "Consumer group 'fulfilment' has no active members." in members
    if kip848:
        # The background thread looks the same in the group and out of it: the dump cannot tell.
        assert (held["severity"], held["details"]["member_left"]) == ("info", False)
    else:
        assert (held["severity"], held["details"]["member_left"]) == ("error", True)
        assert held["details"]["heartbeat_thread"] == HEARTBEAT
        assert report["verdict"].startswith("Stalled")


@pytest.mark.parametrize(("scenario", "name"), cases(LISTENER), ids=ids(cases(LISTENER)))
def test_a_rebalance_listener_that_blocks_is_named_and_the_heartbeat_is_not_blocked_by_it(
    scenario: str, name: str
) -> None:
    """The imitation ran the listener under the coordinator's monitor, so its heartbeat thread was
    BLOCKED behind it (KD303). Real clients (1.1.1 to 4.1.1) call it outside the monitor: the
    heartbeat thread keeps heartbeating (TIMED_WAITING between heartbeats). KD307 saw only "the
    poll thread is rebalancing" (classic), and nothing at all with group.protocol=consumer, whose
    listener runs from AsyncKafkaConsumer's background events: KD310 names the listener."""
    path = CAPTURED / scenario / name
    # One dump cannot tell a listener that takes a moment from one that never returns: information.
    findings = by_rule(analyze_json(path, exit_code=ExitCode.OK))
    (held,) = findings["KD310"]
    assert held["severity"] == "info"
    assert held["threads"] == [POLL]
    assert held["details"]["called_for"] == "rebalance-listener"
    assert "com.example.fulfilment.RestockingListener.onPartitionsRevoked" in held["message"]
    assert "KD303" not in findings and "KD307" not in findings
    frames = threads_of(path)[POLL]
    caller = (
        "org.apache.kafka.clients.consumer.internals.AsyncKafkaConsumer.processBackgroundEvents"
        if scenario.endswith(KIP848)
        else "org.apache.kafka.clients.consumer.internals.AbstractCoordinator.joinGroupIfNeeded"
    )
    assert caller in frames


@pytest.mark.parametrize("name", DUMP_FILES)
def test_a_stream_thread_stuck_in_a_punctuator_is_named(name: str) -> None:
    path = CAPTURED / STREAMS / name
    report = analyze_json(path, exit_code=ExitCode.OK)
    (held,) = by_rule(report)["KD310"]
    assert held["threads"] == [stream_thread(path)]
    assert held["details"]["called_for"] == "punctuator"
    assert "com.example.stocklevels.SnapshotPunctuator.punctuate" in held["message"]
    roles = report["series"][0]["kafka_threads"]
    assert roles == {"consumer-heartbeat": 1, "producer-io": 1, "admin-client-io": 1, "streams": 1}


@pytest.mark.parametrize("name", DUMP_FILES)
def test_a_heartbeat_thread_blocked_behind_the_poll_thread_finding_the_coordinator(name: str) -> None:
    """The broker froze (SIGSTOP): nothing answers, the session ran out, and poll() looks for the
    coordinator in ensureCoordinatorReady, which holds the coordinator's monitor while it waits for
    an answer. The heartbeat thread is BLOCKED on that monitor: the real way a heartbeat thread is
    held up (a rebalance listener does not hold it, see above). KD303 leaves a holder in network
    I/O alone; KD304 names it, with the heartbeat thread behind it."""
    path = CAPTURED / COORDINATOR_LOST / name
    findings = by_rule(analyze_json(path))
    (spinning,) = findings["KD304"]
    assert spinning["threads"] == [POLL, HEARTBEAT]
    assert spinning["severity"] == "error"
    assert "while holding the coordinator lock" in spinning["message"]
    assert set(findings) == {"KD304"}
    frames = threads_of(path)[POLL]
    assert "org.apache.kafka.clients.consumer.internals.AbstractCoordinator.ensureCoordinatorReady" in frames


SERIES = {
    # scenario -> the (rule, first thread, severity) of three dumps of one JVM taken in turn
    **{
        scenario: {
            ("KD302", POLL, "error"),
            *(
                ("KD501", w, "warning")
                for w in (POLL, "fulfilment-worker-1", "fulfilment-worker-2", "fulfilment-worker-3")
            ),
        }
        for scenario in HANDOFF
    },
    POLL_INTERVAL[0]: {("KD310", POLL, "error"), ("KD501", POLL, "warning")},
    POLL_INTERVAL[1]: {("KD310", POLL, "warning"), ("KD501", POLL, "warning")},
    LISTENER[0]: {("KD310", POLL, "warning"), ("KD501", POLL, "warning")},
    LISTENER[1]: {("KD310", POLL, "warning"), ("KD501", POLL, "warning")},
    # The heartbeat thread BLOCKED in all three dumps (a victim KD304 names), the poll thread in
    # network I/O that answers nothing: it does not count as stuck by itself.
    COORDINATOR_LOST: {("KD304", POLL, "error"), ("KD501", HEARTBEAT, "warning")},
    LISTENER[2]: {("KD310", POLL, "warning"), ("KD501", POLL, "warning")},
    # Asleep between FindCoordinator attempts, with the monitor held: KD303 and KD304 both name it.
    COORDINATOR_UNAVAILABLE: {
        ("KD303", POLL, "error"),
        ("KD304", POLL, "error"),
        ("KD501", HEARTBEAT, "warning"),
    },
    POSITION: {("KD309", "offset-monitor-1", "warning")},
    # The heartbeat thread parked on the network client's lock in all three dumps waits its turn.
    CLOSING: {("KD309", POLL, "warning")},
    SHARED: set(),  # the dumps alone: nothing is stuck (the exception is in the log)
}


@pytest.mark.parametrize("scenario", sorted(SERIES))
def test_three_dumps_of_the_process_name_only_the_stalled_threads(scenario: str) -> None:
    """KD501 joins in (same stack in all three dumps): the poll thread and the workers that do not
    move, never the heartbeat or background thread, which wait by design."""
    report = analyze_json(*(CAPTURED / scenario / name for name in DUMP_FILES), exit_code=None)
    assert report["series"][0]["dumps"] == 3
    assert {(f["rule"], f["threads"][0], f["severity"]) for f in report["findings"]} == SERIES[scenario]


def test_three_dumps_of_the_stream_thread_in_its_punctuator_are_a_warning() -> None:
    paths = [CAPTURED / STREAMS / name for name in DUMP_FILES]
    report = analyze_json(*paths, exit_code=None)
    culprit = stream_thread(paths[0])
    assert {(f["rule"], f["threads"][0], f["severity"]) for f in report["findings"]} == {
        ("KD310", culprit, "warning"),
        ("KD501", culprit, "warning"),
    }


def test_every_capture_is_in_the_manifest_with_its_client_and_broker() -> None:
    manifest = json.loads((CAPTURED / "MANIFEST.json").read_text())
    entries = {entry["path"]: entry for entry in manifest["files"]}
    for scenario in ALL:
        for name in DUMP_FILES:
            entry = entries[f"{scenario}/{name}"]
            assert entry["generator"] == "fixtures/capture_real_new_consumer.py"
            versions = entry["tool_versions"]
            line = scenario.rsplit("-", 1)[-1] if not scenario.endswith(KIP848) else "4.1.1"
            assert f" {line} (" in versions["kafka client"], versions
            assert versions["group protocol"] == ("consumer" if scenario.endswith(KIP848) else "classic")


@pytest.mark.parametrize("name", DUMP_FILES)
def test_a_worker_stuck_in_a_socket_read_is_not_the_only_busy_worker(name: str) -> None:
    """The real waits-workers pool: one worker RUNNABLE in the bank's socket read, the other two
    waiting for tasks. KD305 called the stuck worker "the only busy worker" of its pool, as if it
    carried a backlog; it waits for a peer, and KD301 names it as what the poll thread waits for."""
    path = CAPTURED / WAITS_WORKERS / name
    (stuck,) = in_the_call(path)
    assert threads_of(path)[stuck][0] == "sun.nio.ch.SocketDispatcher.read0"
    findings = by_rule(analyze_json(path))
    assert "KD305" not in findings, findings.get("KD305")
    assert findings["KD301"][0]["threads"] == [POLL, stuck]


def test_a_member_of_a_client_before_2_0_waits_for_the_join_inside_join_group_if_needed() -> None:
    """kafka-clients 1.1.1's second member of listener-blocks: poll(long), before KIP-266, waits for
    the rebalance the stuck listener holds up in AbstractCoordinator.joinGroupIfNeeded itself (a
    2.0+ member waits in its ordinary network polls, above), its heartbeat thread disabled."""
    path = CAPTURED / LISTENER[2] / MEMBER_DUMP
    frames = threads_of(path)[POLL]
    join = "org.apache.kafka.clients.consumer.internals.AbstractCoordinator.joinGroupIfNeeded"
    assert join in frames and "org.apache.kafka.clients.consumer.KafkaConsumer.pollOnce" in frames
    report = analyze_json(path, exit_code=ExitCode.OK)
    (rebalancing,) = report["findings"]
    assert (rebalancing["rule"], rebalancing["threads"], rebalancing["severity"]) == ("KD307", [POLL], "info")
    assert f"{POLL} is rebalancing ({join})" in rebalancing["message"]


def test_a_1_1_1_listener_runs_outside_the_coordinators_monitor_too() -> None:
    """kafka-clients 1.1.1 calls the listener from ConsumerCoordinator.onJoinPrepare, outside the
    monitor: the heartbeat thread waits between heartbeats, not for the poll thread."""
    path = CAPTURED / LISTENER[2] / "jstack-l.txt"
    frames = threads_of(path)[POLL]
    revoked = frames.index("com.example.fulfilment.RestockingListener.onPartitionsRevoked")
    assert (
        frames[revoked + 1] == "org.apache.kafka.clients.consumer.internals.ConsumerCoordinator.onJoinPrepare"
    )
    (dump,) = read_dumps(str(path))
    heartbeat = dump.thread_named(HEARTBEAT)
    assert heartbeat is not None and heartbeat.status.name == "IN_OBJECT_WAIT_TIMED"


@pytest.mark.parametrize("name", DUMP_FILES)
def test_a_poll_thread_asleep_between_find_coordinator_attempts_holds_the_heartbeat_thread(name: str) -> None:
    """kafka-clients 3.9.1, two brokers, the one leading the group's __consumer_offsets partition
    stopped: the other answers FindCoordinator with COORDINATOR_NOT_AVAILABLE, and poll() sleeps
    its retry backoff inside the synchronized ensureCoordinatorReady. The heartbeat thread is BLOCKED
    on the monitor the sleeping poll thread holds: KD303 (a holder not in network I/O) and KD304
    (discovery retried with the monitor held) both name the poll thread first."""
    path = CAPTURED / COORDINATOR_UNAVAILABLE / name
    frames = threads_of(path)[POLL]
    assert frames[0] == "java.lang.Thread.sleep"
    assert "org.apache.kafka.clients.consumer.internals.AbstractCoordinator.ensureCoordinatorReady" in frames
    findings = by_rule(analyze_json(path))
    assert set(findings) == {"KD303", "KD304"}
    (blocked,) = findings["KD303"]
    assert (blocked["threads"], blocked["severity"]) == ([POLL, HEARTBEAT], "error")
    assert "which is sleeping in java.lang.Thread.sleep" in blocked["message"]
    (spinning,) = findings["KD304"]
    assert spinning["threads"] == [POLL, HEARTBEAT]
    assert "while holding the coordinator lock" in spinning["message"]


def test_the_reporter_refused_by_the_consumer_is_found_in_the_log_before_the_dumps() -> None:
    """kafka-clients 4.1.1: metrics-reporter called the poll thread's consumer (assignment()) while it
    was in poll(); the ConcurrentModificationException it logged precedes the three kill -3 dumps.
    The dumps alone show nothing stuck."""
    log = CAPTURED / SHARED / "kill3-stdout.log"
    text = log.read_text()
    assert "KafkaConsumer is not safe for multi-threaded access. currentThread(name: metrics-reporter" in text
    assert "ClassicKafkaConsumer.acquire" in text.split("Full thread dump", 1)[0]
    report = analyze_json(log)
    assert report["series"][0]["dumps"] == 3
    (shared,) = report["findings"]
    assert (shared["rule"], shared["severity"]) == ("KD306", "error")
    assert shared["evidence"][0]["text"].startswith("java.util.ConcurrentModificationException")
    for name in DUMP_FILES:
        assert analyze_json(CAPTURED / SHARED / name, exit_code=ExitCode.OK)["findings"] == []


@pytest.mark.parametrize("name", DUMP_FILES)
def test_position_polling_in_its_own_frame_for_a_partition_without_a_leader_is_named(name: str) -> None:
    """kafka-clients 1.1.1's position() on a partition of a topic the cluster lacks loops in its own
    frame (updateFetchPositions, then ConsumerNetworkClient.poll) and never returns: no frame of
    KD309's known waits was above it, and the scheduled task's thread was not named."""
    path = CAPTURED / POSITION / name
    frames = threads_of(path)["offset-monitor-1"]
    position = frames.index("org.apache.kafka.clients.consumer.KafkaConsumer.position")
    assert frames[position - 1] == "org.apache.kafka.clients.consumer.internals.ConsumerNetworkClient.poll"
    findings = by_rule(analyze_json(path, exit_code=ExitCode.OK))
    (hung,) = findings["KD309"]
    assert (hung["threads"], hung["severity"]) == (["offset-monitor-1"], "warning")
    assert hung["details"]["call"] == "KafkaConsumer.position"
    assert "Before Kafka 2.0 this call has no time limit" in hung["message"]
    assert "It runs a scheduled task" in hung["message"]
    assert set(findings) == {"KD309"}  # the poll thread, consuming, is not a culprit


@pytest.mark.parametrize("name", DUMP_FILES)
def test_a_stopping_consumer_waits_in_close_for_its_commit(name: str) -> None:
    """kafka-clients 4.1.1, SIGTERM: the shutdown hook stops the loop and joins the poll thread,
    whose close() commits the consumed offsets first; the broker, frozen, does not answer."""
    path = CAPTURED / CLOSING / name
    findings = by_rule(analyze_json(path, exit_code=ExitCode.OK))
    assert set(findings) == {"KD309"}
    (closing,) = findings["KD309"]
    assert closing["threads"] == [POLL]
    assert closing["details"]["call"] == "KafkaConsumer.close"
    assert closing["details"]["waiting_in"] == "ConsumerCoordinator.commitOffsetsSync"


def test_a_heartbeat_thread_waiting_for_the_network_client_is_no_hidden_deadlock_without_lock_data() -> None:
    """The same JVM in plain jstack (no lock data): the heartbeat thread is parked on the consumer's
    network client lock (ConsumerNetworkClient.isUnavailable) while close() commits. KD103 named it
    beside the shutdown hook as parked on 'a lock whose holder this dump cannot show'; only the
    client's own threads take that lock."""
    path = CAPTURED / CLOSING / "jstack.txt"
    frames = threads_of(path)[HEARTBEAT]
    lock = frames.index("java.util.concurrent.locks.ReentrantLock.lock")
    assert (
        frames[lock + 1] == "org.apache.kafka.clients.consumer.internals.ConsumerNetworkClient.isUnavailable"
    )
    assert "KD103" not in by_rule(analyze_json(path, exit_code=ExitCode.OK))
