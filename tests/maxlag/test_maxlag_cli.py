"""`kafkadiag maxlag` end to end: the reproducer JVM read by PID and over remote JMX, checker lag
from the real ZooKeeper (offsets, owners) and the real broker (high watermarks).

What is real: the JVM and its platform MBean server, the MBean names and the way their values move
(the reproducer's fetcher and stream threads run the old consumer's algorithm over bounded
LinkedBlockingQueues), jcmd, the JDK's JMX agents, ZooKeeper, the Kafka-protocol broker and the
records in it. What is simulated: the reproducer does not fetch from the broker; the test tells it
each partition's high watermark after producing the same records into the broker.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest

from kafkadiag.exitcodes import ExitCode
from tests.infra.cli import partitions_of, run, run_json
from tests.infra.servers import free_port
from tests.maxlag.scenario import Deployment, all_committed, deploy
from tests.maxlag.test_jmx_remote import remote_jmx_options

INTERVAL_MS = 200
# 1500 bytes per fetch / 100-byte records: at most 15 records per chunk.
SETTINGS = {
    "queued.max.message.chunks": "2",
    "fetch.message.max.bytes": "1500",
    "auto.commit.interval.ms": str(INTERVAL_MS),
}


def maxlag(args: list[str], expect: int) -> dict[str, Any]:
    code, out, err = run(["maxlag", *args, "--format", "json"])
    assert code == expect, f"exit {code}, expected {expect}\nstdout:\n{out}\nstderr:\n{err}"
    document: dict[str, Any] = json.loads(out)
    assert document["schema"] == "kafkadiag.maxlag" and document["version"] == 1
    return document


def only_client(document: dict[str, Any]) -> dict[str, Any]:
    (client,) = document["clients"]
    return client


def catch_up(deployment: Deployment, records: int = 10) -> None:
    deployment.produce({p: records for p in range(deployment.partitions)})
    deployment.wait_for(all_committed(deployment), "everything consumed and committed")
    deployment.sync_commits()


def drive_to_stall(deployment: Deployment) -> dict[str, Any]:
    """Stream 0's handler stops; records keep coming until its queue is full and the fetcher is
    blocked in put(); then two more rounds arrive that the blocked fetcher never sees."""
    catch_up(deployment)
    deployment.consumer.command(f"stall {deployment.topic} 0")
    for _ in range(10):
        deployment.produce({0: 5, 1: 5})

        def fetched_or_blocked(status: dict[str, Any]) -> bool:
            first = status["partitions"][0]
            return first["fetch_offset"] == first["log_end"] or status["queues"][0]["fetcher_blocked_in_put"]

        status = deployment.wait_for(fetched_or_blocked, "the fetcher took the round or blocked")
        if status["queues"][0]["fetcher_blocked_in_put"]:
            break
    else:
        raise AssertionError(f"the fetcher never blocked: {deployment.status()}")
    deployment.produce({0: 5, 1: 5})
    deployment.produce({0: 5, 1: 5})
    deployment.settle_commits(INTERVAL_MS)
    status = deployment.status()
    assert status["queues"][0]["size"] == 2 and status["queues"][1]["size"] == 0, status
    return status


def assert_partition_numbers(client: dict[str, Any], deployment: Deployment, status: dict[str, Any]) -> None:
    """Every number in the report is the real one: fetcher lag from the JVM, checker lag from the
    broker's high watermark minus the offset in ZooKeeper, gap = their difference."""
    by_partition = {entry["partition"]: entry for entry in status["partitions"]}
    for row in client["partitions"]:
        truth = by_partition[row["partition"]]
        assert row["fetcher_lag"] == truth["fetcher_lag"], row
        assert row["high_watermark"] == deployment.produced[row["partition"]], row
        assert row["committed_offset"] == truth["committed_offset"], row
        assert row["checker_lag"] == deployment.produced[row["partition"]] - truth["committed_offset"], row
        assert row["gap"] == row["checker_lag"] - row["fetcher_lag"], row


