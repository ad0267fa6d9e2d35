"""Names read from a metrics source or a --command-config are split in linear time, as the
patterns they replaced read them.

Kafka 0.8.0/0.8.1 metric names were split by patterns with several greedy parts and a
backreference: a queue name of 4,000 dashes took 0.55 s, growing with its cube; a JAAS entry of
20 KB took 2.7 s, growing with its square. The patterns are kept here as the reference the
splitters must agree with, on names small enough for them.
"""

from __future__ import annotations

import gc
import random
import re
import time
from collections.abc import Callable

import pytest

from kafkadiag.collect.config import jaas_options
from kafkadiag.collect.jmx.kafka import extract_clients
from kafkadiag.collect.jmx.names081 import consumer_lag_name, stream_queue_name
from kafkadiag.consumer_metrics import MBeanReading, MetricsReading

from ..dumps.adversarial import RATIO_LIMIT, measure

REFERENCE_LAG = re.compile(
    r"^(?P<client>.*)-host_(?P<host>.*)-port_(?P<port>\d+)-(?P<topic>.+)-(?P<partition>\d+)-ConsumerLag$"
)
REFERENCE_QUEUE = re.compile(r"^(?P<group>.+?)-(?P<topic>.+)-(?P=group)_(?P<ident>.+)-(?P<thread>\d+)$")
PIECES = ("a", "-", "_", "1", "g", "host_", "port_", "-host_", "-port_", "-g_", "-1", "g-")


def _noise(rng: random.Random) -> str:
    return "".join(rng.choice(PIECES) for _ in range(rng.randint(0, 4)))


def _lag_names(rng: random.Random, count: int) -> list[str]:
    """Names of the 0.8.1 lag form built from noisy parts, and names that only nearly are."""
    names = []
    for _ in range(count):
        port, partition = str(rng.randint(0, 99)), str(rng.randint(0, 9))
        parts = [_noise(rng) or "c", _noise(rng), port, _noise(rng) or "t", partition]
        names.append("{}-host_{}-port_{}-{}-{}-ConsumerLag".format(*parts))
        names.append(_noise(rng) + _noise(rng) + "-ConsumerLag")
    return names


def _queue_names(rng: random.Random, count: int) -> list[str]:
    names = []
    for _ in range(count):
        group = rng.choice(("g", "g-1", "a_g", "g-g"))
        topic, ident = _noise(rng) or "t", _noise(rng) or "h"
        names.append(f"{group}-{topic}-{group}_{ident}-{rng.randint(0, 9)}")
        names.append(_noise(rng) + _noise(rng) + _noise(rng))
    return names


def test_the_081_names_split_as_the_reference_patterns_split_them() -> None:
    rng = random.Random(20261202)
    matched = [0, 0]
    for name in _lag_names(rng, 20_000):
        reference = REFERENCE_LAG.match(name)
        split = consumer_lag_name(name)
        expected = reference and (
            *reference.group("client", "host", "port", "topic"),
            int(reference["partition"]),
        )
        assert (split and (split.client, split.host, split.port, split.topic, split.partition)) == expected, (
            name
        )
        matched[0] += reference is not None
    for name in _queue_names(rng, 20_000):
        reference = REFERENCE_QUEUE.match(name)
        queue = stream_queue_name(name)
        expected = reference and reference.group("group", "topic", "ident", "thread")
        assert (queue and (queue.group, queue.topic, queue.ident, queue.thread)) == expected, name
        matched[1] += reference is not None
    # both kinds were met, matching and not
    assert all(10_000 < count < 40_000 for count in matched), matched


