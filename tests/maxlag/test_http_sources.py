"""`kafkadiag maxlag --jolokia` and `--prometheus` against the real reproducer's metrics.

What is real: the reproducer JVM (its MBeans and their values, read over JMX just before each
comparison), ZooKeeper, the broker. What is a stand-in: the HTTP server speaking Jolokia's read
protocol and serving a JMX exporter's exposition (tests/maxlag/agents.py): no Jolokia or exporter
jar is installed here.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafkadiag.collect.jmx import jvm as jmx
from kafkadiag.collect.jmx.jolokia import escape_path_part
from kafkadiag.collect.jmx.prometheus import beans_from_samples, parse_exposition
from kafkadiag.exitcodes import ExitCode
from tests.infra.cli import run
from tests.infra.servers import free_port
from tests.maxlag.agents import AgentDouble, exporter_default, exporter_rules
from tests.maxlag.scenario import Deployment, deploy
from tests.maxlag.test_maxlag_cli import SETTINGS, drive_to_stall, maxlag, only_client


@pytest.fixture
def stalled(cluster, start) -> Deployment:
    deployment = deploy(cluster, start, SETTINGS)
    drive_to_stall(deployment)
    return deployment


@pytest.fixture
def agent(stalled: Deployment) -> Iterator[AgentDouble]:
    double = AgentDouble(lambda: jmx.read_local_jvm(stalled.pid, timeout_s=20))
    double.refresh()
    with double.serving():
        yield double


def assert_stall_named(client: dict[str, Any], deployment: Deployment) -> None:
    assert client["verdict"] == "streams-not-draining", client["summary"]
    consumer = deployment.consumer.consumer_id
    assert [(s["thread_id"], s["state"], s["partitions"], s["owner"]) for s in client["streams"]] == [
        ("0", "full", [0], f"{consumer}-0"),
        ("1", "empty", [1], f"{consumer}-1"),
    ]


def test_jolokia_stalled_stream_with_settings_from_system_properties(
    stalled: Deployment, agent: AgentDouble
) -> None:
    # WHEN kafkadiag reads the consumer through Jolokia's read API
    document = maxlag(["--jolokia", f"{agent.base}/jolokia", *stalled.cli_args()], expect=ExitCode.FINDINGS)
    client = only_client(document)
    # THEN it names the same full and starving streams as a JMX read, with the JVM's own settings
    assert_stall_named(client, stalled)
    assert document["metrics_source"] == {"kind": "jolokia", "source": f"{agent.base}/jolokia"}
    settings = {s["name"]: (s["value"], s["source"]) for s in client["settings"]}
    assert settings["queued.max.message.chunks"] == ("2", "JVM system property")
    assert [row["fetcher_lag"] for row in client["partitions"]] == [
        p["fetcher_lag"] for p in stalled.status()["partitions"]
    ]
    # ... and it only ever sent GET /read requests (read-only), one per pattern plus the settings
    assert {method for method, _ in agent.requests} == {"GET"}
    assert all(path.startswith("/jolokia/read/") for _, path in agent.requests)
    assert len(agent.requests) == len(jmx.KAFKA_PATTERNS) + 1


def test_jolokia_escaping_of_quotes_and_slashes() -> None:
    assert (
        escape_path_part('"kafka.consumer":type="X",*')
        == "%21%22kafka.consumer%21%22%3Atype%3D%21%22X%21%22%2C%2A"
    )
    assert escape_path_part("a/b!c") == "a%21%2Fb%21%21c"


def test_jolokia_unreachable_forbidden_and_not_jolokia(stalled: Deployment, agent: AgentDouble) -> None:
    port = free_port()
    code, _, err = run(["maxlag", "--jolokia", f"http://127.0.0.1:{port}/jolokia", "--timeout", "3"])
    assert code == ExitCode.INPUT_UNREADABLE and "cannot GET" in err and "what to do" in err
    agent.status_override = 403
    code, _, err = run(["maxlag", "--jolokia", f"{agent.base}/jolokia"])
    assert code == ExitCode.INPUT_UNREADABLE and "HTTP 403" in err and "KAFKADIAG_JOLOKIA_USER" in err
    agent.status_override, agent.body_override = 200, b"<html>a login page</html>"
    code, _, err = run(["maxlag", "--jolokia", f"{agent.base}/jolokia"])
    assert code == ExitCode.INPUT_UNREADABLE and "not Jolokia's JSON" in err


@pytest.mark.parametrize("exposition", ["default", "default-lowercase"])
def test_prometheus_default_export_stalled_stream(
    stalled: Deployment, agent: AgentDouble, exposition: str, tmp_path: Path
) -> None:
    # GIVEN the exporter's default naming; the JVM's settings are not in an exposition, so the
    # user passes the consumer's properties file
    agent.exposition = exposition
    config = tmp_path / "consumer.properties"
    config.write_text(
        "queued.max.message.chunks=2\nfetch.message.max.bytes=1500\nauto.commit.interval.ms=200\n"
    )
    # WHEN kafkadiag reads the /metrics page
    document = maxlag(
        ["--prometheus", f"{agent.base}/metrics", "--consumer-config", str(config), *stalled.cli_args()],
        expect=ExitCode.FINDINGS,
    )
    client = only_client(document)
    # THEN the same streams are named, with per-partition fetcher lags, and settings from the file
    assert_stall_named(client, stalled)
    assert all(row["fetcher_source"] for row in client["partitions"])
    sources = {s["name"]: s["source"] for s in client["settings"]}
    assert sources["queued.max.message.chunks"] == f"consumer config {config}"


def test_prometheus_rule_style_names_and_a_saved_file(
    stalled: Deployment, agent: AgentDouble, tmp_path: Path
) -> None:
    # GIVEN the exporter configured with its Kafka 0.8.2 example rules: per-partition fetcher lag
    # (kafka.server) is not exported, and the FetchQueueSize label reads "c, topic=t, threadId=0"
    agent.exposition = "rules"
    page = exporter_rules(agent.reading)  # type: ignore[arg-type]
    assert 'client="' + stalled.group.group + ", topic=" in page
    saved = tmp_path / "metrics.txt"
    saved.write_text(page)
    for source in (f"{agent.base}/metrics", str(saved)):
        # WHEN kafkadiag reads it from the URL and from a saved file
        document = maxlag(["--prometheus", source, *stalled.cli_args()], expect=ExitCode.FINDINGS)
        client = only_client(document)
        # THEN the queues are still found and the stall named; partitions come from the checker only
        assert_stall_named(client, stalled)
        assert all(row["fetcher_lag"] is None for row in client["partitions"])
        assert client["max_lag"] is not None


def test_prometheus_kafka_0_8_1_default_export(cluster, start) -> None:
    # GIVEN a consumer with Kafka 0.8.1's quoted names behind the exporter's default export
    deployment = deploy(cluster, start, SETTINGS, extra_args=["--metric-names", "0.8.1"])
    drive_to_stall(deployment)
    page = exporter_default(jmx.read_local_jvm(deployment.pid, timeout_s=20))
    assert '_kafka_consumer_ConsumerFetcherManager_Value{name="\\"' in page
    # WHEN the page is understood
    beans = beans_from_samples(parse_exposition(page))
    from kafkadiag.collect.jmx.kafka import extract_clients
    from kafkadiag.consumer_metrics import MetricsReading

    (client,) = extract_clients(MetricsReading("prometheus", "page", 0, 0.0, beans=tuple(beans)))
    # THEN the quoted names give back client, queues and partitions
    assert client.client_id == deployment.group.group and client.naming == "kafka-0.8.1"
    assert [(q.thread_id, q.size) for q in client.queues] == [("0", 2), ("1", 0)]
    assert [p.partition for p in client.partitions] == [0, 1]


def test_prometheus_unreachable_missing_file_and_not_an_exposition(tmp_path: Path) -> None:
    port = free_port()
    code, _, err = run(["maxlag", "--prometheus", f"http://127.0.0.1:{port}/metrics", "--timeout", "3"])
    assert code == ExitCode.INPUT_UNREADABLE and "cannot GET" in err
    code, _, err = run(["maxlag", "--prometheus", str(tmp_path / "missing.txt")])
    assert code == ExitCode.INPUT_UNREADABLE and "cannot read" in err and "curl -o FILE URL" in err
    junk = tmp_path / "junk.txt"
    junk.write_text("<html>hello</html>\n")
    code, _, err = run(["maxlag", "--prometheus", str(junk)])
    assert code == ExitCode.INPUT_UNREADABLE and "no Prometheus samples" in err
