"""Output that stays honest when sources fail, and safe when the data is hostile.

Against real servers: whatever could not be read, every machine output is still written (the
failure as data), unknown is never exported as 0 or OK, a group in an unreachable store is
reported as not read (never as missing), files get the mode the umask asks for, and control
characters from znode data or group names never reach a terminal, XML or Prometheus raw."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

from kafkadiag.exitcodes import ExitCode
from tests.infra import workload
from tests.infra.cli import group_of, partitions_of, run
from tests.infra.servers import ServerProcess, free_port
from tests.infra.workload import Cluster

TIMEOUT = "2s"
# ESC ] 0 ; ... BEL retitles a terminal; ESC [ 2 J clears it.
HOSTILE = "evil\x1b]0;pwned\x07\x1b[2J"


def lag(*args: str) -> tuple[int, str, str]:
    return run(["lag", *args, "--timeout", TIMEOUT])


def metric_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line and not line.startswith("#")]


def test_prometheus_file_is_replaced_when_nothing_can_be_read(tmp_path: Path) -> None:
    # GIVEN a textfile-collector file left by an earlier, successful run
    target = tmp_path / "kafka_lag.prom"
    target.write_text('kafkadiag_group_lag_records{cluster="c",group="g",source="kafka"} 42\n')
    dead_zookeeper, dead_broker = f"127.0.0.1:{free_port()}", f"127.0.0.1:{free_port()}"
    # WHEN every source is unreachable
    code, out, err = lag(
        "--zookeeper", dead_zookeeper, "--bootstrap-server", dead_broker,
        "--group", "g", "--format", "prometheus", "-o", str(target),
    )  # fmt: skip
    # THEN the file is replaced: up 0, each source down by address, and no lag series at all
    assert code == ExitCode.INPUT_UNREADABLE, err
    lines = metric_lines(target.read_text())
    cluster = f'cluster="{dead_broker}"'
    assert f"kafkadiag_up{{{cluster}}} 0" in lines
    assert f'kafkadiag_source_up{{{cluster},source="zookeeper",address="{dead_zookeeper}"}} 0' in lines
    assert f'kafkadiag_source_up{{{cluster},source="kafka",address="{dead_broker}"}} 0' in lines
    assert f"kafkadiag_partial{{{cluster}}} 1" in lines
    assert any(line.startswith("kafkadiag_collection_timestamp_seconds{") for line in lines)
    assert not [line for line in lines if line.startswith(("kafkadiag_group", "kafkadiag_partition"))]
    assert "ZooKeeper unreachable" in err and "the brokers unreachable" in err


def test_json_and_junit_are_written_with_the_failure_as_data(tmp_path: Path) -> None:
    dead_zookeeper = f"127.0.0.1:{free_port()}"
    code, out, err = lag("--zookeeper", dead_zookeeper, "--group", "legacy", "--format", "json")
    assert code == ExitCode.INPUT_UNREADABLE, err
    document = json.loads(out)
    entry = group_of(document, "legacy")
    # unknown, not missing, and no number that reads as healthy
    assert entry["exists"] is None and entry["total_lag"] is None and entry["status"] is None
    assert entry["errors"][0].startswith("not read from zookeeper: cannot connect to ZooKeeper")
    assert document["partial"] is True

    junit = tmp_path / "reports" / "lag.xml"
    code, out, err = run(
        ["check", "--zookeeper", dead_zookeeper, "--group", "legacy", "--timeout", TIMEOUT,
         "--junit-xml", str(junit)]
    )  # fmt: skip
    assert code == ExitCode.INPUT_UNREADABLE, err
    suite = ElementTree.parse(junit).getroot().find("testsuite")
    assert suite is not None
    cases = {case.get("name"): case for case in suite.iter("testcase")}
    assert set(cases) == {"legacy", "(collection)"}
    legacy_error = cases["legacy"].find("error")
    assert legacy_error is not None and "cannot connect to ZooKeeper" in (legacy_error.text or "")
    assert cases["(collection)"].find("error") is not None


def test_zookeeper_down_is_reported_per_group_and_kafka_groups_still_read(
    own_zookeeper: ServerProcess, broker: ServerProcess
) -> None:
    # GIVEN a Kafka-stored group with lag 3, and a ZooKeeper that accepts but never answers
    topic = workload.unique("honest")
    workload.create_topic(broker.address, topic, 1)
    workload.produce(broker.address, topic, {0: 5})
    kafka_group = workload.unique("kafka-group")
    workload.commit_offsets_without_joining(broker.address, kafka_group, {(topic, 0): 2})
    own_zookeeper.pause()
    try:
        code, out, err = lag(
            "--zookeeper", own_zookeeper.address, "--bootstrap-server", broker.address,
            "--group", "legacy", "--group", kafka_group, "--format", "json",
        )  # fmt: skip
    finally:
        own_zookeeper.resume()
    assert code == ExitCode.INPUT_UNREADABLE, err
    document = json.loads(out)
    # THEN the old consumer's group is "not read from zookeeper", never "no such group"
    legacy = group_of(document, "legacy")
    assert legacy["exists"] is None and legacy["source"] == "zookeeper"
    assert any(error.startswith("not read from zookeeper") for error in legacy["errors"])
    assert not any("not found" in error for error in legacy["errors"])
    # AND the Kafka group is whole
    assert partitions_of(document, kafka_group)[(topic, 0)]["lag"] == 3
    assert "group(s) not read: legacy" in err


def test_a_hung_broker_never_makes_groups_vanish(cluster: Cluster, own_broker: ServerProcess) -> None:
    # GIVEN old-consumer offsets in ZooKeeper, and the only broker hung (SIGSTOP)
    topic = cluster.topic(1, {0: 3})
    old = cluster.old_group()
    old.commit({(topic, 0): 1})
    own_broker.pause()
    try:
        code, out, err = lag(
            "--zookeeper", cluster.zookeeper, "--bootstrap-server", own_broker.address,
            "--group", old.group, "--group", "kafka-stored", "--format", "json",
        )  # fmt: skip
    finally:
        own_broker.resume()
    assert code == ExitCode.INPUT_UNREADABLE, err
    document = json.loads(out)
    # THEN both named groups are in the report: the ZooKeeper one with its offset and unknown lag,
    # the Kafka one as not read, naming the broker
    entry = partitions_of(document, old.group)[(topic, 0)]
    assert entry["committed_offset"] == 1 and entry["lag"] is None
    assert group_of(document, old.group)["total_lag"] is None
    stored = group_of(document, "kafka-stored")
    assert stored["exists"] is None and own_broker.address in stored["errors"][0]


def test_hostile_znode_data_is_escaped_everywhere(cluster: Cluster, tmp_path: Path) -> None:
    # GIVEN an owner znode and an offset znode holding terminal escape sequences
    topic = cluster.topic(2, {0: 3, 1: 3})
    group = cluster.old_group()
    group.commit({(topic, 0): 1, (topic, 1): HOSTILE})
    group.own({(topic, 0): HOSTILE + "-0"})
    base = ["--zookeeper", cluster.zookeeper, "--bootstrap-server", cluster.bootstrap, "--group", group.group]
    # WHEN the table, the JUnit XML and the Prometheus file are written
    code, table, err = lag(*base)
    assert code == ExitCode.INPUT_UNREADABLE
    junit = tmp_path / "check.xml"
    run(["check", *base, "--timeout", TIMEOUT, "--junit-xml", str(junit)])
    prometheus = tmp_path / "lag.prom"
    lag(*base, "--format", "prometheus", "-o", str(prometheus))
    # THEN no control character reaches any of them, and the data is still visible, escaped
    for text in (table, err, junit.read_text(), prometheus.read_text()):
        assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", text)
    assert "evil\\x1b]0;pwned\\x07" in table
    assert "evil\\x1b" in junit.read_text()
    ElementTree.parse(junit)  # well-formed


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o027, 0o640), (0o077, 0o600)])
def test_output_files_get_the_mode_the_umask_asks_for(tmp_path: Path, umask: int, mode: int) -> None:
    # A real process, so that its umask is its own.
    target = tmp_path / "lag.json"
    script = (
        "import os, sys; os.umask(int(sys.argv[1], 8)); from kafkadiag.cli import console_main;"
        " sys.argv = ['kafkadiag'] + sys.argv[2:]; console_main()"
    )
    dead = f"127.0.0.1:{free_port()}"
    subprocess.run(
        [sys.executable, "-c", script, oct(umask)[2:], "lag", "--zookeeper", dead, "--group", "g",
         "--timeout", "1s", "--format", "json", "-o", str(target)],
        capture_output=True, check=False, timeout=60,
    )  # fmt: skip
    assert target.exists() and os.stat(target).st_mode & 0o777 == mode
    # An existing file keeps its own mode when replaced.
    os.chmod(target, 0o604)
    subprocess.run(
        [sys.executable, "-c", script, "077", "lag", "--zookeeper", dead, "--group", "g",
         "--timeout", "1s", "--format", "json", "-o", str(target)],
        capture_output=True, check=False, timeout=60,
    )  # fmt: skip
    assert os.stat(target).st_mode & 0o777 == 0o604
