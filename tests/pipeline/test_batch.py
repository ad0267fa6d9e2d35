"""`kafkadiag batch` on a real local Spark and a real standalone cluster.

GIVEN the captured fixtures, the shared corpus, recorded lag snapshots of real groups on the real
broker and ZooKeeper, and inputs that cannot be read; WHEN they are analysed as a Spark job;
THEN every input's findings are exactly `kafkadiag dump analyze`'s, every group partition's
status is `kafkadiag lag history`'s, the bad inputs are quarantined, and the same inputs give
byte-identical JSON lines.
"""

from __future__ import annotations

import gzip
import json
import os
import time
from pathlib import Path
from typing import Any

import pytest

from kafkadiag.exitcodes import ExitCode
from tests.conftest import CAPTURED, CORPUS, REPO
from tests.infra import workload
from tests.infra.cli import run
from tests.infra.servers import ServerProcess
from tests.infra.spark import standalone_cluster
from tests.infra.workload import Cluster

BATCH_ONLY_KEYS = {"id", "unit", "kind", "host", "pid", "process", "dump_time"}
JSON_LINES = ("findings.jsonl", "stuck.jsonl", "lag.jsonl", "quarantine.jsonl")


def read_lines(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


def canonical(findings: list[dict[str, Any]]) -> list[str]:
    return sorted(
        json.dumps({k: v for k, v in finding.items() if k not in BATCH_ONLY_KEYS}, sort_keys=True)
        for finding in findings
    )


def record_history(cluster: Cluster, record: Path) -> dict[str, str]:
    """Five snapshots of groups that behave as Burrow's statuses describe; returns group -> role."""
    topic = cluster.topic(1, {0: 40})
    roles = {workload.unique(role): role for role in ("catching-up", "stalled", "rewound", "slow")}
    by_role = {role: group for group, role in roles.items()}
    for step in range(5):
        workload.produce(cluster.bootstrap, topic, {0: 3})
        offsets = {
            "catching-up": 10 + 8 * step,
            "stalled": 5,
            "rewound": 30 - 6 * step if step >= 3 else 20 + step,
            "slow": 2 + step,
        }
        for role, offset in offsets.items():
            workload.commit_offsets_without_joining(cluster.bootstrap, by_role[role], {(topic, 0): offset})
        code, _, err = run(
            ["lag", "--bootstrap-server", cluster.bootstrap, *(a for g in roles for a in ("--group", g)),
             "--record", str(record)]
        )  # fmt: skip
        assert code == ExitCode.OK, err
        time.sleep(0.3)
    return roles


def bad_inputs(directory: Path) -> dict[str, str]:
    """Inputs a batch must quarantine, by name -> what makes them unreadable."""
    directory.mkdir()
    (directory / "empty.txt").write_bytes(b"")
    (directory / "binary.bin").write_bytes(bytes(range(256)) * 64)
    (directory / "notes.md").write_text("# Incident notes\n\nThe consumer stalled at 03:12.\n")
    (directory / "broken.txt.gz").write_bytes(gzip.compress(b'"main" #1 prio=5')[:12])
    (directory / "lag-snapshots.jsonl").write_text("{not json\n")
    return {
        "empty.txt": "empty",
        "binary.bin": "not text",
        "notes.md": "no thread dump",
        "broken.txt.gz": "",
        "lag-snapshots.jsonl": "",
    }


@pytest.fixture(scope="module")
def inputs(
    zookeeper: ServerProcess, broker: ServerProcess, tmp_path_factory: pytest.TempPathFactory, corpus: Path
) -> dict[str, Any]:
    base = tmp_path_factory.mktemp("batch-inputs")
    record = base / "record"
    cluster = Cluster(zookeeper.address, broker.address)
    try:
        roles = record_history(cluster, record)
    finally:
        cluster.close()
    bad = bad_inputs(base / "bad")
    return {"record": record, "roles": roles, "bad": base / "bad", "bad_names": bad,
            "paths": [str(CAPTURED), str(CORPUS), str(record), str(base / "bad")]}  # fmt: skip


@pytest.fixture(scope="module")
def batch_run(inputs: dict[str, Any], tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("batch") / "out"
    code, stdout, stderr = run(["batch", *inputs["paths"], "--out", str(out)])
    assert code == ExitCode.FINDINGS, f"{stdout}\n{stderr}"
    return out


def test_every_input_gets_exactly_the_findings_of_dump_analyze(batch_run: Path) -> None:
    by_unit: dict[str, list[dict[str, Any]]] = {}
    for finding in read_lines(batch_run / "findings.jsonl"):
        by_unit.setdefault(finding["unit"], []).append(finding)
    quarantined = {entry["path"] for entry in read_lines(batch_run / "quarantine.jsonl")}
    compared = 0
    for root in (CAPTURED, CORPUS):
        for path in sorted(p for p in root.rglob("*") if p.is_file() and str(p) not in quarantined):
            if path.name in ("MANIFEST.json", "README.md", "EXPECTED.md"):
                continue
            code, out, err = run(["dump", "analyze", str(path), "--format", "json"])
            assert code in (ExitCode.OK, ExitCode.FINDINGS), f"{path}: {err}"
            expected = json.loads(out)["findings"]
            assert canonical(by_unit.get(str(path), [])) == canonical(expected), path
            compared += 1
    assert compared > 150


def test_lag_statuses_are_those_of_lag_history(batch_run: Path, inputs: dict[str, Any]) -> None:
    rows = read_lines(batch_run / "lag.jsonl")
    latest = {(row["group"], row["topic"], row["partition"]): row for row in rows}
    history = json.loads(run(["lag", "history", str(inputs["record"]), "--format", "json"])[1])
    seen = 0
    for group in history["groups"]:
        for partition in group["partitions"]:
            row = latest[(group["group"], partition["topic"], partition["partition"])]
            assert row["lag"] == partition["lag"]
            assert row["status"] == partition["status"], (group["group"], row, partition)
            for rate in ("consumption_rate", "production_rate"):
                assert row[rate] == pytest.approx(partition[rate], rel=1e-9, abs=1e-9)
            seen += 1
    assert seen == len(inputs["roles"])
    statuses = {inputs["roles"][key[0]]: row["status"] for key, row in latest.items()}
    # Kafka-stored offsets: a consumer re-committing the same offset leaves no trace, so it reads
    # STOP, not Burrow's STALL (docs/lag.md, "Side by side with Burrow")
    assert statuses["catching-up"] == "OK" and statuses["stalled"] == "STOP"
    assert statuses["rewound"] == "REWIND" and statuses["slow"] == "WARN"
    # one row per snapshot per partition, in time order
    assert len(rows) == 5 * len(inputs["roles"])


def test_unreadable_inputs_are_quarantined_with_the_reason(batch_run: Path, inputs: dict[str, Any]) -> None:
    quarantined = {
        Path(entry["path"]).name: entry["reason"] for entry in read_lines(batch_run / "quarantine.jsonl")
    }
    for name, reason in inputs["bad_names"].items():
        assert name in quarantined, (name, quarantined)
        assert reason in quarantined[name], (name, quarantined[name])


def test_summary_and_report_describe_the_run(batch_run: Path) -> None:
    summary = json.loads((batch_run / "summary.json").read_text())
    assert summary["schema"] == "kafkadiag.batch.summary" and summary["version"] == 1
    counts = summary["counts"]
    files = {"findings.jsonl": "findings", "stuck.jsonl": "stuck_threads", "lag.jsonl": "lag_rows",
             "quarantine.jsonl": "quarantined"}  # fmt: skip
    for name, key in files.items():
        assert counts[key] == len(read_lines(batch_run / name)), name
    assert summary["rules"]["KD201"]["findings"] >= 1
    assert summary["stuck_frames"] and summary["worst_groups"][0]["status"] in ("STOP", "STALL", "REWIND")
    report = (batch_run / "report.html").read_text()
    assert "<svg" in report and "<script" not in report and "http" not in report.replace("http-", "")
    assert (batch_run / "findings").is_dir() and (batch_run / "lag").is_dir()


def test_same_inputs_give_byte_identical_json_lines(
    batch_run: Path, inputs: dict[str, Any], tmp_path: Path
) -> None:
    again = tmp_path / "again"
    code, _, err = run(["batch", *inputs["paths"], "--out", str(again)])
    assert code == ExitCode.FINDINGS, err
    for name in JSON_LINES:
        assert (again / name).read_bytes() == (batch_run / name).read_bytes(), name


def test_exit_codes(tmp_path: Path, inputs: dict[str, Any]) -> None:
    # nothing readable: exit 3, and quarantine.jsonl says why
    code, _, err = run(["batch", str(inputs["bad"]), "--out", str(tmp_path / "bad")])
    assert code == ExitCode.INPUT_UNREADABLE and "nothing could be read" in err
    quarantined = {Path(entry["path"]).name for entry in read_lines(tmp_path / "bad" / "quarantine.jsonl")}
    assert quarantined == set(inputs["bad_names"])
    # an existing non-empty output directory is refused before anything runs
    taken = tmp_path / "taken"
    taken.mkdir()
    (taken / "keep.txt").write_text("mine")
    code, _, err = run(["batch", str(CAPTURED / "healthy"), "--out", str(taken)])
    assert code == ExitCode.USAGE and "not an empty directory" in err
    assert os.listdir(taken) == ["keep.txt"]
    code, _, err = run(["batch", str(CAPTURED / "healthy"), "--out", str(tmp_path / "x"), "--conf", "nokey"])
    assert code == ExitCode.USAGE and "KEY=VALUE" in err


def test_a_standalone_cluster_gives_the_same_results(batch_run: Path, tmp_path: Path) -> None:
    inputs = [
        str(CAPTURED / "real-old-consumer-stall-0.8.2.2"),
        str(CAPTURED / "deadlock"),
        str(CAPTURED / "py-lock-inversion"),
    ]
    local = tmp_path / "local"
    assert run(["batch", *inputs, "--out", str(local)])[0] == ExitCode.FINDINGS
    with standalone_cluster(tmp_path / "spark") as master:
        remote = tmp_path / "cluster"
        code, out, err = run(["batch", *inputs, "--out", str(remote), "--master", master])
        assert code == ExitCode.FINDINGS, f"{out}\n{err}"
    for name in JSON_LINES:
        assert (remote / name).read_bytes() == (local / name).read_bytes(), name
    assert read_lines(remote / "findings.jsonl")


def test_spark_submit_runs_the_same_job(tmp_path: Path) -> None:
    import subprocess
    import sys

    import pyspark

    from kafkadiag.pipeline import submit

    inputs = [str(CAPTURED / "real-old-consumer-stall-0.8.2.2"), str(CAPTURED / "deadlock")]
    local = tmp_path / "local"
    assert run(["batch", *inputs, "--out", str(local)])[0] == ExitCode.FINDINGS
    spark_submit = Path(pyspark.__file__).parent / "bin" / "spark-submit"
    # The interpreter and the kafkadiag under test, whatever the environment spark-submit inherits.
    environment = {
        **os.environ, "PYSPARK_PYTHON": sys.executable, "SPARK_LOCAL_IP": "127.0.0.1", "PYTHONPATH": str(REPO)
    }  # fmt: skip
    command = [str(spark_submit), "--master", "local[2]", submit.__file__, *inputs]
    done = subprocess.run(
        [*command, "--out", str(tmp_path / "submitted")],
        capture_output=True,
        text=True,
        timeout=300,
        env=environment,
    )
    assert done.returncode == ExitCode.FINDINGS, done.stderr[-3000:]
    for name in JSON_LINES:
        assert (tmp_path / "submitted" / name).read_bytes() == (local / name).read_bytes(), name


def test_the_parquet_outputs_hold_the_rows_of_the_json_lines(batch_run: Path) -> None:
    from kafkadiag.pipeline.session import start_session

    session = start_session(None, [])
    try:
        findings = {row.id: row for row in session.read.parquet(str(batch_run / "findings")).collect()}
        lag_rows = session.read.parquet(str(batch_run / "lag")).count()
    finally:
        session.stop()
    lines = read_lines(batch_run / "findings.jsonl")
    assert len(findings) == len(lines) > 100
    for line in lines:
        stored = findings[line["id"]]
        assert json.loads(stored.details_json) == line["details"], line["id"]
        assert (stored.rule, stored.severity, list(stored.threads), stored.unit, stored.pid) == (
            line["rule"], line["severity"], line["threads"], line["unit"], line["pid"]
        )  # fmt: skip
        assert [evidence.asDict() for evidence in stored.evidence] == line["evidence"]
    assert lag_rows == len(read_lines(batch_run / "lag.jsonl"))
