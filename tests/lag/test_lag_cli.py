"""`kafkadiag lag` and `kafkadiag check` end to end on real servers: the table, the JSON schema,
the Prometheus exposition, samples, --record and `lag history`, thresholds and JUnit."""

from __future__ import annotations

import datetime
import json
import re
import socket
import time
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from kafkadiag.exitcodes import ExitCode
from tests.infra import workload
from tests.infra.cli import group_of, partitions_of, run, run_json
from tests.infra.servers import ServerProcess
from tests.infra.workload import Cluster

PARTITION_KEYS = {
    "topic", "partition", "committed_offset", "high_watermark", "log_start_offset", "lag", "owner", "leader",
    "last_progress_ms", "since_progress_s", "since_progress_at_least", "status", "consumption_rate",
    "production_rate", "time_lag_s", "catch_up_s", "complete", "partial", "problems", "fetcher",
    "commits_without_lag", "owner_client_id", "owner_host",
}  # fmt: skip
GROUP_KEYS = {
    "group", "source", "exists", "state", "status", "partial", "members", "total_lag", "max_lag",
    "consumption_rate", "production_rate", "catch_up_s", "errors", "findings", "topics", "partitions",
}  # fmt: skip


def utc(milliseconds: int) -> str:
    moment = datetime.datetime.fromtimestamp(milliseconds / 1000, tz=datetime.timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def old_and_new_groups(cluster: Cluster) -> tuple[str, str, str]:
    topic = cluster.topic(2, {0: 10, 1: 4})
    old = cluster.old_group()
    consumer = old.join({topic: 1})
    old.own(workload.range_assignment({topic: 2}, {consumer: {topic: 1}}))
    old.commit({(topic, 0): 6, (topic, 1): 4})
    new = workload.unique("new")
    workload.commit_offsets_without_joining(cluster.bootstrap, new, {(topic, 0): 1, (topic, 1): 1})
    return topic, old.group, new


def test_json_follows_the_documented_schema(cluster: Cluster) -> None:
    topic, old, new = old_and_new_groups(cluster)
    document = run_json(
        [
            "lag",
            "--zookeeper",
            cluster.zookeeper,
            "--bootstrap-server",
            cluster.bootstrap,
            "--group",
            old,
            "--group",
            new,
        ]
    )
    assert document["schema"] == "kafkadiag.lag" and document["version"] == 2
    assert set(document) == {
        "schema", "version", "taken_at", "taken_at_ms", "duration_ms", "sources", "samples", "window_s",
        "partial", "errors", "unreachable", "stats", "groups", "fetcher",
    }  # fmt: skip
    assert document["unreachable"] == []
    assert document["sources"] == {"zookeeper": cluster.zookeeper, "bootstrap_servers": cluster.bootstrap}
    assert document["fetcher"] is None  # no metrics source given
    for group in document["groups"]:
        assert set(group) == GROUP_KEYS
        for partition in group["partitions"]:
            assert set(partition) == PARTITION_KEYS
    assert group_of(document, old)["source"] == "zookeeper" and group_of(document, new)["source"] == "kafka"
    assert partitions_of(document, old)[(topic, 0)]["lag"] == 4
    assert partitions_of(document, new)[(topic, 0)]["lag"] == 9
    assert group_of(document, old)["topics"] == [
        {"topic": topic, "partitions": 2, "total_lag": 4, "max_lag": 4, "unknown": 0,
         "consumption_rate": None,
         "production_rate": None}
    ]  # fmt: skip


def test_table_shows_every_partition_and_totals(cluster: Cluster) -> None:
    topic, old, new = old_and_new_groups(cluster)
    code, out, err = run(
        [
            "lag",
            "--zookeeper",
            cluster.zookeeper,
            "--bootstrap-server",
            cluster.bootstrap,
            "--group",
            old,
            "--group",
            new,
        ]
    )
    assert code == ExitCode.OK, err
    assert f"Group {old} (zookeeper, Active, 1 member(s))" in out
    assert f"Group {new} (kafka, Empty, 0 member(s))" in out
    assert re.search(rf"{re.escape(topic)}\s+0\s+6\s+10\s+4\s+0\s+{re.escape(old)}_", out), out
    assert re.search(rf"{re.escape(topic)}\s+total\s+12", out), out
    assert err == ""


def test_prometheus_exposition_for_the_textfile_collector(cluster: Cluster) -> None:
    topic, old, new = old_and_new_groups(cluster)
    code, out, err = run(
        ["lag", "--zookeeper", cluster.zookeeper, "--bootstrap-server", cluster.bootstrap, "--group", old,
         "--group", new, "--format", "prometheus"]
    )  # fmt: skip
    assert code == ExitCode.OK, err
    sample = re.compile(r'^[a-z_]+(\{([a-z_]+="([^"\\]|\\.)*",?)*\})? -?[0-9.e+-]+$')
    for line in out.splitlines():
        assert line.startswith("# HELP ") or line.startswith("# TYPE ") or sample.match(line), line
    cluster_label = f'cluster="{cluster.bootstrap}"'
    labels = f'{cluster_label},group="{old}",source="zookeeper",topic="{topic}",partition="0"'
    assert f"kafkadiag_partition_lag_records{{{labels}}} 4" in out
    assert f"kafkadiag_partition_high_watermark_offset{{{labels}}} 10" in out
    assert f'kafkadiag_group_lag_records{{{cluster_label},group="{new}",source="kafka"}} 12' in out
    assert f"kafkadiag_partial{{{cluster_label}}} 0" in out
    assert "# TYPE kafkadiag_partition_lag_records gauge" in out


def test_samples_give_rates_and_burrow_statuses(cluster: Cluster) -> None:
    # GIVEN a group whose offsets do not move while it lags (old and new consumer alike)
    topic, old, new = old_and_new_groups(cluster)
    document = run_json(
        ["lag", "--zookeeper", cluster.zookeeper, "--bootstrap-server", cluster.bootstrap, "--group", old,
         "--group", new, "--samples", "3", "--interval", "0.3"]
    )  # fmt: skip
    assert document["samples"] == 3 and document["window_s"] > 0.5
    # THEN both stopped committing while they lag: STOP, the old consumer from its offset znode's
    # mtime (last progress), the new one from the offset that no sample saw move
    assert partitions_of(document, old)[(topic, 0)]["status"] == "STOP"
    assert partitions_of(document, old)[(topic, 1)]["status"] == "OK"  # no lag
    assert partitions_of(document, new)[(topic, 0)]["status"] == "STOP"
    assert group_of(document, old)["status"] == "ERR" and group_of(document, new)["status"] == "ERR"
    assert partitions_of(document, new)[(topic, 0)]["consumption_rate"] == 0.0
    assert partitions_of(document, new)[(topic, 0)]["catch_up_s"] is None


def test_record_then_history_replays_the_evaluation(cluster: Cluster, tmp_path: Path) -> None:
    # GIVEN three recorded snapshots of a group that consumes faster than its topic grows
    topic = cluster.topic(1, {0: 20})
    group = workload.unique("catching-up")
    record = tmp_path / "record"
    for committed, produced in ((2, 0), (10, 2), (18, 2)):
        workload.produce(cluster.bootstrap, topic, {0: produced})
        workload.commit_offsets_without_joining(cluster.bootstrap, group, {(topic, 0): committed})
        code, out, err = run(
            ["lag", "--bootstrap-server", cluster.bootstrap, "--group", group, "--record", str(record)]
        )
        assert code == ExitCode.OK, err
    lines = (record / "lag-snapshots.jsonl").read_text().splitlines()
    assert len(lines) == 3 and all(json.loads(line)["schema"] == "kafkadiag.lag.snapshot" for line in lines)
    # WHEN they are evaluated offline
    document = run_json(["lag", "history", str(record)])
    # THEN lag went 18, 12, 6: decreasing, OK; the rates come from the recorded times
    entry = partitions_of(document, group)[(topic, 0)]
    assert document["samples"] == 3
    assert entry["lag"] == 6 and entry["status"] == "OK"
    assert entry["consumption_rate"] > entry["production_rate"] > 0
    assert entry["catch_up_s"] is not None
    # and a damaged line is skipped with a warning, not fatal
    with open(record / "lag-snapshots.jsonl", "a") as handle:
        handle.write("{half a line\n")
    code, out, err = run(["lag", "history", str(record), "--format", "json"])
    assert code == ExitCode.OK and "skipped, not a recorded snapshot" in err
    code, out, err = run(["lag", "history", str(tmp_path / "nothing")])
    assert code == ExitCode.INPUT_UNREADABLE and "kafkadiag lag --record" in err


def test_history_as_of_a_time_and_with_an_allowed_lag(cluster: Cluster, tmp_path: Path) -> None:
    # GIVEN three recorded snapshots of a group that stopped at offset 5 while its topic grew
    topic = cluster.topic(1, {0: 8})
    group = workload.unique("stalled")
    workload.commit_offsets_without_joining(cluster.bootstrap, group, {(topic, 0): 5})
    record = tmp_path / "record"
    for produced in (0, 1, 1):
        workload.produce(cluster.bootstrap, topic, {0: produced})
        code, out, err = run(
            ["lag", "--bootstrap-server", cluster.bootstrap, "--group", group, "--record", str(record)]
        )
        assert code == ExitCode.OK, err
    times = [
        json.loads(line)["taken_at_ms"] for line in (record / "lag-snapshots.jsonl").read_text().splitlines()
    ]
    # WHEN evaluated as of a moment between the second and third snapshot (ISO 8601, UTC)
    between = datetime.datetime.fromtimestamp((times[1] + times[2]) / 2000, tz=datetime.timezone.utc)
    document = run_json(["lag", "history", str(record), "--at", between.isoformat().replace("+00:00", "Z")])
    # THEN only the first two count: lag 3 -> 4 with the offset unmoved, STOP
    entry = partitions_of(document, group)[(topic, 0)]
    assert document["samples"] == 2 and entry["lag"] == 4 and entry["status"] == "STOP"
    # and it is the evaluation as of the second snapshot, however long after it the time is
    at_second = run_json(["lag", "history", str(record), "--at", utc(times[1])])
    assert partitions_of(at_second, group) == partitions_of(document, group)
    # the same moment written in another zone is the same moment
    in_paris = between.astimezone(datetime.timezone(datetime.timedelta(hours=1))).isoformat()
    as_of_paris_time = run_json(["lag", "history", str(record), "--at", in_paris])
    assert partitions_of(as_of_paris_time, group) == partitions_of(document, group)
    # WHEN a lag of 5 is allowed THEN the whole recording (lag 5 at the end) is OK
    document = run_json(["lag", "history", str(record), "--allowed-lag", "5"])
    assert partitions_of(document, group)[(topic, 0)]["status"] == "OK"
    assert partitions_of(run_json(["lag", "history", str(record)]), group)[(topic, 0)]["status"] == "STOP"
    # a time before the recording: exit 3 with its span; not a time, or a negative lag: usage errors
    code, out, err = run(["lag", "history", str(record), "--at", "2001-01-01T00:00:00Z"])
    assert code == ExitCode.INPUT_UNREADABLE, err
    assert f"the recording spans {utc(times[0])} to {utc(times[2])}" in err.replace("\n", " "), err
    code, out, err = run(["lag", "history", str(record), "--at", "yesterday"])
    assert code == ExitCode.USAGE and "2026-11-25T03:00:00Z" in err
    code, out, err = run(["lag", "history", str(record), "--allowed-lag", "-1"])
    assert code == ExitCode.USAGE


def test_check_exit_codes_and_junit(cluster: Cluster, broker: ServerProcess, tmp_path: Path) -> None:
    topic, old, new = old_and_new_groups(cluster)
    base = ["check", "--zookeeper", cluster.zookeeper, "--bootstrap-server", cluster.bootstrap,
            "--group", old,
            "--group", new]  # fmt: skip
    # healthy: lags 4 and 12 under 100
    code, out, err = run([*base, "--max-lag", "100"])
    assert code == ExitCode.OK, (out, err)
    assert "healthy: 2 healthy, 0 unhealthy" in out
    # unhealthy by a config rule for the new group's topic, with a JUnit report for CI
    config = tmp_path / "check.toml"
    config.write_text(
        f'[defaults]\nmax_lag = 100\n\n[[rule]]\ngroup = "new-*"\ntopic = "{topic}"\nmax_lag = 5\n'
    )
    junit = tmp_path / "reports" / "lag.xml"
    code, out, err = run([*base, "--config", str(config), "--format", "json", "--junit-xml", str(junit)])
    assert code == ExitCode.FINDINGS, (out, err)
    document = json.loads(out)
    assert document["schema"] == "kafkadiag.check" and document["verdict"] == "unhealthy"
    verdicts = {entry["group"]: entry for entry in document["groups"]}
    assert verdicts[old]["verdict"] == "healthy"
    assert verdicts[new]["verdict"] == "unhealthy"
    assert [v["message"] for v in verdicts[new]["violations"]] == [f"{topic}/0: lag 9 > 5"]
    suite = ElementTree.parse(junit).getroot().find("testsuite")
    assert suite is not None and suite.get("tests") == "2" and suite.get("failures") == "1"
    cases = {case.get("name"): case for case in suite.findall("testcase")}
    failure = cases[new].find("failure")
    assert failure is not None and f"{topic}/0: lag 9 > 5" in (failure.text or "")
    assert cases[old].find("failure") is None
    # a finding fails the check too: the old group has one consumer thread for two partitions
    code, out, err = run([*base, "--max-lag", "100", "--fail-on-findings", "warning"])
    # (the new group has offsets, lag and no member: Empty, nothing consumes it)
    assert code == ExitCode.FINDINGS and "KD612" in out and "KD609" not in out, out
    # could not check: an unknown group
    code, out, err = run(["check", "--bootstrap-server", broker.address, "--group", workload.unique("x"),
                          "--max-lag", "1", "--format", "junit"])  # fmt: skip
    assert code == ExitCode.INPUT_UNREADABLE, (out, err)
    assert "<error" in out and "could not check everything" in err
    # time-based thresholds need samples
    code, out, err = run([*base, "--max-time-lag", "5m"])
    assert code == ExitCode.USAGE and "--samples 2" in err


def test_environment_variables_name_the_cluster(cluster: Cluster) -> None:
    topic, old, _ = old_and_new_groups(cluster)
    code, out, err = run(
        ["lag", "--group", old, "--format", "json"],
        env={"KAFKADIAG_ZOOKEEPER": cluster.zookeeper, "KAFKADIAG_TIMEOUT": "5"},
    )
    assert code == ExitCode.OK, err
    assert partitions_of(json.loads(out), old)[(topic, 0)]["lag"] == 4


def test_usage_errors_exit_2() -> None:
    code, out, err = run(
        ["lag", "--group", "g"], env={"KAFKADIAG_ZOOKEEPER": "", "KAFKADIAG_BOOTSTRAP_SERVER": ""}
    )
    assert code == ExitCode.USAGE and "--bootstrap-server" in err
    code, out, err = run(["lag", "--bootstrap-server", "127.0.0.1:1"])
    assert code == ExitCode.USAGE and "--all-groups" in err
    # a negative allowed lag is refused before anything is read (lag history: see above)
    for command in ("lag", "check"):
        code, out, err = run(
            [command, "--bootstrap-server", "127.0.0.1:1", "--group", "g", "--allowed-lag", "-1"]
        )
        assert code == ExitCode.USAGE and "--allowed-lag" in err, (command, err)


def test_watch_redraws_until_interrupted(cluster: Cluster) -> None:
    import os

    from tests.infra.cli import watch_until

    topic, old, _ = old_and_new_groups(cluster)
    # WHEN Ctrl-C comes after the view was redrawn
    process, text = watch_until(
        ["lag", "--zookeeper", cluster.zookeeper, "--group", old, "--watch", "--interval", "0.3"],
        lambda shown: shown.count(b"kafkadiag lag --watch") >= 2,
        {**os.environ, "KAFKADIAG_WIDTH": "200"},
    )
    # THEN the last view stays on screen and the exit code is that of its report
    assert process.returncode == ExitCode.OK, process.stderr.read() if process.stderr else ""
    assert f"Group {old}" in text and "STATUS" in text


def test_a_malformed_metrics_source_is_refused_before_anything_is_read() -> None:
    # GIVEN an unreachable cluster: reading it would take the whole --timeout and exit 3
    unreachable = ["lag", "--bootstrap-server", "127.0.0.1:1", "--group", "g", "--timeout", "30"]
    for source, message in (
        (["--pid", "0"], "--pid must be a process id"),
        (["--jmx", "not a target"], "--jmx takes host:port"),
        (["--jolokia", "ftp://host/jolokia"], "--jolokia takes an http(s) URL"),
        (["--pid", "1", "--jmx", "host:1"], "name exactly one metrics source"),
    ):
        # WHEN the metrics source is malformed THEN it is a usage error, at once
        started = time.monotonic()
        code, _, err = run([*unreachable, *source])
        assert code == ExitCode.USAGE and message in err, (source, err)
        assert time.monotonic() - started < 10


@pytest.mark.parametrize("mode", [[], ["--watch"]], ids=["once", "watch"])
def test_ctrl_c_while_connecting_stops_at_once_with_the_interrupt_code(mode: list[str]) -> None:
    import signal
    import subprocess
    import sys

    # GIVEN a read of a broker and a ZooKeeper that never answer, with a long --timeout: a port
    # that listens and never accepts (the kernel completes the handshake, nobody replies; a
    # refused port is reported at once instead)
    # (under --watch: Ctrl-C before the first view is shown is an interrupt, not a clean report)
    silent = socket.socket()
    silent.bind(("127.0.0.1", 0))
    silent.listen(16)
    address = f"127.0.0.1:{silent.getsockname()[1]}"
    process = subprocess.Popen(
        [sys.executable, "-m", "kafkadiag", "lag", "--bootstrap-server", address,
         "--zookeeper", address, "--all-groups", "--timeout", "120", *mode],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    try:
        time.sleep(3)  # importing and connecting
        # WHEN Ctrl-C
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
        silent.close()
    # THEN it stops well before the timeout, says so, reports nothing and exits 130, not 3
    assert process.returncode == ExitCode.INTERRUPTED, err
    assert "interrupted" in err and "Traceback" not in err and out == ""
