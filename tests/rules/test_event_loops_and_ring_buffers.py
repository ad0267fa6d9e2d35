"""KD110 and KD111 on published dumps: what each finding quotes, and what it says it cannot see."""

from __future__ import annotations

from pathlib import Path

from kafkadiag.dumps import read_dumps
from kafkadiag.rules.base import Finding, Severity
from kafkadiag.rules.engine import analyze

WILD = Path(__file__).resolve().parents[1] / "wild" / "dumps"


def findings(slug: str, code: str) -> list[Finding]:
    dumps = list(read_dumps(str(WILD / f"{slug}.txt")))
    return [finding for finding in analyze(dumps, select=[code]).findings if finding.rule == code]


def test_a_warned_loop_waiting_in_a_call_is_an_error_naming_the_call_and_the_code_that_made_it() -> None:
    # GIVEN Vert.x's warning of a loop waiting 9 s in an okhttp read made by fabric8
    (finding,) = findings("strimzi-1326-cluster-operator-kubernetes-read-on-event-loop", "KD110")
    # THEN it is an error naming the thread, the time, the call and its caller, quoting the warning
    assert finding.severity is Severity.ERROR
    assert finding.threads == ("vert.x-eventloop-thread-1",)
    assert "9184 ms (its limit is 2000 ms)" in finding.message
    call = "okhttp3.internal.http2.Http2Stream.waitForIo"
    assert f"{call} called from io.fabric8.kubernetes.client.utils.Serialization.unmarshal" in finding.message
    assert "what the call waits for, and the process's other threads, are not in the input" in finding.message
    assert finding.evidence[0].line_no == 2 and "has been blocked for 9184 ms" in finding.evidence[0].text
    assert [evidence.line_no for evidence in finding.evidence] == [2, 6, 13]


def test_a_warned_loop_running_code_is_a_warning() -> None:
    (finding,) = findings("knative-eventing-kafka-1732-dispatcher-event-loop-kubectl-prefix", "KD110")
    assert finding.severity is Severity.WARNING
    assert "it is running java.time.format.DateTimeFormatterBuilder$CompositePrinterParser.format" in (
        finding.message
    )


def test_a_dumped_loop_waiting_outside_its_selector_says_one_dump_cannot_tell_how_long() -> None:
    (finding,) = findings("strimzi-4855-reconcile-kubernetes-call-on-event-loop", "KD110")
    assert finding.severity is Severity.WARNING
    assert "the stack is cut before the loop's frames" in finding.message
    assert "One dump cannot tell how long" in finding.message


def test_loops_waiting_in_their_selector_are_not_reported_even_when_warned() -> None:
    assert findings("netty-10239-vertx-warning-loop-in-epoll-wait", "KD110") == []
    assert findings("mesh-79-vertx-event-loops-idle", "KD110") == []
    assert findings("selenium-12576-cdp-connection-deadlock", "KD110") == []


def test_a_full_ring_buffer_names_the_parked_publisher_and_says_the_consumer_is_not_in_the_input() -> None:
    (finding,) = findings("disruptor-164-log4j2-ring-buffer-full-publish", "KD111")
    assert finding.threads == ("xxx-t-116",)
    assert finding.severity is Severity.WARNING
    assert "com.lmax.disruptor.MultiProducerSequencer.next" in finding.message
    assert "No thread consuming such a buffer" in finding.message
    assert [evidence.line_no for evidence in finding.evidence] == [2, 6]


def test_a_producers_io_thread_waiting_for_room_in_log4j2s_buffer_is_called_out() -> None:
    # GIVEN LOG4J2-2893: the Kafka producer's I/O thread logs into log4j2's full buffer
    (finding,) = findings("log4j2-2893-kafka-appender-network-thread-logging", "KD111")
    assert finding.threads == ("kafka-producer-network-thread | producer-1",)
    assert "is a Kafka producer's I/O thread" in finding.message
    assert "waits for this very thread" in finding.message


def test_an_idle_disruptor_consumer_without_publishers_is_silent() -> None:
    assert findings("scheduled-task-died-silently-kafka-producer-bystander", "KD111") == []


def test_a_blockhound_error_names_the_kafka_call_and_its_caller_and_says_the_loop_is_unknown() -> None:
    (finding,) = findings("spring-cloud-stream-2192-blockhound-metadata-on-netty-thread", "KD110")
    assert finding.severity is Severity.WARNING
    assert "BlockHound stopped a blocking call (java.lang.Object#wait)" in finding.message
    assert (
        "org.apache.kafka.clients.producer.KafkaProducer.send called from "
        "org.springframework.kafka.core.DefaultKafkaProducerFactory$CloseSafeProducer.send"
    ) in finding.message
    assert "which loop it was is not in the input" in finding.message
