"""Frame texts as HotSpot and StackTraceElement print them (from the captured fixtures)."""

from __future__ import annotations

import pytest

from kafkadiag.dumps.javaframes import parse_java_frame


@pytest.mark.parametrize(
    ("text", "function", "file", "line", "native", "module"),
    [
        ("java.lang.Thread.sleep(Native Method)", "java.lang.Thread.sleep", None, None, True, None),
        (
            "java.lang.Thread.run(java.base@17.0.15/Thread.java:840)",
            "java.lang.Thread.run",
            "Thread.java",
            840,
            False,
            "java.base@17.0.15",
        ),
        # A hidden (lambda) class: its slash belongs to the class name, not to a module.
        (
            "com.example.DeadlockApp$$Lambda$1/0x00007f76a8000c18.run(Unknown Source)",
            "com.example.DeadlockApp$$Lambda$1/0x00007f76a8000c18.run",
            None,
            None,
            False,
            None,
        ),
        (
            "java.lang.VirtualThread$$Lambda/0x00003800010ff800.run(java.base@25/Unknown Source)",
            "java.lang.VirtualThread$$Lambda/0x00003800010ff800.run",
            None,
            None,
            False,
            "java.base@25",
        ),
        # StackTraceElement.toString(): class loader and module before the class.
        ("app//com.example.Main.main(Main.java:49)", "com.example.Main.main", "Main.java", 49, False, "app"),
        (
            "java.management@17.0.15/sun.management.ThreadImpl.dumpThreads0(Native Method)",
            "sun.management.ThreadImpl.dumpThreads0",
            None,
            None,
            True,
            "java.management@17.0.15",
        ),
    ],
)
def test_frame_forms(text, function, file, line, native, module) -> None:
    frame = parse_java_frame(text)
    assert (frame.function, frame.file, frame.line, frame.native, frame.module) == (
        function,
        file,
        line,
        native,
        module,
    )
    assert frame.text == text


@pytest.mark.parametrize(
    ("text", "function"),
    [
        (
            "org.apache.skywalking.apm.dependencies.org.apache.kafka.clients.producer.internals."
            "BufferPool.allocate(BufferPool.java:143)",
            "org.apache.kafka.clients.producer.internals.BufferPool.allocate",
        ),
        (
            "org.apache.flink.kafka.shaded.org.apache.kafka.clients.consumer.KafkaConsumer.poll(KafkaConsumer.java:1)",
            "org.apache.kafka.clients.consumer.KafkaConsumer.poll",
        ),
        # Kafka's own classes, and a name that merely contains the words, stay as they are.
        (
            "org.apache.kafka.common.network.Selector.poll(Selector.java:1)",
            "org.apache.kafka.common.network.Selector.poll",
        ),
        ("com.example.orgapache.kafka.Reader.run(Reader.java:1)", "com.example.orgapache.kafka.Reader.run"),
    ],
)
def test_a_relocated_kafka_client_is_named_as_kafka_names_it(text: str, function: str) -> None:
    frame = parse_java_frame(text)
    assert frame.function == function
    assert frame.text == text  # quoted as the dump printed it
