"""What a consumer JVM's MBeans say, per client: the Kafka meaning of their names, and settings.

Old (ZooKeeper) consumer, Kafka 0.8.2 to 0.11 (KafkaMetricsGroup names; every gauge's attribute
is `Value`, every meter's `Count`/`OneMinuteRate`):

    kafka.consumer:type=ConsumerFetcherManager,name=MaxLag,clientId=C          max over the fetcher's lags
    kafka.consumer:type=ConsumerFetcherManager,name=MinFetchRate,clientId=C
    kafka.server:type=FetcherLagMetrics,name=ConsumerLag,clientId=C,topic=T,partition=P
                                                      hw - fetch offset at the last fetch (-1 before one)
    kafka.consumer:type=ZookeeperConsumerConnector,name=FetchQueueSize,clientId=C,topic=T,threadId=N
                                                      chunks in stream N's queue
    kafka.consumer:type=ConsumerTopicMetrics,name=MessagesPerSec|BytesPerSec,clientId=C[,topic=T]

Kafka 0.8.0/0.8.1 (Yammer 2.2 MetricName: every part quoted, the tags folded into the name):
`"kafka.consumer":type="ConsumerFetcherManager",name="C-MaxLag"`,
`"kafka.server":type="FetcherLagMetrics",name="C-host_H-port_P-T-P-ConsumerLag"`,
`"kafka.consumer":type="ZookeeperConsumerConnector",name="C-G-T-<consumerId>-N-FetchQueueSize"`,
`"kafka.consumer":type="ConsumerTopicMetrics",name="C-AllTopicsMessagesPerSec"`.

New consumer (Kafka 0.9+): `kafka.consumer:type=consumer-fetch-manager-metrics,client-id=C` with
`records-lag-max`, `records-consumed-rate`, `bytes-consumed-rate`, and per partition either
`kafka.consumer:type=consumer-fetch-manager-metrics,client-id=C,topic=T,partition=P` /
`records-lag` (Kafka 1.1+) or the client bean's `T-P.records-lag` attribute (0.10.x to 1.0).

Nothing is judged here; `kafkadiag.maxlag` compares.
"""

from __future__ import annotations

import math
import re
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from kafkadiag.collect.jmx.names081 import consumer_lag_name, stream_queue_name
from kafkadiag.consumer_metrics import (
    NAMING_081,
    NAMING_082,
    NAMING_NEW,
    NEW_CONSUMER,
    OLD_CONSUMER,
    ClientMetrics,
    FetcherPartitionLag,
    MBeanReading,
    MetricsReading,
    StreamQueue,
)
from kafkadiag.digits import decimal, is_decimal

_RECORDS_LAG_010 = re.compile(r"^(?P<topic>.+)-(?P<partition>\d+)\.records-lag$")


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return float(value) if math.isfinite(float(value)) else None
    try:
        parsed = float(str(value))
    except ValueError:
        return None
    return parsed if math.isfinite(parsed) else None


def _integer(value: Any) -> int | None:
    number = _number(value)
    return None if number is None else int(round(number))


@dataclass
class _Client:
    client_id: str
    consumer: str = OLD_CONSUMER
    naming: str = NAMING_082
    max_lag: int | None = None
    max_lag_source: str | None = None
    min_fetch_rate: float | None = None
    partitions: dict[tuple[str, int], FetcherPartitionLag] = field(default_factory=dict)
    queues: dict[tuple[str, str], StreamQueue] = field(default_factory=dict)
    all_topics: dict[str, MBeanReading] = field(default_factory=dict)  # MessagesPerSec/BytesPerSec
    per_topic: dict[str, list[MBeanReading]] = field(default_factory=lambda: defaultdict(list))
    consume_rate: float | None = None
    bytes_rate: float | None = None
    sources: list[str] = field(default_factory=list)


def _partition_lag(topic: str, partition: int, value: Any, source: str) -> FetcherPartitionLag:
    lag = _integer(value)
    # FetcherLagMetrics starts at -1 and is set on the first fetch response for the partition.
    return FetcherPartitionLag(topic, partition, None if lag is None or lag < 0 else lag, source)


