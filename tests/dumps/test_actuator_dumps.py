"""Spring Boot Actuator's /actuator/threaddump, JSON and text, as a Spring Kafka application serves it.

The captured scenario real-new-consumer-coordinator-unavailable-3.9.1 is Apache Kafka's real consumer
(kafka-clients 3.9.1) whose group coordinator's broker was lost: fulfilment-poll holds the
ConsumerCoordinator while it sleeps between FindCoordinator attempts, and the heartbeat thread is
BLOCKED taking that monitor back after its wait. The stalled JVM wrote its threads in both of the
endpoint's renderings (fixtures/java-real/com/example/threaddumps/ActuatorThreadDump.java: the
endpoint's JSON of ThreadInfo, and its text), with `jstack -l` of the same JVM beside them.
"""

from __future__ import annotations

import json
from pathlib import Path

from kafkadiag.dumps import read_dumps
from kafkadiag.dumps.detect import detect_format
from kafkadiag.dumps.lines import MAX_LINE_CHARS, iter_lines
from kafkadiag.exitcodes import ExitCode
from kafkadiag.model import DumpFormat, LockEventKind, ThreadDump

from ..cli.test_dump_parse_cli import run
from ..conftest import CAPTURED

SCENARIO = CAPTURED / "real-new-consumer-coordinator-unavailable-3.9.1"
HEARTBEAT = "kafka-coordinator-heartbeat-thread | fulfilment"
POLL_THREAD = "fulfilment-poll"


def only_dump(path: Path) -> ThreadDump:
    (dump,) = read_dumps(str(path))
    return dump


def analyze_json(path: Path) -> dict:  # type: ignore[type-arg]
    _, out, err = run(["dump", "analyze", "--format", "json", str(path)])
    assert out, err
    return json.loads(out)


def test_both_renderings_are_detected() -> None:
    json_form = list(iter_lines(str(SCENARIO / "actuator-threaddump.json")))
    text_form = list(iter_lines(str(SCENARIO / "actuator-threaddump.txt")))
    assert detect_format(json_form) is DumpFormat.ACTUATOR_JSON
    assert detect_format(text_form) is DumpFormat.NETBEANS  # the endpoint copies VisualVM's layout


def test_json_and_text_read_as_the_same_threads_waits_and_locks() -> None:
    from_json = only_dump(SCENARIO / "actuator-threaddump.json")
    from_text = only_dump(SCENARIO / "actuator-threaddump.txt")
    assert from_json.unparsed_count == 0 and from_json.has_lock_data
    assert [(t.name, t.state, t.status) for t in from_json.threads] == [
        (t.name, t.state, t.status) for t in from_text.threads
    ]
    assert [[f.function for f in t.frames] for t in from_json.threads] == [
        [f.function for f in t.frames] for t in from_text.threads
    ]
    for dump in (from_json, from_text):
        heartbeat, poll = dump.thread_named(HEARTBEAT), dump.thread_named(POLL_THREAD)
        assert heartbeat is not None and poll is not None
        waits = heartbeat.waits_for()
        assert waits is not None and waits.kind is LockEventKind.WAITING_TO_RELOCK
        assert waits.lock_class == "org.apache.kafka.clients.consumer.internals.ConsumerCoordinator"
        assert waits.lock_id in {lock.lock_id for lock in poll.held_locks()}


def test_kd303_names_the_same_threads_in_json_text_and_jstack() -> None:
    named = []
    for name in ("actuator-threaddump.json", "actuator-threaddump.txt", "jstack-l.txt"):
        report = analyze_json(SCENARIO / name)
        findings = report["findings"]
        named.append(sorted(finding["threads"] for finding in findings if finding["rule"] == "KD303"))
    assert named[0] == named[1] == named[2] == [[POLL_THREAD, HEARTBEAT]]


