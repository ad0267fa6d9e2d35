"""An event loop's blocked-thread warning, in each form published reports show it, read as a dump of
the one thread it names."""

from __future__ import annotations

from pathlib import Path

from kafkadiag.dumps import read_dumps
from kafkadiag.dumps.blockedwarnings import blocked_for, blocked_warning, blockhound_call, without_jar
from kafkadiag.dumps.detect import detect_format
from kafkadiag.model import DumpFormat, ThreadState

# Lines as Vert.x and the frameworks on it print them (from the reports in tests/wild/dumps and
# netty/netty#10239, strimzi/strimzi-kafka-operator#12483).
LOG4J2 = (
    "2021-12-16 00:16:53,79105 WARN  [vertx-blocked-thread-checker] BlockedThreadChecker: - Thread "
    "Thread[vert.x-eventloop-thread-0,5,main] has been blocked for 5542 ms, time limit is 2000 ms"
)
JUL = (
    "WARNING: Thread Thread[vert.x-eventloop-thread-1,5,main] has been blocked for 9184 ms, "
    "time limit is 2000"
)
TWICE = (
    "WARNING: Thread Thread[vert.x-eventloop-thread-0,5,main]=Thread[vert.x-eventloop-thread-0,5,main] "
    "has been blocked for 13149 ms, time limit is 2000 ms"
)
QUARKUS = (
    "2026-03-01 00:15:53,216 WARN  [io.ver.cor.imp.BlockedThreadChecker] (vertx-blocked-thread-checker) "
    "Thread Thread[vert.x-eventloop-thread-8,5,main] has been blocked for 3240 ms, time limit is 2000 ms: "
    "io.vertx.core.VertxException: Thread blocked"
)


def read(tmp_path: Path, text: str) -> list:
    path = tmp_path / "log.txt"
    path.write_text(text)
    return list(read_dumps(str(path)))


def test_each_form_of_the_warning_line_names_its_thread_and_duration() -> None:
    # GIVEN the warning as log4j2, java.util.logging, Vert.x 3.9/4.0 and Quarkus print it
    # WHEN each is read THEN the thread, the time blocked and the limit come out
    assert blocked_warning(LOG4J2)[:3] == ("vert.x-eventloop-thread-0", 5542, 2000)
    assert blocked_warning(JUL)[:3] == ("vert.x-eventloop-thread-1", 9184, 2000)
    assert blocked_warning(TWICE)[:3] == ("vert.x-eventloop-thread-0", 13149, 2000)
    quarkus = blocked_warning(QUARKUS)
    assert (
        quarkus is not None and quarkus.name == "vert.x-eventloop-thread-8" and quarkus.stack_follows_inline
    )
    assert blocked_for(LOG4J2[LOG4J2.index("Thread Thread[") :]) == (5542, 2000)


def test_a_line_that_only_mentions_a_thread_is_no_warning() -> None:
    assert blocked_warning("INFO Thread Thread[main,5,main] started") is None
    assert blocked_warning("Thread Thread[x,5,main] has been blocked for soon, time limit is 2000") is None
    assert (
        blocked_warning("Thread Thread[no priority] has been blocked for 10 ms, time limit is 5 ms") is None
    )


def test_log4j2s_jar_after_a_frame_is_dropped_and_nothing_else() -> None:
    assert without_jar("at jdk.internal.misc.Unsafe.park(Native Method) ~[?:?]") == (
        "at jdk.internal.misc.Unsafe.park(Native Method)"
    )
    assert without_jar("at a.B.c(B.java:1) [netty-common-4.1.jar:4.1.100]") == "at a.B.c(B.java:1)"
    assert without_jar("at a.B.c(B.java:1)") == "at a.B.c(B.java:1)"
    assert without_jar("at a.B[]") == "at a.B[]"  # no space before the bracket: not a jar