@pytest.mark.parametrize(
    "source, naming",
    [("pid", "0.8.2"), ("jmx", "0.8.2"), ("pid", "0.8.1")],
    ids=["by-pid", "over-remote-jmx", "kafka-0.8.1-names"],
)
def test_stalled_stream_is_named_full_and_the_starving_one_empty(
    cluster, start, source: str, naming: str
) -> None:
    # GIVEN a consumer whose stream 0 stopped draining: its queue full, the fetcher blocked in put()
    port = free_port()
    deployment = deploy(
        cluster,
        start,
        SETTINGS,
        extra_args=["--metric-names", naming],
        jvm_options=remote_jmx_options(port) if source == "jmx" else [],
    )
    status = drive_to_stall(deployment)
    metrics = ["--pid", str(deployment.pid)] if source == "pid" else ["--jmx", f"127.0.0.1:{port}"]
    # WHEN kafkadiag compares its metrics with the checker lag
    document = maxlag([*metrics, *deployment.cli_args()], expect=ExitCode.FINDINGS)
    client = only_client(document)
    # THEN the verdict is streams-not-draining, the full queue and the starving one named
    assert client["verdict"] == "streams-not-draining" and client["rule"] == "KD701", client["summary"]
    consumer = deployment.consumer.consumer_id
    assert [
        (s["thread_id"], s["state"], s["queue_size"], s["partitions"], s["owner"]) for s in client["streams"]
    ] == [
        ("0", "full", 2, [0], f"{consumer}-0"),
        ("1", "empty", 0, [1], f"{consumer}-1"),
    ]
    assert f"{deployment.topic} thread 0 (partitions 0)" in client["summary"]
    assert f"empty (starving): {deployment.topic} thread 1" in client["summary"]
    # ... MaxLag stayed small (frozen at the last fetch) while the committed offsets fell behind
    assert client["max_lag"] is not None and client["max_lag"] < 15
    assert client["checker_lag_total"] >= 2 * 10
    assert_partition_numbers(client, deployment, status)
    assert client["group"] == deployment.group.group and client["complete"]
    assert "jstack -l PID" in client["remedy"] and f"{consumer}-0" in client["remedy"]


def test_stalled_table_names_the_stream_for_people(cluster, start) -> None:
    deployment = deploy(cluster, start, SETTINGS)
    drive_to_stall(deployment)
    code, out, err = run(["maxlag", "--pid", str(deployment.pid), *deployment.cli_args()])
    assert code == ExitCode.FINDINGS, out + err
    # the verdict is the catalogue's rule, by its code, so `kafkadiag explain KD701` tells the rest
    title = "A full stream queue blocks the fetcher, whose MaxLag then stays small"
    assert f"KD701 {title} -- client " in out
    assert "KD701 STREAMS-NOT-DRAINING" in out
    consumer = deployment.consumer.consumer_id
    assert re.search(rf"{deployment.topic} +0 +2 +2 +full +0 +{consumer}-0\n", out), out
    assert re.search(rf"{deployment.topic} +1 +0 +2 +empty +1 +{consumer}-1\n", out), out
    # (what to do is prose, folded at the width: read with its line breaks as spaces)
    assert "What to do" in out and "jstack -l PID" in " ".join(out.split())


