"""KD308 explains a blocked producer call by what the producer's I/O thread is doing.

GIVEN the captured JVM of Apache Kafka's real producer, kafka-clients 4.1.1
(real-producer-callback-deadlock-4.1.1: ledger-publisher waits in waitOnMetadata while the I/O
thread's send callback is BLOCKED on a lock the publisher holds), and the same dump with the I/O
thread taken out, or replaced by a real idle I/O thread selecting on its sockets (Kafka Streams'
producer, real-kafka-streams-punctuator-4.1.1, renamed), WHEN KD308 runs, THEN it says, in turn:
the two wait for each other (error); no I/O thread is left (error); the cluster does not answer
(warning).
"""

from __future__ import annotations

import re
from pathlib import Path

from kafkadiag.dumps import read_dumps
from kafkadiag.rules.base import Severity
from kafkadiag.rules.engine import analyze

from ..conftest import CAPTURED

CAPTURE = CAPTURED / "real-producer-callback-deadlock-4.1.1" / "jstack-l.txt"
SENDER_BLOCK = re.compile(
    r'(?ms)^"kafka-producer-network-thread \| ledger-producer".*?\n\n   Locked ownable[^\n]*\n[^\n]*\n'
)
IDLE_SENDER = re.compile(
    r'(?ms)^"kafka-producer-network-thread \| (?P<client>[^"]+)".*?\n\n   Locked ownable[^\n]*\n[^\n]*\n'
)


def _selecting() -> str:
    """A real idle I/O thread, selecting on its sockets: Kafka Streams' producer, named ledger-producer."""
    streams = (CAPTURED / "real-kafka-streams-punctuator-4.1.1" / "jstack-l.txt").read_text()
    idle = IDLE_SENDER.search(streams)
    assert idle is not None and "sun.nio.ch.EPoll.wait" in idle.group(0)
    return idle.group(0).replace(idle["client"], "ledger-producer", 1)


SELECTING = _selecting()


def kd308(path: Path):  # type: ignore[no-untyped-def]
    """KD308's finding on ledger-publisher's wait for metadata (ledger-closer's flush has its own)."""
    findings = analyze(list(read_dumps(str(path)))).findings
    publisher = [f for f in findings if f.rule == "KD308" and "ledger-publisher" in f.threads]
    assert len(publisher) == 1, findings
    return publisher[0]


def test_a_callback_blocked_on_the_senders_lock_is_a_deadlock() -> None:
    finding = kd308(CAPTURE)
    assert finding.severity is Severity.ERROR
    assert finding.threads[0] == "kafka-producer-network-thread | ledger-producer"
    assert "the two wait for each other" in finding.message


def test_without_an_io_thread_nothing_completes_the_wait(tmp_path: Path) -> None:
    text = CAPTURE.read_text()
    assert SENDER_BLOCK.search(text) is not None
    path = tmp_path / "no-sender.txt"
    path.write_text(SENDER_BLOCK.sub("", text))
    finding = kd308(path)
    assert finding.severity is Severity.ERROR
    assert "No producer I/O thread" in finding.message and "ledger-publisher" in finding.threads


def test_an_io_thread_doing_network_io_points_at_the_cluster(tmp_path: Path) -> None:
    path = tmp_path / "selecting.txt"
    path.write_text(SENDER_BLOCK.sub(lambda _: SELECTING, CAPTURE.read_text()))
    finding = kd308(path)
    assert finding.severity is Severity.WARNING
    assert "brokers are unreachable" in finding.message
    assert "the two wait for each other" not in finding.message


def test_a_close_waits_for_the_io_thread_only_while_it_joins_it(tmp_path: Path) -> None:
    # GIVEN ledger-shutdown in KafkaProducer.close(), joining the I/O thread, and the same thread
    # waiting in close() for something else (a metrics reporter it closes)
    def closing_threads(path: Path) -> list[str]:
        findings = analyze(list(read_dumps(str(path)))).findings
        return [
            name for f in findings if f.rule == "KD308" for name in f.threads if name == "ledger-shutdown"
        ]

    text = CAPTURE.read_text()
    close = r"\tat org\.apache\.kafka\.clients\.producer\.KafkaProducer\.close"
    join = re.compile(rf"\tat java\.lang\.Thread\.join\(.*\)\n(?=.*\n{close})")
    assert len(join.findall(text)) == 1
    elsewhere = tmp_path / "close-elsewhere.txt"
    elsewhere.write_text(
        join.sub("\tat org.apache.kafka.common.metrics.Metrics.close(Metrics.java:1)\n", text)
    )
    # WHEN KD308 runs THEN only the join is a wait for the I/O thread
    assert closing_threads(CAPTURE) == ["ledger-shutdown"]
    assert closing_threads(elsewhere) == []


