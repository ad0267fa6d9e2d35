"""Every key kafkadiag writes in JSON is in docs/json.md's skeleton of its schema.

Each command runs on real inputs: the captured dumps of fixtures/captured, a real ZooKeeper and
Kafka broker (tests/infra), a real consumer JVM stalled as in tests/maxlag. A key that a change
adds without documenting it fails here, named with its path.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from kafkadiag.exitcodes import ExitCode
from tests.docs.skeleton import Skeleton, emitted_paths, skeletons
from tests.infra import workload
from tests.infra.cli import run
from tests.infra.workload import Cluster
from tests.maxlag.scenario import deploy
from tests.maxlag.test_maxlag_cli import SETTINGS, drive_to_stall

REPO = Path(__file__).resolve().parents[2]
CAPTURED = REPO / "fixtures" / "captured"
SKELETONS = skeletons(REPO / "docs" / "json.md")


def captured_dumps() -> list[str]:
    """Up to three dumps of every captured scenario: every format, tool and client there is."""
    files: list[str] = []
    for scenario in sorted(path for path in CAPTURED.iterdir() if path.is_dir()):
        dumps = sorted(path for path in scenario.iterdir() if path.is_file() and path.suffix != ".gz")
        files += [str(path) for path in dumps[:3]]
    return files


def documented(schema: str, *documents: Any) -> None:
    assert schema in SKELETONS, f"docs/json.md has no skeleton under a heading `{schema}`"
    skeleton: Skeleton = SKELETONS[schema]
    paths = set().union(*(emitted_paths(document) for document in documents))
    missing = skeleton.undocumented(paths)
    assert not missing, f"keys of {schema} written but not in docs/json.md: {missing}"


def json_of(args: list[str], *expect: int) -> Any:
    code, out, err = run([*args, "--format", "json"])
    assert code in expect, f"exit {code}, expected {expect}\nstdout:\n{out[:2000]}\nstderr:\n{err}"
    return json.loads(out)


def test_the_skeleton_reader_finds_paths_and_open_objects() -> None:
    # GIVEN every kind of line a skeleton holds THEN paths, lists and open objects are read
    skeleton = SKELETONS["kafkadiag.dumps"]
    assert "dumps[].threads[].frames[].locals[].name" in skeleton.paths
    assert skeleton.undocumented({"dumps[].by_state.RUNNABLE", "error.message"}) == []
    assert skeleton.undocumented({"dumps[].threads[].no_such_key"}) == ["dumps[].threads[].no_such_key"]


def test_dump_parse_and_analyze_keys_are_documented() -> None:
    files = captured_dumps()
    assert len(files) > 100
    documented("kafkadiag.dumps", json_of(["dump", "parse", *files], ExitCode.OK))
    analysis = json_of(["dump", "analyze", "--fail-on", "info", *files], ExitCode.FINDINGS)
    # An input that holds no dump beside one that does: the report names the failure per input
    unreadable = json_of(["dump", "analyze", str(REPO / "setup.cfg"), files[0]], ExitCode.INPUT_UNREADABLE)
    documented("kafkadiag.analysis", analysis, unreadable)


def test_diagnose_from_dumps_keys_are_documented() -> None:
    stalls = [CAPTURED / "real-old-consumer-stall-0.8.2.2" / "jstack-l.txt", CAPTURED / "py-poll-queue-full"]
    documents = [json_of(["diagnose", "--from", str(path)], ExitCode.FINDINGS) for path in stalls]
    documented("kafkadiag.diagnosis", *documents)


def test_ps_keys_are_documented() -> None:
    documented("kafkadiag.ps", json_of(["ps"], ExitCode.OK))


def lagging_groups(cluster: Cluster) -> tuple[str, str]:
    """An old-consumer group in ZooKeeper and a Kafka-stored one, both behind."""
    topic = cluster.topic(2, {0: 10, 1: 4})
    old = cluster.old_group()
    consumer = old.join({topic: 1})
    old.own(workload.range_assignment({topic: 2}, {consumer: {topic: 1}}))
    old.commit({(topic, 0): 6, (topic, 1): 4})
    new = workload.unique("new")
    workload.commit_offsets_without_joining(cluster.bootstrap, new, {(topic, 0): 1, (topic, 1): 1})
    return old.group, new


def test_lag_check_snapshot_and_batch_keys_are_documented(cluster: Cluster, tmp_path: Path) -> None:
    old, new = lagging_groups(cluster)
    target = ["--zookeeper", cluster.zookeeper, "--bootstrap-server", cluster.bootstrap]
    groups = ["--group", old, "--group", new, "--group", "no-such-group"]
    record = tmp_path / "record"
    # The unknown group makes the run incomplete (exit 3); its entry is written all the same
    incomplete = (ExitCode.OK, ExitCode.INPUT_UNREADABLE)
    sampled = json_of(
        ["lag", *target, *groups, "--samples", "2", "--interval", "0.2", "--record", str(record)], *incomplete
    )
    documented("kafkadiag.lag", sampled, json_of(["lag", *target, "--group", old], ExitCode.OK))
    snapshots = [json.loads(line) for line in (record / "lag-snapshots.jsonl").read_text().splitlines()]
    documented("kafkadiag.lag.snapshot", *snapshots)
    unhealthy = (ExitCode.FINDINGS, ExitCode.INPUT_UNREADABLE)
    checked = json_of(["check", *target, *groups, "--max-lag", "1"], *unhealthy)
    documented("kafkadiag.check", checked)
    # The batch job over the recorded snapshots and a captured stall
    out = tmp_path / "batch"
    dumps = CAPTURED / "real-old-consumer-stall-0.8.2.2"
    inputs = [str(record), str(dumps), str(CAPTURED / "deadlock")]
    code, _stdout, stderr = run(["batch", *inputs, "--out", str(out)])
    assert code == ExitCode.FINDINGS, stderr
    documented("summary.json", json.loads((out / "summary.json").read_text()))
    for name in ("findings.jsonl", "stuck.jsonl", "lag.jsonl", "quarantine.jsonl"):
        rows = [json.loads(line) for line in (out / name).read_text().splitlines()]
        documented(name, *rows)


def test_maxlag_capture_and_diagnose_keys_are_documented(
    cluster: Cluster, start: Any, tmp_path: Path
) -> None:
    # GIVEN a real consumer JVM whose stream 0 stopped draining
    deployment = deploy(cluster, start, SETTINGS)
    drive_to_stall(deployment)
    source = ["--pid", str(deployment.pid), *deployment.cli_args()]
    documented("kafkadiag.maxlag", json_of(["maxlag", *source], ExitCode.FINDINGS))
    lag_with_fetcher = json_of(["lag", *source], ExitCode.OK)
    documented("kafkadiag.lag", lag_with_fetcher)
    live = json_of(["diagnose", *source], ExitCode.FINDINGS)
    # A bundle of the same JVM, and the diagnosis made from it afterwards
    bundle = tmp_path / "bundle"
    code, _stdout, stderr = run(
        ["capture", "--pid", str(deployment.pid), "--count", "2", "--interval", "0.2", "--out", str(bundle)]
    )
    assert code == ExitCode.OK, stderr
    documented("kafkadiag.capture", json.loads((bundle / "manifest.json").read_text()))
    offline = json_of(["diagnose", "--from", str(bundle), *deployment.cli_args()], ExitCode.FINDINGS)
    documented("kafkadiag.diagnosis", live, offline)


@pytest.mark.parametrize("schema", sorted(SKELETONS))
def test_every_skeleton_reads_as_one_document(schema: str) -> None:
    # A skeleton whose brackets do not balance would hide the keys after the break
    skeleton = SKELETONS[schema]
    assert skeleton.paths, f"{schema}: no key read from its skeleton"