def test_a_real_081_queue_name_gives_its_group_topic_consumer_and_thread() -> None:
    # as Kafka 0.8.1's ZookeeperConsumerConnector names a stream's FetchQueueSize gauge
    name = "orders-payments-orders_host1-1400000000000-3f2a1b0c-0"
    assert stream_queue_name(name) == stream_queue_name(name)  # a value, not an identity
    queue = stream_queue_name(name)
    assert queue is not None
    assert (queue.group, queue.topic, queue.ident, queue.thread) == (
        "orders", "payments", "host1-1400000000000-3f2a1b0c", "0"
    )  # fmt: skip
    lag = consumer_lag_name("orders-host_broker-1.example-port_9092-payments-3-ConsumerLag")
    assert lag is not None
    assert (lag.client, lag.host, lag.port, lag.topic, lag.partition) == (
        "orders", "broker-1.example", "9092", "payments", 3
    )  # fmt: skip


def _timed(work: Callable[[], object]) -> float:
    """CPU time of the work, without the collector's passes (their cost grows with every object
    alive in the process, not with the work measured)."""
    gc.collect()
    gc.disable()
    try:
        started = time.process_time()
        work()
        return time.process_time() - started
    finally:
        gc.enable()


SHAPES = {
    "queue, dashes": lambda size: stream_queue_name("a-" * (size // 2) + "x-1"),
    "queue, repeated group": lambda size: stream_queue_name("g-" + "t-g_" * (size // 4) + "-x"),
    "lag, hosts": lambda size: consumer_lag_name("a-host_" * (size // 7) + "x-ConsumerLag"),
    "lag, ports": lambda size: consumer_lag_name("c-host_h" + "-port_1" * (size // 7) + "-ConsumerLag"),
    "jaas, one word": lambda size: jaas_options("a" * size),
    "jaas, unclosed values": lambda size: jaas_options('k="\\"' * (size // 5)),
    "jaas, spaced names": lambda size: jaas_options("k    " * (size // 5)),
}


@pytest.mark.parametrize("shape", sorted(SHAPES))
def test_each_shape_is_read_in_linear_time(shape: str) -> None:
    # GIVEN 64 KB (1x) and 256 KB (4x) of a shape that made a pattern rescan
    split = SHAPES[shape]
    # WHEN split THEN 4x takes about 4 times as long as 1x
    scaling = measure(lambda factor: _timed(lambda: split(64 * 1024 * factor)))
    assert scaling.ratio <= RATIO_LIMIT, (
        f"1x {scaling.small * 1000:.1f} ms, 4x {scaling.large * 1000:.1f} ms ({scaling.ratio:.1f} times)"
    )


def test_many_clients_and_many_beans_are_matched_without_their_product() -> None:
    # GIVEN 0.8.1 beans: n clients' MaxLag, and a queue gauge of each
    def bean(kind: str, name: str, value: int) -> MBeanReading:
        properties = (("type", kind), ("name", name))
        return MBeanReading(
            f'kafka.consumer:type={kind},name="{name}"', "kafka.consumer", properties, (("Value", value),)
        )

    def reading(count: int) -> MetricsReading:
        beans = []
        for index in range(count):
            client = f"client-{index}"
            beans.append(bean("ConsumerFetcherManager", f"{client}-MaxLag", 0))
            beans.append(bean("ZookeeperConsumerConnector", f"{client}-g-t-g_h-1-{index}-FetchQueueSize", 1))
        return MetricsReading("jmx", "test", 0, 0.0, tuple(beans))

    readings = {factor: reading(2_000 * factor) for factor in (1, 4)}
    # WHEN the clients are extracted THEN each is found with its queue, in linear time
    clients = extract_clients(readings[1])
    assert len(clients) == 2_000 and all(len(client.queues) == 1 for client in clients)
    scaling = measure(lambda factor: _timed(lambda: extract_clients(readings[factor])))
    assert scaling.ratio <= RATIO_LIMIT, (scaling.small, scaling.large)


def test_jaas_options_as_kafka_writes_them() -> None:
    entry = (
        "org.apache.kafka.common.security.scram.ScramLoginModule required "
        'username="reader" password="p\\"w=d";'
    )
    assert jaas_options(entry) == {"username": "reader", "password": 'p"w=d'}
    # a value never closed is no option
    assert jaas_options('Module required username="reader" password="x;') == {"username": "reader"}