def extract_clients(reading: MetricsReading) -> list[ClientMetrics]:
    """Every consumer client found in the reading, sorted by client id."""
    clients: dict[str, _Client] = {}

    def client(client_id: str, naming: str, consumer: str = OLD_CONSUMER) -> _Client:
        found = clients.get(client_id)
        if found is None:
            found = clients[client_id] = _Client(client_id, consumer, naming)
        return found

    quoted_081: list[MBeanReading] = []
    for bean in reading.beans:
        kind = bean.property("type")
        name = bean.property("name")
        client_id = bean.property("clientId")
        if kind == "consumer-fetch-manager-metrics":
            _new_consumer_bean(bean, client)
            continue
        if client_id is None:
            quoted_081.append(bean)
            continue
        if kind == "ConsumerFetcherManager" and name == "MaxLag":
            entry = client(client_id, NAMING_082)
            entry.max_lag = _integer(bean.attribute("Value"))
            entry.max_lag_source = bean.name
        elif kind == "ConsumerFetcherManager" and name == "MinFetchRate":
            client(client_id, NAMING_082).min_fetch_rate = _number(bean.attribute("Value"))
        elif kind == "FetcherLagMetrics" and name == "ConsumerLag":
            topic, partition = bean.property("topic"), bean.property("partition")
            if topic is None or partition is None or not is_decimal(partition):
                continue
            entry = client(client_id, NAMING_082)
            entry.partitions[(topic, int(partition))] = _partition_lag(
                topic, int(partition), bean.attribute("Value"), bean.name
            )
        elif kind == "ZookeeperConsumerConnector" and name == "FetchQueueSize":
            topic, thread = bean.property("topic"), bean.property("threadId")
            if topic is None or thread is None:
                continue
            size = _integer(bean.attribute("Value"))
            client(client_id, NAMING_082).queues[(topic, thread)] = StreamQueue(
                topic, thread, size, bean.name
            )
        elif kind == "ConsumerTopicMetrics" and name in ("MessagesPerSec", "BytesPerSec"):
            entry = client(client_id, NAMING_082)
            topic = bean.property("topic")
            if topic is None:
                entry.all_topics[name] = bean
            else:
                entry.per_topic[name].append(bean)
        else:
            continue
        clients[client_id].sources.append(bean.name)
    _kafka_081_beans(quoted_081, clients, client)
    old_clients = sum(1 for entry in clients.values() if entry.consumer == OLD_CONSUMER)
    return [_finish(entry, reading, old_clients) for _, entry in sorted(clients.items())]


def _longest_known_prefix(name: str, known: set[str], lengths: set[int]) -> str | None:
    """The longest client id in `known` that the name starts with, followed by a dash. Only the
    dashes at the length of a known id are looked up: many clients and many beans do not cost
    their product."""
    found = None
    at = name.find("-")
    while at >= 0:
        if at in lengths and name[:at] in known:
            found = name[:at]
        at = name.find("-", at + 1)
    return found


def _kafka_081_beans(beans: list[MBeanReading], clients: dict[str, _Client], client: Any) -> None:
    """Kafka 0.8.0/0.8.1 names: the client id is a prefix of the name, known from MaxLag first."""
    for bean in beans:
        name = bean.property("name") or ""
        if bean.property("type") == "ConsumerFetcherManager" and name.endswith("-MaxLag"):
            entry = client(name[: -len("-MaxLag")], NAMING_081)
            entry.max_lag = _integer(bean.attribute("Value"))
            entry.max_lag_source = bean.name
            entry.sources.append(bean.name)
        elif bean.property("type") == "ConsumerFetcherManager" and name.endswith("-MinFetchRate"):
            entry = client(name[: -len("-MinFetchRate")], NAMING_081)
            entry.min_fetch_rate = _number(bean.attribute("Value"))
            entry.sources.append(bean.name)
    known = set(clients)
    lengths = {len(client_id) for client_id in known}
    for bean in beans:
        name = bean.property("name") or ""
        kind = bean.property("type")
        owner = _longest_known_prefix(name, known, lengths)
        if kind == "FetcherLagMetrics" and name.endswith("-ConsumerLag"):
            if owner is not None and name.startswith(owner + "-host_"):
                lag_name = consumer_lag_name(name[len(owner) :])
                client_id = owner
            else:
                lag_name = consumer_lag_name(name)
                client_id = lag_name.client if lag_name is not None else ""
            if lag_name is None:
                continue
            entry = client(client_id, NAMING_081)
            key = (lag_name.topic, lag_name.partition)
            entry.partitions[key] = _partition_lag(key[0], key[1], bean.attribute("Value"), bean.name)
            entry.sources.append(bean.name)
        elif kind == "ZookeeperConsumerConnector" and name.endswith("-FetchQueueSize") and owner is not None:
            queue = stream_queue_name(name[len(owner) + 1 : -len("-FetchQueueSize")])
            if queue is None:
                continue
            entry = client(owner, NAMING_081)
            consumer_id = f"{queue.group}_{queue.ident}"
            entry.queues[(queue.topic, queue.thread)] = StreamQueue(
                queue.topic, queue.thread, _integer(bean.attribute("Value")), bean.name, consumer_id
            )
            entry.sources.append(bean.name)
        elif kind == "ConsumerTopicMetrics" and owner is not None:
            for metric in ("MessagesPerSec", "BytesPerSec"):
                if name == f"{owner}-AllTopics{metric}":
                    entry = client(owner, NAMING_081)
                    entry.all_topics[metric] = bean
                    entry.sources.append(bean.name)


