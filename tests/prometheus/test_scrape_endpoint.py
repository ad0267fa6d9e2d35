"""`kafkadiag lag --serve` on a real broker, scraped by a real Prometheus server.

The exporter and Prometheus run as processes of their own on 127.0.0.1, on free ports, and are
stopped by PID; the assertions read Prometheus's HTTP API, as a dashboard or an alert would.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafkadiag.exitcodes import ExitCode
from kafkadiag.sandbox.servers import ServerProcess
from tests.infra import workload
from tests.infra.cli import run
from tests.infra.workload import Cluster
from tests.prometheus.promtool import RULES, promtool
from tests.prometheus.servers import Prometheus, http_get, start_exporter, start_prometheus

STATUSES = {"OK", "WARN", "STOP", "STALL", "REWIND"}
DASHBOARD = Path(__file__).resolve().parents[2] / "contrib" / "grafana" / "kafkadiag-lag.json"


@pytest.fixture
def lagging_group(cluster: Cluster) -> tuple[str, str]:
    """A group whose committed offsets leave lag 9 on partition 0 and 3 on partition 1."""
    topic = cluster.topic(2, {0: 10, 1: 4})
    group = workload.unique("exported")
    workload.commit_offsets_without_joining(cluster.bootstrap, group, {(topic, 0): 1, (topic, 1): 1})
    return topic, group


@pytest.fixture
def scraped(
    cluster: Cluster, lagging_group: tuple[str, str], tmp_path: Path
) -> Iterator[tuple[Prometheus, ServerProcess]]:
    _, group = lagging_group
    exporter = start_exporter(
        tmp_path / "exporter",
        "--bootstrap-server", cluster.bootstrap, "--group", group,
        "--cluster-name", "test-cluster", "--min-interval", "500ms",
    )  # fmt: skip
    try:
        prometheus = start_prometheus(tmp_path / "prometheus", exporter.address, rule_files=(RULES,))
        try:
            yield prometheus, exporter
        finally:
            prometheus.stop()
    finally:
        exporter.stop()


def _values(result: list[dict]) -> dict[str, float]:
    return {sample["metric"]["partition"]: float(sample["value"][1]) for sample in result}


def test_prometheus_scrapes_the_lag_per_partition_topic_and_group(
    scraped: tuple[Prometheus, ServerProcess], lagging_group: tuple[str, str]
) -> None:
    prometheus, _ = scraped
    topic, group = lagging_group
    # WHEN Prometheus has scraped the exporter
    selector = f'{{cluster="test-cluster",group="{group}",topic="{topic}"}}'
    partitions = prometheus.wait_for(f"kafkadiag_partition_lag_records{selector}", lambda r: len(r) == 2)
    # THEN it holds the lag of each partition, and the topic's and the group's sums
    assert _values(partitions) == {"0": 9.0, "1": 3.0}, partitions
    labels = partitions[0]["metric"]
    assert {key: labels[key] for key in ("cluster", "group", "source", "topic")} == {
        "cluster": "test-cluster", "group": group, "source": "kafka", "topic": topic,
    }  # fmt: skip
    (topic_sum,) = prometheus.query(f"kafkadiag_group_topic_lag_records{selector}")
    assert float(topic_sum["value"][1]) == 12.0, topic_sum
    (group_sum,) = prometheus.query(f'kafkadiag_group_lag_records{{group="{group}"}}')
    assert float(group_sum["value"][1]) == 12.0, group_sum
    (up,) = prometheus.query('up{job="kafkadiag"}')
    assert up["value"][1] == "1", up
    assert prometheus.query('kafkadiag_up{cluster="test-cluster"}')[0]["value"][1] == "1"


def test_statuses_are_one_series_labelled_with_the_status(
    scraped: tuple[Prometheus, ServerProcess], lagging_group: tuple[str, str]
) -> None:
    prometheus, _ = scraped
    _, group = lagging_group
    # WHEN the exporter has collected twice or more (a status needs two samples)
    result = prometheus.wait_for(f'kafkadiag_partition_status{{group="{group}"}}', lambda r: len(r) == 2)
    # THEN each partition has one status series, valued 1, whose label is a Burrow status
    assert {sample["metric"]["partition"] for sample in result} == {"0", "1"}, result
    assert all(sample["metric"]["status"] in STATUSES and sample["value"][1] == "1" for sample in result), (
        result
    )
    (group_status,) = prometheus.wait_for(f'kafkadiag_group_status{{group="{group}"}}')
    assert group_status["metric"]["status"] in {"OK", "WARN", "ERR"}, group_status
    samples = prometheus.query('kafkadiag_collection_samples{cluster="test-cluster"}')
    assert float(samples[0]["value"][1]) >= 2, samples


def test_the_alert_rules_load_and_evaluate_on_the_scraped_series(
    scraped: tuple[Prometheus, ServerProcess],
) -> None:
    prometheus, _ = scraped
    prometheus.wait_for('kafkadiag_up{cluster="test-cluster"}')
    deadline = time.monotonic() + 30
    while True:
        groups = prometheus.api("rules")["groups"]
        rules = [rule for group in groups for rule in group["rules"]]
        if len(rules) == 10 and all(rule.get("lastEvaluation", "").startswith("20") for rule in rules):
            break
        assert time.monotonic() < deadline, rules
        time.sleep(0.5)
    assert all(rule["health"] == "ok" for rule in rules), rules


def test_the_exposition_passes_promtool_and_the_exporter_stops_on_sigterm(
    scraped: tuple[Prometheus, ServerProcess], lagging_group: tuple[str, str]
) -> None:
    _, exporter = scraped
    # GIVEN the exposition as served
    status, content_type, body = http_get(f"http://{exporter.address}/metrics")
    assert status == 200 and content_type.startswith("text/plain; version=0.0.4"), (status, content_type)
    # THEN promtool's linter (naming conventions, HELP and TYPE) finds nothing to say
    result = promtool("check", "metrics", stdin=body)
    assert result.returncode == 0 and not result.stdout.strip(), result.stdout + result.stderr
    index = http_get(f"http://{exporter.address}/")
    assert index[0] == 200 and 'href="/metrics"' in index[2], index
    assert http_get(f"http://{exporter.address}/nothing")[0] == 404
    # WHEN it gets SIGTERM, THEN it exits 0 promptly, saying so
    process = exporter.process
    os.kill(process.pid, signal.SIGTERM)
    assert process.wait(timeout=15) == 0, exporter.log_tail()
    assert "kafkadiag: stopping" in exporter.log_tail()


def test_scrapes_within_the_minimum_interval_reuse_the_last_collection(
    cluster: Cluster, lagging_group: tuple[str, str], tmp_path: Path
) -> None:
    topic, group = lagging_group
    exporter = start_exporter(
        tmp_path, "--bootstrap-server", cluster.bootstrap, "--group", group, "--min-interval", "1h"
    )
    try:
        first = http_get(f"http://{exporter.address}/metrics")[2]
        # WHEN the group commits, then the exporter is scraped again within the interval
        workload.commit_offsets_without_joining(cluster.bootstrap, group, {(topic, 0): 10, (topic, 1): 4})
        second = http_get(f"http://{exporter.address}/metrics")[2]
    finally:
        exporter.stop()
    # THEN the second scrape is the first collection, not a new read
    assert second == first
    labels = f'cluster="{cluster.bootstrap}",group="{group}",source="kafka"'
    assert f"kafkadiag_group_lag_records{{{labels}}} 12\n" in first, first


def test_every_dashboard_query_answers_on_the_scraped_series(
    scraped: tuple[Prometheus, ServerProcess], lagging_group: tuple[str, str]
) -> None:
    prometheus, _ = scraped
    _, group = lagging_group
    dashboard = json.loads(DASHBOARD.read_text())
    prometheus.wait_for(f'kafkadiag_group_status{{group="{group}"}}')
    # WHEN each panel's query runs as Grafana sends it, the variables set to this cluster and group
    answers = {}
    for panel in dashboard["panels"]:
        (target,) = panel["targets"]
        expression = target["expr"].replace("$cluster", "test-cluster").replace("$group", group)
        answers[panel["title"]] = prometheus.query(expression)
    # THEN every query is valid (the API answered), every panel has data but two that need what
    # this idle group lacks (a partition not OK; records produced within the window, for time
    # lag), and the lag panel shows the group's lag
    may_be_empty = {"Partitions not OK", "Time lag: age of the next record to consume"}
    empty = [title for title, result in answers.items() if not result and title not in may_be_empty]
    assert not empty, answers
    (lag,) = answers["Lag per group (records)"]
    assert float(lag["value"][1]) == 12.0, lag
    for variable in dashboard["templating"]["list"][1:]:
        selector = variable["definition"].removeprefix("label_values(").rsplit(",", 1)[0]
        assert prometheus.query(selector.replace("$cluster", "test-cluster")), variable


def test_an_address_it_cannot_serve_on_is_a_usage_error() -> None:
    base = ["lag", "--bootstrap-server", "127.0.0.1:1", "--group", "g"]
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        code, _, err = run([*base, "--serve", f"127.0.0.1:{port}"])
        assert code == ExitCode.USAGE and f"cannot listen on 127.0.0.1:{port}" in err, err
    for address in ("9308", "host:port", "127.0.0.1:70000"):
        code, _, err = run([*base, "--serve", address])
        assert code == ExitCode.USAGE and "--serve takes HOST:PORT" in err, (address, err)
    code, _, err = run([*base, "--serve", "127.0.0.1:0", "--watch"])
    assert code == ExitCode.USAGE and "--serve answers scrapes" in err, err
