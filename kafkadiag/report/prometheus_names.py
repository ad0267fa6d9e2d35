"""Every metric family kafkadiag exports, in one place: name, type, unit and help.

The names follow Prometheus's naming conventions (one `kafkadiag_` prefix, the unit as the
last word, `_records` for counts of Kafka records, `_offset` for positions in a log, no `_sum`
or `_total` on gauges, which Prometheus reserves for summaries and counters) and the labels the
lag exporters operators already run use: `group`, `topic`, `partition`, plus `cluster`
(Kafka Lag Exporter's `cluster_name`; kafka_exporter calls the group `consumergroup`).
A state is one series whose `status` or `verdict` label holds the state, valued 1.
docs/prometheus.md documents each family; a test keeps it in step with this table.
"""

from __future__ import annotations

from dataclasses import dataclass

# Raised when a family is renamed or removed, or a label changes meaning; exported as the
# `schema` label of kafkadiag_build_info. 1 was the `kafkadiag_lag_*` names.
SCHEMA_VERSION = 2

PARTITION = ("cluster", "group", "source", "topic", "partition")
TOPIC = ("cluster", "group", "source", "topic")
GROUP = ("cluster", "group", "source")
CLIENT = ("cluster", "client_id", "group")


@dataclass(frozen=True)
class Family:
    name: str
    kind: str  # gauge (the only type kafkadiag exports: every value is a reading)
    labels: tuple[str, ...]
    help: str


def _families(*families: Family) -> dict[str, Family]:
    return {family.name: family for family in families}