def test_a_compact_document_longer_than_the_line_cap_is_read_whole(tmp_path: Path) -> None:
    # The endpoint sends one line; a busy application's runs to megabytes. GIVEN the captured
    # document with its threads repeated (renamed) until the line is past the cap for text lines
    document = json.loads((SCENARIO / "actuator-threaddump.json").read_text(encoding="utf-8"))
    threads = document["threads"]
    copies = []
    while len(json.dumps({"threads": copies}, separators=(",", ":"))) <= 2 * MAX_LINE_CHARS:
        copies += [dict(thread, threadName=f"{thread['threadName']} #{len(copies)}") for thread in threads]
    big = tmp_path / "threaddump.json"
    big.write_text(json.dumps({"threads": copies}, separators=(",", ":")), encoding="utf-8")
    assert "\n" not in big.read_text(encoding="utf-8")
    # WHEN it is read THEN every thread is there, and nothing was cut
    dump = only_dump(big)
    assert len(dump.threads) == len(copies)


def test_an_indented_document_points_each_thread_at_its_name(tmp_path: Path) -> None:
    document = json.loads((SCENARIO / "actuator-threaddump.json").read_text(encoding="utf-8"))
    indented = tmp_path / "threaddump.json"
    indented.write_text(json.dumps(document, indent=2), encoding="utf-8")
    lines = indented.read_text(encoding="utf-8").splitlines()
    for thread in only_dump(indented).threads:
        assert lines[thread.line_no - 1].strip() == f'"threadName": {json.dumps(thread.name)},'


def test_json_that_is_not_a_thread_dump_is_refused_with_a_reason(tmp_path: Path) -> None:
    other = tmp_path / "metrics.json"
    other.write_text('{"threads": 42, "threadName": "not a dump"}\n', encoding="utf-8")
    code, _, err = run(["dump", "analyze", str(other)])
    assert code == ExitCode.INPUT_UNREADABLE
    assert "not a Spring Boot Actuator thread dump" in err


SAMURAI_CURL = Path(__file__).parent / "public" / "samurai-spring-boot-2.5.4-java8.dmp"


def test_actuator_dump_saved_with_curl_i_keeps_its_threads_and_its_deadlock() -> None:
    # GIVEN samurai's test file: `curl -i` output (status line, headers, blank line) and the compact
    # JSON whose serving thread calls ThreadDumpEndpoint.threadDump
    assert '"methodName":"threadDump"' in SAMURAI_CURL.read_text()
    # WHEN it is read THEN it is the Actuator's JSON (not jcmd's, whose root key is "threadDump")
    (dump,) = read_dumps(str(SAMURAI_CURL))
    assert dump.format is DumpFormat.ACTUATOR_JSON
    assert len(dump.threads) == 22
    by_name = {thread.name: thread for thread in dump.threads}
    assert (
        by_name["sleepingThread"].java_id == 19
        and by_name["sleepingThread"].frames[0].function == "java.lang.Thread.sleep"
    )
    dead = by_name["deadLock1"]
    assert [(e.kind, e.lock_id) for e in dead.lock_events[:2]] == [
        (LockEventKind.WAITING_TO_LOCK, 1598621278),
        (LockEventKind.LOCKED, 325888395),
    ]
    # AND the analysis names the deadlock, and says the HTTP head was skipped
    code, out, _ = run(["dump", "analyze", str(SAMURAI_CURL)])
    assert code == ExitCode.FINDINGS
    assert "deadLock1" in out and "deadLock2" in out
    assert "curl -i" in " ".join(out.split())


def test_actuator_text_dump_with_a_header_that_is_the_name_alone() -> None:
    # GIVEN samurai's text rendering of the same endpoint, whose Finalizer header is `"Finalizer"`
    path = Path(__file__).parent / "public" / "samurai-spring-boot-2.5.4-java8-text.dmp"
    assert '\n"Finalizer"\n   java.lang.Thread.State: WAITING' in path.read_text()
    # WHEN it is read THEN the Finalizer is a thread of its name, in Object.wait(), and no line is
    # left unread
    (dump,) = read_dumps(str(path))
    assert len(dump.threads) == 25 and dump.unparsed_count == 0
    finalizer = dump.thread_named("Finalizer")
    assert finalizer is not None and finalizer.frames[0].function == "java.lang.Object.wait"
    assert not any(thread.name.startswith("(no header") for thread in dump.threads)
