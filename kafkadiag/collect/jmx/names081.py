"""Kafka 0.8.0/0.8.1 metric names, split into their parts in linear time.

Those releases put every part of a metric into its `name`, joined by dashes that the parts
themselves may contain:

    <client>-host_<host>-port_<port>-<topic>-<partition>-ConsumerLag       (FetcherLagMetrics)
    <group>-<topic>-<group>_<consumer ident>-<thread>                      (a stream's queue)

Read the way a backtracking pattern would read them (the client and the topic as long as the rest
allows, the group as short as it allows), but by locating the separators from the right: the
names come from a JMX server or a recorded file, and a pattern over a name of many dashes took
cubic time.
"""

from __future__ import annotations

from dataclasses import dataclass

from kafkadiag.digits import all_ascii_digits

CONSUMER_LAG_SUFFIX = "-ConsumerLag"
_HOST = "-host_"
_PORT = "-port_"


@dataclass(frozen=True)
class ConsumerLagName:
    client: str
    host: str
    port: str
    topic: str
    partition: int


@dataclass(frozen=True)
class StreamQueueName:
    group: str
    topic: str
    ident: str  # the consumer id after "<group>_"
    thread: str


def consumer_lag_name(name: str) -> ConsumerLagName | None:
    """`<client>-host_<host>-port_<port>-<topic>-<partition>-ConsumerLag`, or None."""
    if not name.endswith(CONSUMER_LAG_SUFFIX):
        return None
    body = name[: -len(CONSUMER_LAG_SUFFIX)]
    before_partition, dash, partition = body.rpartition("-")
    if not dash or not all_ascii_digits(partition):
        return None
    port_at = _last_port(before_partition)
    if port_at is None:
        return None
    host_at = before_partition.rfind(_HOST, 0, port_at)
    if host_at < 0:
        return None
    port_end = before_partition.index("-", port_at + len(_PORT))
    return ConsumerLagName(
        client=before_partition[:host_at],
        host=before_partition[host_at + len(_HOST) : port_at],
        port=before_partition[port_at + len(_PORT) : port_end],
        topic=before_partition[port_end + 1 :],
        partition=int(partition),
    )


def _last_port(text: str) -> int | None:
    """Where the last `-port_<digits>-<topic>` starts, with a topic of at least one character."""
    end = len(text)
    while True:
        at = text.rfind(_PORT, 0, end)
        if at < 0:
            return None
        digits_end = at + len(_PORT)
        while digits_end < len(text) and "0" <= text[digits_end] <= "9":
            digits_end += 1
        has_digits = digits_end > at + len(_PORT)
        if has_digits and text[digits_end : digits_end + 1] == "-" and digits_end + 1 < len(text):
            return at
        end = at  # "-port_" cannot overlap itself: the one before ends where this one starts


def stream_queue_name(name: str, max_group_dashes: int = 64) -> StreamQueueName | None:
    """`<group>-<topic>-<group>_<ident>-<thread>`, the group as short as it can be, or None.

    Each candidate group ends at a dash of the name; the first `max_group_dashes` are tried (a
    group id with more dashes than that is not one a consumer was given)."""
    rest, dash, thread = name.rpartition("-")
    if not dash or not all_ascii_digits(thread):
        return None
    at = rest.find("-", 1)  # a group of one character at least
    for _ in range(max_group_dashes):
        if at < 0:
            return None
        group = rest[:at]
        marker = f"-{group}_"
        # the last repeat of the group that leaves a topic and an ident of a character each
        repeat = rest.rfind(marker, at + 2, len(rest) - 1)
        if repeat >= 0:
            return StreamQueueName(group, rest[at + 1 : repeat], rest[repeat + len(marker) :], thread)
        at = rest.find("-", at + 1)
    return None