FAMILIES = _families(
    Family(
        "kafkadiag_build_info",
        "gauge",
        ("version", "schema"),
        "Always 1: kafkadiag's version and the metric schema.",
    ),
    # Partitions of a group (kafkadiag lag, diagnose).
    Family(
        "kafkadiag_partition_lag_records",
        "gauge",
        PARTITION,
        "High watermark - committed offset, as kafka-consumer-groups.sh.",
    ),
    Family(
        "kafkadiag_partition_lag_unknown",
        "gauge",
        PARTITION,
        "1 when the partition's lag could not be computed.",
    ),
    Family("kafkadiag_partition_committed_offset", "gauge", PARTITION, "The group's committed offset."),
    Family(
        "kafkadiag_partition_high_watermark_offset",
        "gauge",
        PARTITION,
        "The partition's high watermark (log end offset).",
    ),
    Family("kafkadiag_partition_log_start_offset", "gauge", PARTITION, "The partition's log-start offset."),
    Family(
        "kafkadiag_partition_last_progress_timestamp_seconds",
        "gauge",
        PARTITION,
        "When the committed offset last moved (Unix time).",
    ),
    Family(
        "kafkadiag_partition_lag_seconds",
        "gauge",
        PARTITION,
        "Estimated age of the next record the group will consume (2+ samples).",
    ),
    Family(
        "kafkadiag_partition_consumed_records_per_second",
        "gauge",
        PARTITION,
        "Rate the committed offset advanced (2+ samples).",
    ),
    Family(
        "kafkadiag_partition_produced_records_per_second",
        "gauge",
        PARTITION,
        "Rate the high watermark advanced (2+ samples).",
    ),
    Family(
        "kafkadiag_partition_status",
        "gauge",
        (*PARTITION, "status"),
        "1, labelled with the partition's Burrow status: OK WARN STOP STALL REWIND (2+ samples).",
    ),
    Family(
        "kafkadiag_partition_fetcher_lag_records",
        "gauge",
        PARTITION,
        "The consumer's own fetcher lag: high watermark - fetch offset.",
    ),
    Family(
        "kafkadiag_partition_fetcher_gap_records",
        "gauge",
        PARTITION,
        "Checker lag - fetcher lag: held by the consumer, not committed.",
    ),
    Family(
        "kafkadiag_partition_stream_queue_chunks",
        "gauge",
        PARTITION,
        "Chunks queued in the stream the partition feeds (old consumer).",
    ),
    # Per topic of a group.
    Family(
        "kafkadiag_group_topic_lag_records",
        "gauge",
        TOPIC,
        "Sum of the group's positive partition lags in the topic.",
    ),
    Family(
        "kafkadiag_group_topic_max_lag_records",
        "gauge",
        TOPIC,
        "The group's largest partition lag in the topic.",
    ),
    Family(
        "kafkadiag_group_topic_consumed_records_per_second",
        "gauge",
        TOPIC,
        "Rate the group's committed offsets in the topic advanced (2+ samples).",
    ),
    Family(
        "kafkadiag_group_topic_lag_unknown_partitions",
        "gauge",
        TOPIC,
        "Partitions of the topic whose lag is unknown.",
    ),
    # Per group.
    Family(
        "kafkadiag_group_exists",
        "gauge",
        GROUP,
        "1 found, 0 in no store that was read; absent when a store that could hold it was unreachable.",
    ),
    Family(
        "kafkadiag_group_lag_records",
        "gauge",
        GROUP,
        "Sum of the group's positive partition lags (a lower bound when some are unknown).",
    ),
    Family("kafkadiag_group_max_lag_records", "gauge", GROUP, "The group's largest partition lag."),
    Family(
        "kafkadiag_group_max_lag_seconds",
        "gauge",
        GROUP,
        "The group's largest partition time lag (2+ samples).",
    ),
    Family(
        "kafkadiag_group_consumed_records_per_second",
        "gauge",
        GROUP,
        "Rate the group's committed offsets advanced (2+ samples).",
    ),
    Family(
        "kafkadiag_group_members",
        "gauge",
        GROUP,
        "Live members (old consumer: registered consumer instances).",
    ),
    Family(
        "kafkadiag_group_status",
        "gauge",
        (*GROUP, "status"),
        "1, labelled with the group's Burrow status: OK WARN ERR (2+ samples).",
    ),
    Family(
        "kafkadiag_group_findings",
        "gauge",
        (*GROUP, "code", "severity"),
        "Ownership and offset findings per code and severity.",
    ),
    # The consumer's own metrics (lag with a metrics source, maxlag, diagnose).
    Family(
        "kafkadiag_fetcher_verdict",
        "gauge",
        (*CLIENT, "verdict"),
        "1, labelled with the client's fetcher verdict (docs/maxlag.md).",
    ),
    Family(
        "kafkadiag_fetcher_max_lag_records", "gauge", CLIENT, "The client's own MaxLag / records-lag-max."
    ),
    Family(
        "kafkadiag_fetcher_lag_records", "gauge", CLIENT, "Sum of the client's per-partition fetcher lags."
    ),
    Family(
        "kafkadiag_fetcher_checker_lag_records",
        "gauge",
        CLIENT,
        "Sum of the committed lags of the partitions the client fetches.",
    ),
    Family(
        "kafkadiag_fetcher_gap_records",
        "gauge",
        CLIENT,
        "Checker lag - fetcher lag, summed over the client's partitions.",
    ),
    Family(
        "kafkadiag_fetcher_buffered_records_bound",
        "gauge",
        CLIENT,
        "Most records the consumer's queues and uncommitted work can hold.",
    ),
    Family(
        "kafkadiag_fetcher_min_fetch_rate_per_second",
        "gauge",
        CLIENT,
        "The client's lowest fetch request rate.",
    ),
    Family(
        "kafkadiag_stream_queue_chunks",
        "gauge",
        (*CLIENT, "topic", "thread"),
        "Chunks queued in an old-consumer stream.",
    ),
    Family(
        "kafkadiag_stream_queue_capacity_chunks",
        "gauge",
        (*CLIENT, "topic", "thread"),
        "queued.max.message.chunks of that stream.",
    ),
    # A diagnosis (kafkadiag diagnose).
    Family(
        "kafkadiag_diagnosis_verdict",
        "gauge",
        ("cluster", "verdict"),
        "1, labelled with the verdict: healthy, at_risk, stalled or incomplete.",
    ),
    Family(
        "kafkadiag_diagnosis_findings",
        "gauge",
        ("cluster", "code", "severity"),
        "Findings of the diagnosis per rule code and severity.",
    ),
    Family(
        "kafkadiag_diagnosis_source_up",
        "gauge",
        ("cluster", "kind", "target"),
        "1 when the source (kind: lag, dump, metrics) was read.",
    ),
    # The collection itself.
    Family(
        "kafkadiag_up",
        "gauge",
        ("cluster",),
        "1 when every source was reached, 0 when one could not be (see kafkadiag_source_up).",
    ),
    Family(
        "kafkadiag_source_up",
        "gauge",
        ("cluster", "source", "address"),
        "1 when the source (zookeeper, kafka, metrics) was reached.",
    ),
    Family("kafkadiag_partial", "gauge", ("cluster",), "1 when some data could not be read."),
    Family(
        "kafkadiag_collection_samples",
        "gauge",
        ("cluster",),
        "Snapshots the statuses and rates were evaluated over (1: none of them).",
    ),
    Family("kafkadiag_collection_duration_seconds", "gauge", ("cluster",), "Time spent reading the sources."),
    Family(
        "kafkadiag_collection_timestamp_seconds",
        "gauge",
        ("cluster",),
        "When the last snapshot was taken (Unix time).",
    ),
)