def test_healthy_consumer_and_the_bound_computed_from_its_real_settings(
    cluster, start, tmp_path: Path
) -> None:
    # GIVEN a caught-up consumer started with -Dqueued.max.message.chunks=3 -Dfetch.message.max.bytes=1500
    settings = {**SETTINGS, "queued.max.message.chunks": "3"}
    deployment = deploy(cluster, start, settings)
    catch_up(deployment, 30)
    # WHEN kafkadiag compares
    document = maxlag(["--pid", str(deployment.pid), *deployment.cli_args()], expect=ExitCode.OK)
    client = only_client(document)
    # THEN both lags are zero and the verdict is healthy
    assert client["verdict"] == "healthy" and client["healthy"] and document["healthy"]
    assert client["rule"] is None and client["title"] == "Healthy: fetcher caught up, streams draining"
    assert (client["max_lag"], client["fetcher_lag_total"], client["checker_lag_total"]) == (0, 0, 0)
    # ... and the bound comes from the JVM's own settings: 2 streams x 3 chunks x 1500 bytes = 9000
    # queued; 2 x (3 + 1) + 1 fetcher = 9 chunks = 13500 bytes = 135 records of 100 bytes
    bound = client["bound"]
    assert (bound["streams"], bound["queued_max_message_chunks"], bound["fetch_message_max_bytes"]) == (
        2,
        3,
        1500,
    )
    assert (bound["queued_bytes"], bound["in_flight_chunks"], bound["in_flight_bytes"]) == (9000, 9, 13500)
    assert (bound["average_record_bytes"], bound["in_flight_records"]) == (100.0, 135)
    assert bound["auto_commit_interval_ms"] == INTERVAL_MS
    assert bound["records"] == 135 + bound["uncommitted_records"]
    sources = {s["name"]: (s["value"], s["source"]) for s in client["settings"]}
    assert sources["queued.max.message.chunks"] == ("3", "JVM system property")
    assert sources["fetch.message.max.bytes"] == ("1500", "JVM system property")
    assert client["lag_threshold"] == 15  # one fetch: 1500 bytes / 100 bytes per record

    # WHEN the user's consumer config file says otherwise, it wins and says where it came from
    config = tmp_path / "consumer.properties"
    config.write_text("queued.max.message.chunks=5\nfetch.message.max.bytes=3000\n")
    document = maxlag(
        ["--pid", str(deployment.pid), *deployment.cli_args(), "--consumer-config", str(config)],
        expect=ExitCode.OK,
    )
    bound = only_client(document)["bound"]
    # 2 x (5 + 1) + 1 = 13 chunks x 3000 bytes = 39000 bytes = 390 records
    assert (bound["in_flight_chunks"], bound["in_flight_bytes"], bound["in_flight_records"]) == (
        13,
        39000,
        390,
    )
    sources = {s["name"]: s["source"] for s in only_client(document)["settings"]}
    assert sources["queued.max.message.chunks"] == f"consumer config {config}"


def test_slow_fetcher_is_fetch_bound_with_empty_queues(cluster, start) -> None:
    # GIVEN a caught-up consumer whose fetch requests then take 2 s each (15 records per fetch)
    deployment = deploy(cluster, start, SETTINGS)
    catch_up(deployment)
    deployment.consumer.command("slow-fetch 2000")
    deployment.produce({0: 150, 1: 150})
    status = deployment.wait_for(
        lambda s: all(10 < p["fetch_offset"] and 15 < p["fetcher_lag"] for p in s["partitions"]),
        "one slow fetch done, still far behind",
    )
    deployment.settle_commits(INTERVAL_MS)
    # WHEN kafkadiag compares
    document = maxlag(["--pid", str(deployment.pid), *deployment.cli_args()], expect=ExitCode.FINDINGS)
    client = only_client(document)
    # THEN it is fetch-bound: MaxLag above one fetch, no queue full, the gap small
    assert client["verdict"] == "fetch-bound", client["summary"]
    assert client["max_lag"] > client["lag_threshold"] == 15
    assert all(s["state"] != "full" for s in client["streams"])
    assert all(row["gap"] is not None and row["gap"] <= 15 for row in client["partitions"]), client[
        "partitions"
    ]
    assert status["fetches"] >= 1 and "fetch.message.max.bytes=1500" in client["remedy"]


def test_stopped_fetcher_is_stale(cluster, start) -> None:
    # GIVEN a consumer whose fetcher shut down (closeAllFetchers); records keep arriving
    deployment = deploy(cluster, start, SETTINGS)
    catch_up(deployment)
    deployment.consumer.command("stop-fetcher")
    deployment.produce({0: 100, 1: 100})
    deployment.settle_commits(INTERVAL_MS)
    # WHEN kafkadiag compares
    document = maxlag(["--pid", str(deployment.pid), *deployment.cli_args()], expect=ExitCode.FINDINGS)
    client = only_client(document)
    # THEN the fetcher metrics are stale: MaxLag 0, no fetcher thread, committed offsets 200 behind
    assert client["verdict"] == "fetcher-stale", client["summary"]
    assert client["max_lag"] == 0 and client["fetcher_threads"] == []
    assert client["checker_lag_total"] == 200 and client["gap_total"] == 200
    assert "no ConsumerFetcherThread-" in client["summary"]
    assert "more than the consumer can hold" in client["summary"]