def test_only_the_warning_with_a_stack_becomes_a_thread(tmp_path: Path) -> None:
    # GIVEN four warnings of one thread, the last with the stack (from warningExceptionTime on)
    text = "\n".join(
        [
            LOG4J2.replace("5542", "2542"),
            LOG4J2.replace("5542", "3542"),
            LOG4J2,
            "io.vertx.core.VertxException: Thread blocked",
            "\tat jdk.internal.misc.Unsafe.park(Native Method) ~[?:?]",
            "\tat java.util.concurrent.locks.LockSupport.park(LockSupport.java:194) ~[?:?]",
            "\tat java.util.concurrent.CompletableFuture.get(CompletableFuture.java:1998) ~[?:?]",
            "\tat io.strimzi.operator.topic.Session.lambda$start$7(Session.java:204) ~[?:?]",
            "2021-12-16 00:16:54,100 INFO  Main - next log line",
        ]
    )
    assert detect_format(text.splitlines()) is DumpFormat.STACK_TRACES
    # WHEN it is read
    dumps = read(tmp_path, text)
    # THEN one dump holds the one thread, its frames without the jars, parked
    assert len(dumps) == 1 and len(dumps[0].threads) == 1
    thread = dumps[0].threads[0]
    assert thread.name == "vert.x-eventloop-thread-0"
    assert [frame.function for frame in thread.frames][
        -1
    ] == "io.strimzi.operator.topic.Session.lambda$start$7"
    assert thread.state is ThreadState.WAITING
    assert "has been blocked for 5542 ms" in thread.header
    assert thread.frame_line_no(0) == 5  # the exception's line is not a frame
    assert dumps[0].producer == "Vert.x BlockedThreadChecker"


def test_a_log_viewers_columns_are_stripped_from_the_frames(tmp_path: Path) -> None:
    # GIVEN kubectl's pod and container names in front of every line (knative eventing-kafka-broker#1732)
    prefix = "kafka-broker-dispatcher-65c76bf5f-pc6s8 kafka-broker-dispatcher "
    lines = [
        "Jan 12, 2022 1:55:32 PM io.vertx.core.impl.BlockedThreadChecker",
        "WARNING: " + TWICE,
        "io.vertx.core.VertxException: Thread blocked",
        "\tat java.base@17.0.1/java.lang.Object.wait(Native Method)",
        "\tat app//io.vertx.kafka.client.consumer.impl.KafkaReadStreamImpl.run(KafkaReadStreamImpl.java:237)",
    ]
    # WHEN read with the prefix, and with a console's '  | ' gutter instead
    for columns in (prefix, "  | "):
        dumps = read(tmp_path, "\n".join(columns + line for line in lines))
        # THEN both frames are read, the gutter gone
        (thread,) = dumps[0].threads
        assert [frame.function for frame in thread.frames] == [
            "java.lang.Object.wait",
            "io.vertx.kafka.client.consumer.impl.KafkaReadStreamImpl.run",
        ], columns


def test_the_same_thread_warned_again_starts_the_next_dump_of_a_series(tmp_path: Path) -> None:
    # GIVEN two warnings of one thread, each with its stack, a blank line between
    stack = [
        "io.vertx.core.VertxException: Thread blocked",
        "\tat app//io.netty.channel.epoll.Native.epollWait0(Native Method)",
        "\tat app//io.netty.channel.epoll.EpollEventLoop.run(EpollEventLoop.java:351)",
    ]
    first = "impl.BlockedThreadChecker " + JUL.removeprefix("WARNING: ")
    text = "\n".join([first, *stack, "", first.replace("9184", "21448"), *stack])
    # WHEN read THEN each warning is a dump of one thread, in order
    dumps = read(tmp_path, text)
    assert [len(dump.threads) for dump in dumps] == [1, 1]
    assert "9184 ms" in dumps[0].threads[0].header and "21448 ms" in dumps[1].threads[0].header


def test_a_blockhound_error_is_read_as_the_stack_of_a_thread_it_does_not_name(tmp_path: Path) -> None:
    # GIVEN BlockHound's error as a reactor-kafka user pasted it (reactor/reactor-kafka#71)
    text = "\n".join(
        [
            "reactor.blockhound.BlockingOperationError: Blocking call! java.lang.Object#wait",
            "\tat java.base/java.lang.Object.wait(Object.java)",
            "\tat org.apache.kafka.common.utils.SystemTime.waitObject(SystemTime.java:55)",
            "\tat org.apache.kafka.clients.producer.KafkaProducer.send(KafkaProducer.java:862)",
        ]
    )
    assert blockhound_call(text.splitlines()[0]) == "java.lang.Object#wait"
    # WHEN it is read THEN one thread holds the frames, named for what is known of it
    (dump,) = read(tmp_path, text)
    (thread,) = dump.threads
    assert thread.name == "(a non-blocking thread BlockHound does not name)"
    assert thread.frames[-1].function == "org.apache.kafka.clients.producer.KafkaProducer.send"
    assert dump.producer == "BlockHound"
    assert any("names neither the thread nor a state" in note for note in dump.notes)