def _new_consumer_bean(bean: MBeanReading, client: Any) -> None:
    client_id = bean.property("client-id")
    if client_id is None:
        return
    entry = client(client_id, NAMING_NEW, NEW_CONSUMER)
    entry.consumer, entry.naming = NEW_CONSUMER, NAMING_NEW
    topic, partition = bean.property("topic"), bean.property("partition")
    if topic is not None and partition is not None and is_decimal(partition):
        value = bean.attribute("records-lag")
        if value is not None:
            entry.partitions[(topic, int(partition))] = _partition_lag(
                topic, int(partition), value, bean.name
            )
            entry.sources.append(bean.name)
        return
    if topic is not None:
        return
    used = False
    for attribute, value in bean.attributes:
        match = _RECORDS_LAG_010.match(attribute)
        if match is not None:
            key = (match["topic"], int(match["partition"]))
            entry.partitions.setdefault(
                key, _partition_lag(key[0], key[1], value, f"{bean.name} attribute {attribute}")
            )
            used = True
    max_lag = _number(bean.attribute("records-lag-max"))
    if max_lag is not None:
        # -Infinity/NaN before the first fetch arrive as None.
        entry.max_lag = int(max_lag) if max_lag >= 0 else None
        entry.max_lag_source = f"{bean.name} attribute records-lag-max"
        used = True
    rate = _number(bean.attribute("records-consumed-rate"))
    if rate is not None:
        entry.consume_rate = rate
    byte_rate = _number(bean.attribute("bytes-consumed-rate"))
    if byte_rate is not None:
        entry.bytes_rate = byte_rate
    if used:
        entry.sources.append(bean.name)


def _finish(entry: _Client, reading: MetricsReading, old_clients: int) -> ClientMetrics:
    threads, attributed = _fetcher_threads(entry, reading, old_clients)
    records = bytes_ = None
    rate = entry.consume_rate
    messages = entry.all_topics.get("MessagesPerSec")
    if messages is not None:
        records = _integer(messages.attribute("Count"))
        rate = _meter_rate(messages)
    elif entry.per_topic.get("MessagesPerSec"):
        counts = [_integer(bean.attribute("Count")) for bean in entry.per_topic["MessagesPerSec"]]
        records = sum(count for count in counts if count is not None)
        rates = [_meter_rate(bean) for bean in entry.per_topic["MessagesPerSec"]]
        rate = (
            sum(value for value in rates if value is not None) if any(v is not None for v in rates) else None
        )
    byte_meter = entry.all_topics.get("BytesPerSec")
    if byte_meter is not None:
        bytes_ = _integer(byte_meter.attribute("Count"))
    elif entry.per_topic.get("BytesPerSec"):
        counts = [_integer(bean.attribute("Count")) for bean in entry.per_topic["BytesPerSec"]]
        bytes_ = sum(count for count in counts if count is not None)
    for meter in [*entry.all_topics.values(), *(b for beans in entry.per_topic.values() for b in beans)]:
        entry.sources.append(meter.name)
    return ClientMetrics(
        client_id=entry.client_id,
        consumer=entry.consumer,
        naming=entry.naming,
        max_lag=entry.max_lag,
        max_lag_source=entry.max_lag_source,
        min_fetch_rate=entry.min_fetch_rate,
        partitions=tuple(entry.partitions[key] for key in sorted(entry.partitions)),
        queues=tuple(
            entry.queues[key] for key in sorted(entry.queues, key=lambda k: (k[0], decimal(k[1]) or 0))
        ),
        records_consumed=records,
        bytes_fetched=bytes_,
        consume_rate=rate,
        bytes_rate=entry.bytes_rate,
        fetcher_threads=threads,
        fetcher_threads_attributed=attributed,
        sources=tuple(dict.fromkeys(entry.sources)),
    )


def _meter_rate(meter: MBeanReading) -> float | None:
    """Records/s: the larger of the one-minute and the mean rate. Yammer's one-minute rate reads 0
    until its first 5 s tick and lags bursts; taking the larger keeps the bound on uncommitted
    work an upper bound rather than an underestimate."""
    rates = [_number(meter.attribute(name)) for name in ("OneMinuteRate", "MeanRate")]
    known = [rate for rate in rates if rate is not None]
    return max(known) if known else None


def _fetcher_threads(
    entry: _Client, reading: MetricsReading, old_clients: int
) -> tuple[tuple[tuple[str, str], ...], bool]:
    """The old consumer's fetcher threads of this client (ConsumerFetcherThread-<consumerId>-F-B)
    and whether they could be told apart from other clients' threads: the only old client owns
    them all; otherwise a consumerId starts with "<group>_", and client.id defaults to group.id."""
    if entry.consumer != OLD_CONSUMER:
        return (), False
    threads = [(name, state) for name, state in reading.threads if name.startswith("ConsumerFetcherThread-")]
    if old_clients == 1:
        return tuple(threads), True
    mine = [thread for thread in threads if thread[0].startswith(f"ConsumerFetcherThread-{entry.client_id}_")]
    return tuple(mine), bool(mine) or not threads