def test_fetcher_blind_to_new_records_is_stale_by_the_bound(cluster, start) -> None:
    # GIVEN a running fetcher that never sees the records the broker got (it reads a stale log)
    deployment = deploy(cluster, start, SETTINGS)
    catch_up(deployment)
    deployment.produce({0: 150, 1: 150}, tell_consumer=False)
    deployment.settle_commits(INTERVAL_MS)
    # WHEN kafkadiag compares
    document = maxlag(["--pid", str(deployment.pid), *deployment.cli_args()], expect=ExitCode.FINDINGS)
    client = only_client(document)
    # THEN its fetcher thread runs and reports lag 0, but the gap exceeds what the consumer can hold
    assert client["verdict"] == "fetcher-stale", client["summary"]
    assert len(client["fetcher_threads"]) == 1 and client["max_lag"] == 0
    assert client["gap_total"] == 300 > client["bound"]["records"]


def test_a_jvm_without_a_consumer_is_absent(cluster, start, tmp_path: Path) -> None:
    # GIVEN a real JVM that runs no Kafka consumer, and the group it was supposed to serve
    import subprocess
    import sys

    deployment = deploy(cluster, start, SETTINGS)
    catch_up(deployment)
    source = tmp_path / "Idle.java"
    source.write_text(
        "public class Idle { public static void main(String[] a) throws Exception {"
        ' System.out.println("READY"); Thread.sleep(600000); } }'
    )
    idle = subprocess.Popen(["java", "-Xmx32m", str(source)], stdout=subprocess.PIPE, text=True)
    try:
        assert idle.stdout is not None and idle.stdout.readline().strip() == "READY"
        # WHEN kafkadiag reads that JVM for the group
        document = maxlag(["--pid", str(idle.pid), *deployment.cli_args()], expect=ExitCode.FINDINGS)
        # THEN the group's client is reported absent from the JVM's metrics
        client = only_client(document)
        assert client["client_id"] == deployment.group.group
        assert client["verdict"] == "fetcher-absent", client["summary"]
    finally:
        idle.kill()
        idle.wait()
    del sys


def test_metrics_only_without_a_cluster_exits_by_the_verdict(start) -> None:
    from tests.infra.workload import unique

    consumer = start(unique("alone"), ["orders:1:1"], SETTINGS, ["--hw", "orders:0:5"])
    consumer.wait_for(lambda s: s["partitions"][0]["committed_offset"] == 5, "committed")
    document = maxlag(["--pid", str(consumer.pid)], expect=ExitCode.OK)
    client = only_client(document)
    assert client["verdict"] == "healthy" and client["complete"] and client["checker_lag_total"] is None
    assert any("--zookeeper" in note for note in client["notes"])


def test_usage_and_unreadable_sources_exit_with_what_to_do(cluster, start) -> None:
    # Two sources: a usage error (2)
    code, _, err = run(["maxlag", "--pid", "1", "--jmx", "127.0.0.1:1"])
    assert code == ExitCode.USAGE and "exactly one metrics source" in err
    # No source at all
    code, _, err = run(["maxlag"])
    assert code == ExitCode.USAGE and "--pid PID" in err
    # A PID without a process (3) with what to do
    code, _, err = run(["maxlag", "--pid", "999999999"])
    assert code == ExitCode.INPUT_UNREADABLE and "no process with PID 999999999" in err and "jcmd -l" in err
    # A remote JMX port nothing listens on (3)
    port = free_port()
    code, _, err = run(["maxlag", "--jmx", f"127.0.0.1:{port}", "--timeout", "5"])
    assert code == ExitCode.INPUT_UNREADABLE and "cannot connect" in err and "what to do" in err
    # Metrics readable, ZooKeeper unreachable: the fetcher side is reported, the gap is missing (3)
    deployment = deploy(cluster, start, SETTINGS)
    catch_up(deployment)
    dead = free_port()
    code, out, err = run(
        [
            "maxlag",
            "--pid",
            str(deployment.pid),
            "--zookeeper",
            f"127.0.0.1:{dead}",
            "--group",
            "g",
            "--timeout",
            "2",
        ]
    )
    assert code == ExitCode.INPUT_UNREADABLE, out + err
    assert "ZooKeeper" in err and "what to do" in err and "the comparison is incomplete" in err


