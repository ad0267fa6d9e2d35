"""Read a consumer JVM's metrics from a Prometheus JMX exporter's text exposition (URL or file).

The exporter names series by rules, so the same MBean appears under different names. Understood:

- the exporter's default export (no rules, or `pattern: ".*"`): `<domain>_<first key property
  value>_<attribute>` with the other key properties as labels, every unsafe character turned into
  `_` (JmxCollector.defaultExport/safeName), e.g.
  `kafka_consumer_ConsumerFetcherManager_Value{name="MaxLag",clientId="c1"}`,
  `kafka_server_FetcherLagMetrics_Value{name="ConsumerLag",clientId="c1",topic="t",partition="0"}`,
  `kafka_consumer_consumer_fetch_manager_metrics_records_lag_max{client_id="c1"}`; names may be
  lowercased (lowercaseOutputName); Kafka 0.8.1's quoted names come out as `_kafka_consumer_...`
  with quoted label values;
- the rule style of the exporter's Kafka examples (kafka-consumer-producer-0-8-2.yml):
  `kafka_consumer_<type>_<name>` (`_total` for Count, `_rate` with a `calculation` label) and a
  `client` label; where a greedy `clientId=(.+)` swallowed the following key properties, the label
  reads `c1, topic=t, threadId=0` and is split back into them.

Series are turned back into MBean-like readings (domain, key properties, attributes) so the same
extraction (`jmx.kafka`) applies. The JVM's system properties are not in the exposition: settings
then come from --consumer-config or Kafka's defaults.
"""

from __future__ import annotations

import math
import re
import time
from collections import defaultdict
from collections.abc import Iterator

from kafkadiag.collect.jmx.errors import MetricsSourceError
from kafkadiag.collect.jmx.http import MAX_BYTES, http_get, without_credentials
from kafkadiag.collect.optionfile import OptionFileError, read_option_bytes
from kafkadiag.consumer_metrics import SOURCE_PROMETHEUS, MBeanReading, MetricsReading

USER_ENV = "KAFKADIAG_PROMETHEUS_USER"
PASSWORD_ENV = "KAFKADIAG_PROMETHEUS_PASSWORD"

_SERIES = re.compile(
    r"^(?P<name>[a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(?P<labels>.*)\})?\s+(?P<value>\S+)(?:\s+\S+)?\s*$"
)
# A label `key="value"`, tried only where a name starts (`(?<![a-zA-Z0-9_])`: from inside a long
# name each start rescanned the rest of it) and a value that is never closed runs to the end of
# the line (`end` is then not a quote: see _labels). A 256 KB label line took more than 300 s.
_LABEL = re.compile(
    r'(?<![a-zA-Z0-9_])(?P<key>[a-zA-Z_][a-zA-Z0-9_]*)\s*=\s*"(?P<value>(?:[^"\\]|\\.)*)(?P<end>"|\\?$)\s*,?'
)
_EMBEDDED = re.compile(r",\s*(?P<key>[A-Za-z][\w-]*)=")

# normalized type -> (domain, type) as Kafka registers them
TYPES = {
    "consumerfetchermanager": ("kafka.consumer", "ConsumerFetcherManager"),
    "fetcherlagmetrics": ("kafka.server", "FetcherLagMetrics"),
    "zookeeperconsumerconnector": ("kafka.consumer", "ZookeeperConsumerConnector"),
    "consumertopicmetrics": ("kafka.consumer", "ConsumerTopicMetrics"),
    "consumer_fetch_manager_metrics": ("kafka.consumer", "consumer-fetch-manager-metrics"),
}
NAMES = {
    "maxlag": "MaxLag",
    "minfetchrate": "MinFetchRate",
    "consumerlag": "ConsumerLag",
    "fetchqueuesize": "FetchQueueSize",
    "messagespersec": "MessagesPerSec",
    "bytespersec": "BytesPerSec",
}
ATTRIBUTES = {
    "value": "Value",
    "count": "Count",
    "oneminuterate": "OneMinuteRate",
    "fiveminuterate": "FiveMinuteRate",
    "fifteenminuterate": "FifteenMinuteRate",
    "meanrate": "MeanRate",
}
NEW_CONSUMER_ATTRIBUTES = ("records_lag_max", "records_lag", "records_consumed_rate", "bytes_consumed_rate")
# label name (lowercased, without _ and -) -> key property
LABELS = {
    "clientid": "clientId",
    "client": "clientId",
    "topic": "topic",
    "partition": "partition",
    "threadid": "threadId",
}


def parse_exposition(text: str) -> list[tuple[str, dict[str, str], float]]:
    """Prometheus text format 0.0.4 samples: (name, labels, value); comments and junk skipped."""
    samples = []
    for line in text.splitlines():
        line = line.strip()
        if not line or line.startswith("#"):
            continue
        match = _SERIES.match(line)
        if match is None:
            continue
        labels: dict[str, str] = {}
        for label in _labels(match["labels"] or ""):
            labels[label["key"]] = re.sub(r"\\(.)", lambda m: "\n" if m[1] == "n" else m[1], label["value"])
        try:
            value = float(match["value"])
        except ValueError:
            continue
        if math.isfinite(value):
            samples.append((match["name"], labels, value))
    return samples


def _labels(text: str) -> Iterator[re.Match[str]]:
    """The labels of a series, in linear time. A value left open ends them: a later value could
    only close where this one would have (a quote escaped for this one is escaped for it)."""
    for label in _LABEL.finditer(text):
        if label["end"] != '"':
            return
        yield label


def _unquote(value: str) -> str:
    return value[1:-1] if len(value) >= 2 and value[0] == '"' and value[-1] == '"' else value


