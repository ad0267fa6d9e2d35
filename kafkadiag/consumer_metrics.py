"""What a consumer's metrics and settings say, as plain data shared by the layers: the MBeans
read from one source (kafkadiag.collect.jmx reads them), each consumer client they describe
(kafkadiag.collect.jmx.kafka extracts it), and the consumer's settings with where each came from.
`kafkadiag.maxlag` compares them; nothing here does I/O or judges."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

# Where a reading came from (MetricsReading.source_kind).
SOURCE_PID = "pid"
SOURCE_JMX = "jmx"
SOURCE_JOLOKIA = "jolokia"
SOURCE_PROMETHEUS = "prometheus"

OLD_CONSUMER = "old"
NEW_CONSUMER = "new"
NAMING_082 = "kafka-0.8.2+"
NAMING_081 = "kafka-0.8.1"
NAMING_NEW = "new-consumer"


@dataclass(frozen=True)
class MBeanReading:
    """One MBean as read: its name, key properties (in order, unquoted) and attribute values."""

    name: str
    domain: str
    properties: tuple[tuple[str, str], ...]
    attributes: tuple[tuple[str, Any], ...]
    errors: tuple[tuple[str, str], ...] = ()

    def property(self, key: str) -> str | None:
        for name, value in self.properties:
            if name == key:
                return value
        return None

    def attribute(self, name: str) -> Any:
        for key, value in self.attributes:
            if key == name:
                return value
        return None


@dataclass(frozen=True)
class MetricsReading:
    """Everything read from one metrics source, with where and when it came from."""

    source_kind: str  # pid | jmx | jolokia | prometheus
    source: str  # "pid 4711", the JMX URL, the Jolokia or exporter URL, a file path
    read_at_ms: int
    duration_ms: float
    beans: tuple[MBeanReading, ...] = ()
    system_properties: tuple[tuple[str, str], ...] = ()
    threads: tuple[tuple[str, str], ...] = ()  # (name, state) of the fetcher threads
    vm: tuple[tuple[str, Any], ...] = ()
    # What kafkadiag did to get here (e.g. started the local management agent) and other facts.
    notes: tuple[str, ...] = ()
    # ("attach_ms", ...), ("connect_ms", ...), ("read_ms", ...), ("client_ms", ...)
    timings: tuple[tuple[str, float], ...] = field(default=())

    def timing(self, name: str) -> float | None:
        return dict(self.timings).get(name)


@dataclass(frozen=True)
class FetcherPartitionLag:
    """One partition as the consumer's fetcher sees it."""

    topic: str
    partition: int
    lag: int | None  # hw - fetch offset at the last fetch; None: never fetched (the gauge reads -1)
    source: str  # the MBean (or metric) it was read from


@dataclass(frozen=True)
class StreamQueue:
    """One stream's chunk queue (old consumer): what the fetcher put and the stream did not take."""

    topic: str
    thread_id: str  # the consumer thread number: owner "<consumerId>-<thread_id>" in ZooKeeper
    size: int | None
    source: str
    consumer_id: str | None = None  # only Kafka 0.8.1 names carry it


@dataclass(frozen=True)
class ClientMetrics:
    """One consumer client (client.id) of the JVM, as its metrics describe it."""

    client_id: str
    consumer: str  # old | new
    naming: str  # kafka-0.8.2+ | kafka-0.8.1 | new-consumer
    max_lag: int | None = None
    max_lag_source: str | None = None
    min_fetch_rate: float | None = None
    partitions: tuple[FetcherPartitionLag, ...] = ()
    queues: tuple[StreamQueue, ...] = ()
    # Old consumer: MessagesPerSec counts records handed to the application, BytesPerSec bytes
    # enqueued by the fetcher (Kafka 0.8.2 PartitionTopicInfo.enqueue / ConsumerIterator.next).
    records_consumed: int | None = None
    bytes_fetched: int | None = None
    consume_rate: float | None = None  # records/s: max(one-minute, mean) rate of MessagesPerSec
    bytes_rate: float | None = None  # bytes/s (new consumer: bytes-consumed-rate)
    fetcher_threads: tuple[tuple[str, str], ...] = ()  # (name, state), when thread names were read
    # Whether `fetcher_threads` are known to be this client's (and all of them): False when several
    # clients share the JVM and the thread names cannot be told apart.
    fetcher_threads_attributed: bool = False
    sources: tuple[str, ...] = field(default=())  # every MBean or metric used

    @property
    def average_record_bytes(self) -> float | None:
        if self.records_consumed and self.bytes_fetched:
            return self.bytes_fetched / self.records_consumed
        if self.consume_rate and self.bytes_rate:
            return self.bytes_rate / self.consume_rate
        return None

    @property
    def has_fetcher_metrics(self) -> bool:
        return self.max_lag is not None or bool(self.partitions)


# ---- settings -------------------------------------------------------------------------------

# Kafka 0.8.2 ConsumerConfig defaults (0.8.0/0.8.1 queued 10 chunks; 0.8.2 to 0.11 queue 2).
OLD_CONSUMER_DEFAULTS = {
    "queued.max.message.chunks": "2",
    "fetch.message.max.bytes": str(1024 * 1024),
    "auto.commit.enable": "true",
    "auto.commit.interval.ms": "60000",
    "num.consumer.fetchers": "1",
}
# KafkaConsumer defaults (Kafka 0.10.1+: max.poll.records 500, 1 MiB per partition fetch).
NEW_CONSUMER_DEFAULTS = {
    "max.partition.fetch.bytes": str(1024 * 1024),
    "enable.auto.commit": "true",
    "auto.commit.interval.ms": "5000",
    "max.poll.records": "500",
}


@dataclass(frozen=True)
class Setting:
    name: str
    value: str
    source: str  # "consumer config FILE", "JVM system property", "Kafka 0.8.2 default" ...

    @property
    def as_int(self) -> int | None:
        try:
            return int(self.value.strip())
        except ValueError:
            return None

    @property
    def as_bool(self) -> bool:
        return self.value.strip().lower() == "true"


@dataclass(frozen=True)
class ConsumerSettings:
    settings: tuple[Setting, ...]
    problems: tuple[str, ...] = ()

    def get(self, name: str) -> Setting | None:
        for setting in self.settings:
            if setting.name == name:
                return setting
        return None


def consumer_settings(
    consumer: str,
    system_properties: dict[str, str],
    config: dict[str, str] | None = None,
    config_path: str | None = None,
) -> ConsumerSettings:
    """Each setting from the user's consumer config file, else the JVM's system properties, else
    Kafka's default, with where it came from."""
    defaults = OLD_CONSUMER_DEFAULTS if consumer == OLD_CONSUMER else NEW_CONSUMER_DEFAULTS
    default_source = "Kafka 0.8.2 default" if consumer == OLD_CONSUMER else "KafkaConsumer default"
    settings = []
    problems = []
    for name, default in defaults.items():
        if config is not None and name in config:
            setting = Setting(name, config[name], f"consumer config {config_path}")
        elif name in system_properties:
            setting = Setting(name, system_properties[name], "JVM system property")
        else:
            setting = Setting(name, default, default_source)
        if name != "auto.commit.enable" and name != "enable.auto.commit":
            number = setting.as_int
            if number is None or number <= 0:
                problems.append(
                    f"{name}={setting.value!r} ({setting.source}) is not a positive number: ignored"
                )
                setting = Setting(name, default, default_source)
        settings.append(setting)
    return ConsumerSettings(tuple(settings), tuple(problems))
