"""`kafkadiag lag --serve`: what a scrape costs, collecting and within --min-interval.

    .venv/bin/python bench/serve_bench.py [--groups 200] [--scrapes 10]

A KRaft Apache Kafka 4.1.1 broker on a free 127.0.0.1 port holds GROUPS groups with 10
committed partitions each (over 20 topics of 10 partitions); the exporter serves them all
(`--all-groups`). Scrapes are timed as Prometheus makes them (one GET of /metrics): spaced past
--min-interval, each reads the cluster; right after one, each gets the kept exposition. Also
printed: the exposition's size and series, and the exporter's resident memory after the scrapes.
Everything is stopped by PID at the end.
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import machine  # noqa: E402

from kafkadiag.sandbox import kafka_servers  # noqa: E402
from tests.infra.real_kafka import RealKafka, with_group_coordinator  # noqa: E402
from tests.prometheus.servers import http_get, start_exporter  # noqa: E402

MIN_INTERVAL_S = 0.5


def commit_groups(address: str, groups: int) -> None:
    from kafka import KafkaAdminClient, TopicPartition
    from kafka.admin import NewTopic
    from kafka.structs import OffsetAndMetadata

    topics = [f"serve-topic-{index:02d}" for index in range(20)]
    admin = KafkaAdminClient(bootstrap_servers=address, request_timeout_ms=120_000)
    try:
        admin.create_topics([NewTopic(topic, 10, 1) for topic in topics])
        time.sleep(2)
        for index in range(groups):
            offsets = {TopicPartition(topics[index % 20], p): OffsetAndMetadata(0, "", -1) for p in range(10)}
            admin.alter_group_offsets(f"serve-group-{index:04d}", offsets)
    finally:
        admin.close()


def timed_scrapes(url: str, scrapes: int, spacing_s: float) -> tuple[list[float], str]:
    times, body = [], ""
    for _ in range(scrapes):
        time.sleep(spacing_s)
        started = time.perf_counter()
        status, _, body = http_get(url, timeout_s=120)
        times.append(time.perf_counter() - started)
        assert status == 200, body
    return times, body


def row(name: str, times: list[float], **extra: object) -> None:
    median, worst = round(statistics.median(times), 4), round(max(times), 4)
    print(json.dumps({"scenario": name, "median_s": median, "max_s": worst, "scrapes": len(times), **extra}))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--groups", type=int, default=200)
    parser.add_argument("--scrapes", type=int, default=10)
    options = parser.parse_args()
    print(json.dumps({"machine": machine.describe()}), flush=True)
    with tempfile.TemporaryDirectory(prefix="kafkadiag-serve-bench-") as directory:
        work = Path(directory)
        broker = kafka_servers.start_kraft_broker("4.1.1", work / "kafka", jvm_options=("-Xmx1g",))
        try:
            kafka = with_group_coordinator(RealKafka(broker, work))
            commit_groups(kafka.address, options.groups)
            exporter = start_exporter(
                work / "exporter", "--bootstrap-server", kafka.address, "--all-groups",
                "--min-interval", f"{MIN_INTERVAL_S}s",
            )  # fmt: skip
            try:
                url = f"http://{exporter.address}/metrics"
                http_get(url, timeout_s=120)  # the first collection opens the connections
                collecting, body = timed_scrapes(url, options.scrapes, MIN_INTERVAL_S + 0.1)
                series = sum(1 for line in body.splitlines() if line and not line.startswith("#"))
                row(f"scrape that collects ({options.groups} groups x 10 partitions)", collecting,
                    exposition_bytes=len(body.encode()), series=series)  # fmt: skip
                cached, _ = timed_scrapes(url, options.scrapes, 0.0)
                row("scrape within --min-interval (kept exposition)", cached)
                status = Path(f"/proc/{exporter.pid}/status").read_text()
                rss_kb = next(
                    int(line.split()[1]) for line in status.splitlines() if line.startswith("VmRSS")
                )
                print(json.dumps({"exporter_rss_mb": round(rss_kb / 1024, 1)}), flush=True)
            finally:
                exporter.stop()
        finally:
            broker.stop()


if __name__ == "__main__":
    main()