def _properties(labels: dict[str, str], new_consumer: bool) -> list[tuple[str, str]]:
    properties: list[tuple[str, str]] = []
    for key, raw in labels.items():
        value = _unquote(raw)
        normalized = key.lower().replace("_", "").replace("-", "")
        if normalized == "calculation" or normalized == "name" or normalized == "type":
            continue
        # A greedy `clientId=(.+)` rule capture: "c1, topic=t, threadId=0".
        parts = _EMBEDDED.split(value)
        value, embedded = parts[0], list(zip(parts[1::2], parts[2::2]))
        prop = LABELS.get(normalized)
        if prop is None:
            continue
        if new_consumer and prop == "clientId":
            prop = "client-id"
        properties.append((prop, value.strip()))
        for inner_key, inner_value in embedded:
            inner = LABELS.get(inner_key.lower().replace("_", "").replace("-", ""))
            if inner is not None:
                properties.append((inner, inner_value.strip()))
    order = {"clientId": 0, "client-id": 0, "topic": 1, "partition": 2, "threadId": 3}
    return sorted(dict(properties).items(), key=lambda item: order.get(item[0], 9))


def beans_from_samples(samples: list[tuple[str, dict[str, str], float]]) -> list[MBeanReading]:
    grouped: dict[tuple[str, tuple[tuple[str, str], ...]], dict[str, float]] = defaultdict(dict)
    series_of: dict[tuple[str, tuple[tuple[str, str], ...]], str] = {}
    for name, labels, value in samples:
        normalized = re.sub(r"_+", "_", name.lower()).strip("_")
        for prefix in ("kafka_consumer_", "kafka_server_"):
            if normalized.startswith(prefix):
                break
        else:
            continue
        rest = normalized[len(prefix) :]
        kind = next((key for key in TYPES if rest.startswith(key + "_")), None)
        if kind is None:
            continue
        domain, type_name = TYPES[kind]
        suffix = rest[len(kind) + 1 :]
        kafka_name: str | None = None
        attribute: str | None = None
        if kind == "consumer_fetch_manager_metrics":
            if suffix not in NEW_CONSUMER_ATTRIBUTES:
                continue
            attribute = suffix.replace("_", "-")
        elif suffix in ATTRIBUTES:
            attribute = ATTRIBUTES[suffix]
            label_name = next((v for k, v in labels.items() if k.lower() == "name"), None)
            kafka_name = _unquote(label_name) if label_name is not None else None
        else:
            base, _, tail = suffix.rpartition("_")
            if tail == "total" and base in NAMES:
                kafka_name, attribute = NAMES[base], "Count"
            elif tail == "rate" and base in NAMES:
                calculation = next((v for k, v in labels.items() if k.lower() == "calculation"), "")
                kafka_name = NAMES[base]
                attribute = ATTRIBUTES.get(calculation.lower(), calculation or "OneMinuteRate")
            elif suffix in NAMES:
                kafka_name, attribute = NAMES[suffix], "Value"
            else:
                continue
        properties = [("type", type_name)]
        if kafka_name is not None:
            properties.append(("name", kafka_name))
        properties += _properties(labels, kind == "consumer_fetch_manager_metrics")
        key = (domain, tuple(properties))
        grouped[key][attribute] = value
        rendered = ",".join(f'{k}="{v}"' for k, v in labels.items())
        series_of.setdefault(key, f"{name}{{{rendered}}}")
    beans = []
    for (domain, key_properties), attributes in grouped.items():
        beans.append(
            MBeanReading(
                name=series_of[(domain, key_properties)],
                domain=domain,
                properties=key_properties,
                attributes=tuple(
                    sorted((k, int(v) if float(v).is_integer() else v) for k, v in attributes.items())
                ),
            )
        )
    return sorted(beans, key=lambda bean: bean.name)


def read_prometheus(target: str, timeout_s: float = 10.0) -> MetricsReading:
    read_at_ms = int(time.time() * 1000)
    started = time.monotonic()
    if target.startswith(("http://", "https://")):
        status, body = http_get(target, timeout_s, f"Prometheus exporter {target}", USER_ENV, PASSWORD_ENV)
        target = without_credentials(target)  # from here on it is only shown
        if status != 200:
            raise MetricsSourceError(
                f"{target} answered HTTP {status}",
                help_text="--prometheus takes the exporter's metrics URL, e.g. http://host:port/metrics.",
            )
        text = body[:MAX_BYTES].decode("utf-8", "replace")
    else:
        try:
            text = read_option_bytes(target, MAX_BYTES).decode("utf-8", "replace")
        except OptionFileError as error:
            raise MetricsSourceError(
                f"cannot read {target}: {error}",
                help_text="--prometheus takes an http(s) URL or a file saved from one (curl -o FILE URL).",
            ) from None
    samples = parse_exposition(text)
    if not samples:
        raise MetricsSourceError(
            f"{target} holds no Prometheus samples",
            help_text="--prometheus takes the text exposition of a JMX exporter (the page at /metrics).",
        )
    beans = beans_from_samples(samples)
    duration_ms = (time.monotonic() - started) * 1000
    return MetricsReading(
        source_kind=SOURCE_PROMETHEUS,
        source=target,
        read_at_ms=read_at_ms,
        duration_ms=round(duration_ms, 3),
        beans=tuple(beans),
        notes=(
            "the exposition has no JVM system properties: settings come from --consumer-config or Kafka's "
            "defaults",
            "thread names are not in the exposition",
        ),
        timings=(("read_ms", round(duration_ms, 3)),),
    )
