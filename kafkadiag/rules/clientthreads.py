"""Which threads of a dump belong to a Kafka client, and in what role.

The rules name culprits; this says what kafkadiag recognised at all, so that "No stall found"
can be read for what it is. Two consumer poll threads idle in poll() and their heartbeat threads
waiting is a healthy consumer; no Kafka client thread at all means the dump is of another process
than the one that lags (a sidecar, the launcher script's JVM) or its client threads are not in an
excerpt, and no rule about consumers or producers had anything to look at.

A thread's role comes from its name when the client library named it, else from its stack (an
application names its poll threads as it likes). Stacks are judged once per distinct stack: a
150,000-thread dump holds a few hundred.
"""

from __future__ import annotations

import re

from kafkadiag.model import Frame, ThreadDump
from kafkadiag.rules import newconsumer, oldconsumer, stackindex, stacks
from kafkadiag.rules.kd308_producer_call_blocked import SENDER_NAME, SENDER_RUN
from kafkadiag.rules.kd403_python_heartbeat_blocked import HEARTBEAT_CODE

# Role keys (stable, for JSON) and labels (for people: "2 consumer poll"), in the order shown.
LABELS = {
    "consumer-heartbeat": "consumer heartbeat",
    "python-client-io": "kafka-python client I/O (its heartbeats too)",
    "consumer-background": "consumer background (new group protocol)",
    "producer-io": "producer I/O",
    "admin-client-io": "admin client I/O",
    "streams": "Kafka Streams",
    "connect-task": "Kafka Connect task",
    "old-consumer-fetcher": "old consumer fetcher",
    "old-consumer-stream": "old consumer stream",
    "old-consumer-other": "old consumer connector",
    "consumer-poll": "consumer poll",
    "consumer-call": "in another KafkaConsumer call",
    "producer-call": "in a KafkaProducer call",
    "librdkafka-call": "in a confluent-kafka (librdkafka) call",
    "broker": "Kafka broker",
}

# Names the client libraries give their own threads, one alternative per role (the group's name
# is the role key): Java's heartbeat thread "kafka-coordinator-heartbeat-thread | <group>" and
# kafka-python 2.x's "<group>-heartbeat", kafka-python 3.0's I/O thread "kafka-io-<client_id>" (the group
# protocol and heartbeats run there), the producer's "kafka-producer-network-thread | <client.id>",
# Kafka Streams' "<client.id>-StreamThread-<n>", Kafka Connect's task threads ("task-thread-<connector>-<n>",
# "WorkerSinkTask-<connector>-<n>" and "WorkerSourceTask-..." in older releases), the old consumer's fetchers.
_NAMED = re.compile(
    r"^(?:(?P<consumer_heartbeat>kafka-coordinator-heartbeat-thread(?: \| .+)?$|.+-heartbeat$)"
    r"|(?P<consumer_background>consumer_background_thread)"
    r"|(?P<python_client_io>kafka-io-.+)"
    rf"|(?P<producer_io>{re.escape(SENDER_NAME)})"
    rf"|(?P<admin_client_io>{re.escape(newconsumer.ADMIN_IO_THREAD_NAME)})"
    r"|(?P<streams>.+-StreamThread-\d+$)"
    r"|(?P<connect_task>(?:task-thread-|WorkerSinkTask-|WorkerSourceTask-).+-\d+$)"
    r"|(?P<old_consumer_fetcher>ConsumerFetcherThread-.+-\d+--?\d+$))"
)


# Words every name _NAMED accepts holds one of.
_NAME_WORDS = re.compile(
    "heartbeat|kafka-|consumer_background|StreamThread-|task-thread-|WorkerS|ConsumerFetcherThread-"
)


def _has(text: str, *functions: str, suffix: bool = False) -> bool:
    """stacks.has_frame on a joined stack: one of `functions` is a function of it (with `suffix`,
    a function ends with one of them)."""
    return any(map(text.__contains__, stacks.needles(functions, suffix)))


def _in_package(text: str, prefix: str) -> bool:
    return f"\n{prefix}" in text


def _stack_role(frames: tuple[Frame, ...]) -> str | None:
    """The role a stack shows, the most specific first (a fetcher runs kafka.server code too)."""
    text = stacks.joined_functions(frames)
    if "afka" not in text and "Heartbeat" not in text and "Sender" not in text:
        return None  # nothing of a Kafka client's (org.apache.kafka, kafka., KafkaConsumer)
    if _has(text, *newconsumer.HEARTBEAT_RUN, *HEARTBEAT_CODE, suffix=True):
        return "consumer-heartbeat"
    if _has(text, "NetworkSelector.run_forever"):  # kafka-python 3.0's I/O thread (bare names: by name)
        return "python-client-io"
    if _has(text, SENDER_RUN) or _python_sender(frames):
        return "producer-io"
    if _has(text, "org.apache.kafka.streams.processor.internals.StreamThread.run"):
        return "streams"
    if _in_package(text, "org.apache.kafka.connect.runtime.WorkerTask"):
        return "connect-task"
    if _has(
        text, "kafka.consumer.ConsumerFetcherThread.processPartitionData", *oldconsumer.FETCHER_RUNNABLE_RUN
    ):
        return "old-consumer-fetcher"
    if _has(text, *oldconsumer.ITERATOR_FRAMES, suffix=True):
        return "old-consumer-stream"
    if _in_package(text, "kafka.consumer."):
        return "old-consumer-other"  # the connector's leader finder, rebalance watcher, committer
    if _has(text, *newconsumer.KAFKA_CONSUMER_POLL, suffix=True):
        return "consumer-poll"  # the Java client's KafkaConsumer.poll, and kafka-python's
    if _in_package(text, "org.apache.kafka.clients.consumer."):
        return "consumer-call"
    if _in_package(text, "org.apache.kafka.clients.producer."):
        return "producer-call"
    # confluent-kafka's C extension and librdkafka, seen only in py-spy --native's frames
    if _has(text, "Consumer_poll", "Consumer_consume"):
        return "consumer-poll"
    if _in_package(text, "rd_kafka_") or _in_package(text, "Producer_") or _in_package(text, "Consumer_"):
        return "librdkafka-call"
    if _in_package(text, "kafka.server."):
        return "broker"
    return None


def _python_sender(frames: tuple[Frame, ...]) -> bool:
    """kafka-python's producer I/O thread."""
    return any(
        frame.function == "Sender.run" and (frame.file or "").endswith("kafka/producer/sender.py")
        for frame in frames
    )


def client_threads(dump: ThreadDump) -> dict[str, int]:
    """Threads per role key, in LABELS order, roles without a thread left out."""
    by_stack = dict(stackindex.stack_answers(dump, "client-thread-role", _stack_role))
    counts = dict.fromkeys(LABELS, 0)
    for position, thread in enumerate(dump.threads):
        # Most threads carry none of these words: the pattern is tried only on those that do.
        named = _NAMED.match(thread.name) if _NAME_WORDS.search(thread.name) else None
        role = named.lastgroup.replace("_", "-") if named and named.lastgroup else by_stack.get(position)
        if role is not None:
            counts[role] += 1
    return {key: count for key, count in counts.items() if count}


def describe(counts: dict[str, int]) -> str:
    """ "2 consumer poll, 2 consumer heartbeat, 1 producer I/O" (threads per role)."""
    return ", ".join(f"{count} {LABELS[key]}" for key, count in counts.items())


def kafka_client_seen(counts: dict[str, int]) -> bool:
    """Any client thread (a broker's own threads are not a client's)."""
    return any(key != "broker" for key in counts)
