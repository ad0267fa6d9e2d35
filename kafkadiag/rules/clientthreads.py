"""Which threads of a dump belong to a Kafka client, and in what role.

The rules name culprits; this says what kafkadiag recognised at all, so that "No stall found"
can be read for what it is. Two consumer poll threads idle in poll() and their heartbeat threads
waiting is a healthy consumer; no Kafka client thread at all means the dump is of another process
than the one that lags (a sidecar, the launcher script's JVM) or its client threads are not in an
excerpt, and no rule about consumers or producers had anything to look at.

A thread takes the first role that matches, by its name (the client libraries name their own
threads) or by its stack (an application names its poll threads as it likes).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import NamedTuple

from kafkadiag.model import Thread, ThreadDump
from kafkadiag.rules import newconsumer, oldconsumer, stacks
from kafkadiag.rules.kd308_producer_call_blocked import SENDER_NAME, SENDER_RUN
from kafkadiag.rules.kd403_python_heartbeat_blocked import is_heartbeat as is_python_heartbeat

_CONSUMER = "org.apache.kafka.clients.consumer."
_PRODUCER = "org.apache.kafka.clients.producer."


class Role(NamedTuple):
    key: str  # stable, for JSON
    label: str  # for people: "2 consumer poll threads"
    matches: Callable[[Thread], bool]


def _named(prefix: str) -> Callable[[Thread], bool]:
    return lambda thread: thread.name.startswith(prefix)


def _in_class(prefix: str) -> Callable[[Thread], bool]:
    """A frame of a class (or package) under `prefix`: the thread is inside that client's code."""
    return lambda thread: any(frame.function.startswith(prefix) for frame in thread.frames)


def _consumer_poll(thread: Thread) -> bool:
    # KafkaConsumer.poll of the Java client (any release) and of kafka-python.
    return stacks.has_frame(thread, *newconsumer.KAFKA_CONSUMER_POLL, suffix=True)


def _stream_thread(thread: Thread) -> bool:
    return bool(_STREAM_THREAD_NAME.search(thread.name)) or stacks.has_frame(
        thread, "org.apache.kafka.streams.processor.internals.StreamThread.run"
    )


def _python_sender(thread: Thread) -> bool:
    return any(
        frame.function == "Sender.run" and (frame.file or "").endswith("kafka/producer/sender.py")
        for frame in thread.frames
    )


def _old_consumer_fetcher(thread: Thread) -> bool:
    return bool(oldconsumer.FETCHER_NAME.match(thread.name)) or stacks.has_frame(
        thread, "kafka.consumer.ConsumerFetcherThread.processPartitionData", *oldconsumer.FETCHER_RUNNABLE_RUN
    )


def _old_consumer_stream(thread: Thread) -> bool:
    return stacks.has_frame(thread, *oldconsumer.ITERATOR_FRAMES, suffix=True)


def _heartbeat(thread: Thread) -> bool:
    return newconsumer.is_heartbeat(thread) or is_python_heartbeat(thread)


def _producer_io(thread: Thread) -> bool:
    return (
        thread.name.startswith(SENDER_NAME) or stacks.has_frame(thread, SENDER_RUN) or _python_sender(thread)
    )


# "<client.id>-StreamThread-<n>" (Kafka Streams names its threads so).
_STREAM_THREAD_NAME = re.compile(r"-StreamThread-\d+$")

# In the order a thread is tried: the most specific first (a fetcher runs kafka.server code too).
ROLES = (
    Role("consumer-heartbeat", "consumer heartbeat", _heartbeat),
    Role(
        "consumer-background",
        "consumer background (new group protocol)",
        _named("consumer_background_thread"),
    ),
    Role("producer-io", "producer I/O", _producer_io),
    Role("admin-client-io", "admin client I/O", _named("kafka-admin-client-thread")),
    Role("streams", "Kafka Streams", _stream_thread),
    Role("connect-task", "Kafka Connect task", _in_class("org.apache.kafka.connect.runtime.WorkerTask")),
    Role("old-consumer-fetcher", "old consumer fetcher", _old_consumer_fetcher),
    Role("old-consumer-stream", "old consumer stream", _old_consumer_stream),
    # The connector's other threads: the leader finder, the rebalance watcher, the committer.
    Role("old-consumer-other", "old consumer connector", _in_class("kafka.consumer.")),
    Role("consumer-poll", "consumer poll", _consumer_poll),
    Role("consumer-call", "in another KafkaConsumer call", _in_class(_CONSUMER)),
    Role("producer-call", "in a KafkaProducer call", _in_class(_PRODUCER)),
    Role("broker", "Kafka broker", _in_class("kafka.server.")),
)


def client_threads(dump: ThreadDump) -> dict[str, int]:
    """Threads per role key, in ROLES order, roles without a thread left out."""
    counts = dict.fromkeys((role.key for role in ROLES), 0)
    for thread in dump.threads:
        role = next((role for role in ROLES if role.matches(thread)), None)
        if role is not None:
            counts[role.key] += 1
    return {key: count for key, count in counts.items() if count}


_LABELS = {role.key: role.label for role in ROLES}


def describe(counts: dict[str, int]) -> str:
    """ "2 consumer poll, 2 consumer heartbeat, 1 producer I/O" (threads per role)."""
    return ", ".join(f"{count} {_LABELS[key]}" for key, count in counts.items())


def kafka_client_seen(counts: dict[str, int]) -> bool:
    """Any client thread (a broker's own threads are not a client's)."""
    return any(key != "broker" for key in counts)