def test_attach_failures_exit_3_with_what_to_do(start) -> None:
    import os
    import subprocess
    import sys

    from tests.infra.workload import unique

    # Attach disabled (-XX:+DisableAttachMechanism)
    disabled = start(
        unique("noattach"), ["orders:1:1"], SETTINGS, jvm_options=["-XX:+DisableAttachMechanism"]
    )
    code, _, err = run(["maxlag", "--pid", str(disabled.pid)])
    assert code == ExitCode.INPUT_UNREADABLE and "attach is disabled" in err and "--jolokia" in err
    # Another user's JVM: kafkadiag run as nobody against root's JVM, as a whole process
    owned = start(unique("rootjvm"), ["orders:1:1"], SETTINGS)
    completed = subprocess.run(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]
        + [sys.executable, "-m", "kafkadiag", "maxlag", "--pid", str(owned.pid)],
        capture_output=True,
        text=True,
        timeout=120,
        cwd="/tmp",
        env={**os.environ, "HOME": "/tmp", "PYTHONPATH": str(Path(__file__).resolve().parents[2])},
    )
    assert completed.returncode == ExitCode.INPUT_UNREADABLE, completed.stderr
    assert "runs as user root, kafkadiag as nobody" in completed.stderr
    assert "kafkadiag: what to do: " in completed.stderr and "sudo -u USER" in completed.stderr
    # The JVM goes away in the middle of the read
    dying = start(unique("dying"), ["orders:1:1"], SETTINGS)
    dying.command("die-on-read")
    code, _, err = run(["maxlag", "--pid", str(dying.pid)])
    assert code == ExitCode.INPUT_UNREADABLE and "broke during the read" in err and "exited" in err
    # --no-start-agent on a JVM whose agent does not run
    idle = start(unique("noagent"), ["orders:1:1"], SETTINGS)
    code, _, err = run(["maxlag", "--pid", str(idle.pid), "--no-start-agent"])
    assert code == ExitCode.INPUT_UNREADABLE and "--no-start-agent forbids" in err