def _io_thread_excerpt(frames_kept: int) -> str:
    """The captured I/O thread alone, its stack cut after `frames_kept` frames, as an issue
    excerpt often ends (spring-kafka #2744, log4j2 #2893 pasted only the top of the stack)."""
    block = SENDER_BLOCK.search(CAPTURE.read_text())
    assert block is not None
    lines = block.group(0).split("\n")
    return "\n".join(lines[: 2 + frames_kept]) + "\n"


def _kd308_on(tmp_path: Path, text: str) -> list:  # type: ignore[type-arg]
    path = tmp_path / "excerpt.txt"
    path.write_text(text)
    return [f for f in analyze(list(read_dumps(str(path)))).findings if f.rule == "KD308"]


def test_an_io_thread_cut_before_the_producer_frames_is_named_in_its_callback(tmp_path: Path) -> None:
    # GIVEN only the I/O thread, its stack ending in the application's callback (the lock line kept)
    findings = _kd308_on(tmp_path, _io_thread_excerpt(frames_kept=3))
    # THEN it is named as held in code that only a callback (or logging) runs on that thread
    assert len(findings) == 1, findings
    assert list(findings[0].threads) == ["kafka-producer-network-thread | ledger-producer"]
    assert "stack ends before the producer's frames" in findings[0].message


def test_an_io_thread_cut_inside_the_jdk_or_in_the_producer_is_not_named(tmp_path: Path) -> None:
    # GIVEN the same thread with no frame of its own code in view: the header and state line only
    assert _kd308_on(tmp_path, _io_thread_excerpt(frames_kept=0)) == []
    # AND the whole thread selecting on its sockets, as a healthy sender does
    assert _kd308_on(tmp_path, SELECTING) == []


def test_a_producer_relocated_by_a_shading_plugin_is_read_as_the_producer(tmp_path: Path) -> None:
    # GIVEN the capture with Kafka's client relocated, as an agent or a connector jar ships it
    shaded = CAPTURE.read_text().replace(
        "org.apache.kafka.", "org.apache.skywalking.apm.dependencies.org.apache.kafka."
    )
    path = tmp_path / "shaded.txt"
    path.write_text(shaded)
    # WHEN KD308 runs THEN it says what it says of the original: the two wait for each other
    finding = kd308(path)
    assert finding.severity is Severity.ERROR
    assert "the two wait for each other" in finding.message


def test_the_same_deadlock_on_a_1_1_1_producer() -> None:
    # GIVEN kafka-clients 1.1.1: Metadata.awaitUpdate in org.apache.kafka.clients, the callback under
    # KafkaProducer$InterceptorCallback
    finding = kd308(CAPTURED / "real-producer-callback-deadlock-1.1.1" / "jstack-l.txt")
    assert finding.severity is Severity.ERROR
    assert finding.threads[0] == "kafka-producer-network-thread | ledger-producer"
    assert "(Metadata.awaitUpdate)" in finding.message and "the two wait for each other" in finding.message


def test_an_io_thread_held_in_a_callback_under_append_callbacks_is_named() -> None:
    # GIVEN kafka-clients 4.1.1's I/O thread parked in a send callback that waits for a reply, nobody
    # in a producer call: between ProducerBatch.completeFutureAndFireCallbacks and the application's
    # callback sits the producer's own KafkaProducer$AppendCallbacks.onCompletion, which was read as
    # the application's callback, so the thread was not named
    path = CAPTURED / "real-producer-callback-waits-reply-4.1.1" / "jstack-l.txt"
    (dump,) = read_dumps(str(path))
    io_thread = dump.thread_named("kafka-producer-network-thread | command-sender")
    assert io_thread is not None
    functions = [frame.function for frame in io_thread.frames]
    wrapper = functions.index("org.apache.kafka.clients.producer.KafkaProducer$AppendCallbacks.onCompletion")
    assert functions[wrapper + 1].endswith("ProducerBatch.completeFutureAndFireCallbacks")
    # WHEN KD308 runs THEN it names the I/O thread held in the application's callback
    (held,) = [f for f in analyze([dump]).findings if f.rule == "KD308"]
    assert held.severity is Severity.WARNING
    assert list(held.threads) == ["kafka-producer-network-thread | command-sender"]
    assert str(held.details["callback"]).startswith("com.example.ledger.CommandSender.lambda$handleRequest$")
