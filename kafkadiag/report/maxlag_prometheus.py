"""`kafkadiag maxlag --format prometheus`: the consumer's fetcher against the checker lag, per
client, as Prometheus series (names in kafkadiag/report/prometheus_names.py)."""

from __future__ import annotations

from typing import TextIO

from kafkadiag.maxlag.model import ClientComparison, MaxLagReport
from kafkadiag.report.prometheus_text import Exposition, cluster_of, source_label


def write_prometheus(stream: TextIO, report: MaxLagReport, cluster_name: str | None = None) -> None:
    exposition = Exposition()
    exposition.add_build_info()
    cluster = cluster_of(report.lag_sources, cluster_name)
    add_clients(exposition, report, cluster, partitions=True)
    _add_collection(exposition, report, cluster)
    exposition.write(stream)


def add_clients(exposition: Exposition, report: MaxLagReport, cluster: str, partitions: bool = False) -> None:
    """Per client; with `partitions`, also each partition's fetcher lag and gap (`lag` adds those
    to its own partition series instead)."""
    for client in report.clients:
        labels = (("cluster", cluster), ("client_id", client.client_id), ("group", client.group or ""))
        exposition.add("kafkadiag_fetcher_verdict", (*labels, ("verdict", client.verdict)), 1)
        exposition.add("kafkadiag_fetcher_max_lag_records", labels, client.max_lag)
        exposition.add("kafkadiag_fetcher_lag_records", labels, client.fetcher_lag_total)
        exposition.add("kafkadiag_fetcher_checker_lag_records", labels, client.checker_lag_total)
        exposition.add("kafkadiag_fetcher_gap_records", labels, client.gap_total)
        bound = client.bound.records if client.bound is not None else None
        exposition.add("kafkadiag_fetcher_buffered_records_bound", labels, bound)
        exposition.add("kafkadiag_fetcher_min_fetch_rate_per_second", labels, client.min_fetch_rate)
        for stream in client.streams:
            stream_labels = (*labels, ("topic", stream.topic), ("thread", stream.thread_id))
            exposition.add("kafkadiag_stream_queue_chunks", stream_labels, stream.queue_size)
            exposition.add("kafkadiag_stream_queue_capacity_chunks", stream_labels, stream.capacity)
        if partitions and client.group is not None:
            _add_partitions(exposition, client, cluster)


def _add_partitions(exposition: Exposition, client: ClientComparison, cluster: str) -> None:
    group_labels = (("cluster", cluster), ("group", client.group), ("source", client.group_source or ""))
    for partition in client.partitions:
        labels = (*group_labels, ("topic", partition.topic), ("partition", partition.partition))
        exposition.add("kafkadiag_partition_lag_records", labels, partition.checker_lag)
        exposition.add("kafkadiag_partition_fetcher_lag_records", labels, partition.fetcher_lag)
        exposition.add("kafkadiag_partition_fetcher_gap_records", labels, partition.gap)


def _add_collection(exposition: Exposition, report: MaxLagReport, cluster: str) -> None:
    from kafkadiag.report.lag_prometheus import add_collection_state

    metrics_read = bool(report.clients)
    exposition.add(
        "kafkadiag_source_up",
        (("cluster", cluster), ("source", "metrics"), ("address", report.metrics_source)),
        int(metrics_read),
    )
    for option, address in report.lag_sources:
        exposition.add(
            "kafkadiag_source_up",
            (("cluster", cluster), ("source", source_label(option)), ("address", address)),
            int(not report.errors),
        )
    add_collection_state(exposition, cluster, metrics_read and not report.errors, report.incomplete)
    labels = (("cluster", cluster),)
    exposition.add("kafkadiag_collection_timestamp_seconds", labels, report.taken_at_ms / 1000)