def test_lag_with_a_metrics_source_shows_the_fetcher_beside_the_checker_lag(cluster, start) -> None:
    # GIVEN a consumer whose stream 0 stopped draining
    deployment = deploy(cluster, start, SETTINGS)
    status = drive_to_stall(deployment)
    topic, group = deployment.topic, deployment.group.group
    by_partition = {entry["partition"]: entry for entry in status["partitions"]}
    # WHEN `kafkadiag lag` is given the consumer's PID as a metrics source
    document = run_json(["lag", *deployment.cli_args(), "--pid", str(deployment.pid)])
    # THEN each partition carries the fetcher's numbers next to the checker lag, with the full
    # queue named on the stalled stream's partition and the empty one on the starving partition
    assert document["schema"] == "kafkadiag.lag" and not document["partial"]
    rows = partitions_of(document, group)
    for partition in (0, 1):
        row = rows[(topic, partition)]
        fetcher = row["fetcher"]
        assert fetcher["client_id"] == group and fetcher["verdict"] == "streams-not-draining"
        assert fetcher["fetcher_lag"] == by_partition[partition]["fetcher_lag"]
        assert row["lag"] == deployment.produced[partition] - by_partition[partition]["committed_offset"]
        assert fetcher["gap"] == row["lag"] - fetcher["fetcher_lag"]
        assert fetcher["stream"] == f"{topic}/{partition}"
    assert (rows[(topic, 0)]["fetcher"]["queue_size"], rows[(topic, 0)]["fetcher"]["queue_capacity"]) == (
        2,
        2,
    )
    assert rows[(topic, 1)]["fetcher"]["queue_size"] == 0
    (client,) = document["fetcher"]["clients"]
    assert client["verdict"] == "streams-not-draining" and not document["fetcher"]["healthy"]
    # AND the table shows the same columns and the verdict under the group's partitions
    code, table, err = run(["lag", *deployment.cli_args(), "--pid", str(deployment.pid)])
    assert code == ExitCode.OK, err
    lines = [line.strip() for line in table.splitlines()]
    header = next(line for line in lines if line.startswith("TOPIC"))
    assert all(column in header for column in ("FETCHER-LAG", "GAP", "STREAM", "QUEUE", "VERDICT"))
    stalled = next(line for line in lines if line.startswith(f"{topic} ") and " 2/2 " in line)
    assert f"{topic}/0" in stalled and "streams-not-draining" in stalled
    assert "KD701 A full stream queue blocks the fetcher" in table
    assert f"client {group} (group {group})" in table
    # AND the Prometheus exposition carries the fetcher gauges
    code, exposition, err = run(
        ["lag", *deployment.cli_args(), "--pid", str(deployment.pid), "--format", "prometheus"]
    )
    assert code == ExitCode.OK, err
    samples = _exposition_samples(exposition)
    queue = samples["kafkadiag_partition_stream_queue_chunks"]
    assert queue[(("group", group), ("partition", "0"), ("source", "zookeeper"), ("topic", topic))] == "2"
    verdicts = samples["kafkadiag_fetcher_verdict"]
    assert verdicts[(("client_id", group), ("group", group), ("verdict", "streams-not-draining"))] == "1"


def _exposition_samples(exposition: str) -> dict[str, dict[tuple[tuple[str, str], ...], str]]:
    """Prometheus text as name -> {labels without cluster, sorted: value}."""
    samples: dict[str, dict[tuple[tuple[str, str], ...], str]] = {}
    for match in re.finditer(r"^(\w+)\{(.*)\} (\S+)$", exposition, re.MULTILINE):
        labels = tuple(sorted(kv for kv in re.findall(r'(\w+)="([^"]*)"', match[2]) if kv[0] != "cluster"))
        samples.setdefault(match[1], {})[labels] = match[3]
    return samples


def test_lag_without_a_metrics_source_has_no_fetcher_columns_and_a_dead_source_is_flagged(
    cluster, start
) -> None:
    # GIVEN a healthy consumer
    deployment = deploy(cluster, start, SETTINGS)
    catch_up(deployment)
    # WHEN lag runs without a metrics source THEN no fetcher column or object is there
    plain = run_json(["lag", *deployment.cli_args()])
    assert plain["fetcher"] is None
    assert all(row["fetcher"] is None for row in partitions_of(plain, deployment.group.group).values())
    code, table, _ = run(["lag", *deployment.cli_args()])
    assert code == ExitCode.OK and "FETCHER-LAG" not in table
    # WHEN the metrics source cannot be read (no JVM at that PID) THEN the lag is still reported
    # whole, the problem is named with what to do, and the exit code says something was unreadable
    gone = deployment.pid
    deployment.consumer.stop()
    code, out, err = run(["lag", *deployment.cli_args(), "--pid", str(gone), "--format", "json"])
    assert code == ExitCode.INPUT_UNREADABLE, err
    document = json.loads(out)
    assert document["fetcher"] is None and document["partial"]
    assert any(
        error.startswith("fetcher metrics not read:") and str(gone) in error for error in document["errors"]
    )
    assert all(row["lag"] is not None for row in partitions_of(document, deployment.group.group).values())
    assert "fetcher metrics not read" in err
    # AND metrics options without a source are a usage error
    code, _, err = run(["lag", *deployment.cli_args(), "--lag-threshold", "5"])
    assert code == ExitCode.USAGE and "need a metrics source" in err
