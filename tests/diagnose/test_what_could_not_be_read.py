"""diagnose says what it could not read once, with its cause, and claims nothing about it: a
broker it never reached holds no "missing" group and no partition count; metrics without a
fetcher bean leave the checker lag that was read stated, and no Python None in any text."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from kafkadiag.exitcodes import ExitCode
from kafkadiag.sandbox.servers import ServerProcess, free_port
from tests.conftest import CAPTURED
from tests.infra import workload
from tests.infra.cli import run, run_json

HEALTHY = CAPTURED / "real-new-consumer-healthy-4.1.1"


def test_an_unreachable_broker_is_said_once_and_nothing_is_claimed_about_its_groups() -> None:
    address = f"127.0.0.1:{free_port()}"  # nothing listens there
    args = ["diagnose", "--from", str(HEALTHY), "--bootstrap-server", address, "--group", "billing"]
    code, table, err = run([*args, "--timeout", "3"])
    assert code == ExitCode.INPUT_UNREADABLE, (table, err)
    assert table.startswith("Incomplete"), table
    flat = " ".join(table.split())
    assert flat.count(f"cannot reach a Kafka broker at {address}") == 1, table
    assert "no such group" not in flat and "0 partition(s)" not in flat, table
    assert "Group billing: not read (the brokers could not be reached)" in flat, table
    assert "what to do: Check --bootstrap-server" in flat, table
    # stderr says it too, as lag does, while the dumps are still diagnosed
    assert f"warning: brokers {address} not read: cannot reach a Kafka broker" in err, err
    assert f"read bundle {HEALTHY}: 3 dump(s)" in flat, table
    diagnosis = run_json([*args, "--timeout", "3"], ExitCode.INPUT_UNREADABLE)
    assert diagnosis["complete"] is False
    lag = next(source for source in diagnosis["sources"] if source["kind"] == "lag")
    assert lag["ok"] is False and "group(s) not read: billing" in lag["detail"], lag
    assert lag["help"], lag


def _bundle_with_empty_metrics(tmp_path: Path) -> Path:
    bundle = tmp_path / "bm"
    shutil.copytree(HEALTHY, bundle)
    dumps = [{"file": name} for name in ("jstack-l.txt",)]
    (bundle / "manifest.json").write_text(json.dumps({"dumps": dumps, "metrics": "metrics.json"}))
    reading = {"source_kind": "pid", "source": "pid 640", "read_at_ms": 1_700_000_000_000, "beans": []}
    (bundle / "metrics.json").write_text(json.dumps(reading))
    return bundle


def test_metrics_without_fetcher_beans_state_the_checker_lag_that_was_read(
    broker: ServerProcess, tmp_path: Path
) -> None:
    # GIVEN a group 20 records behind on the real broker, and a bundle whose metrics hold no bean
    topic, group = workload.unique("billing-topic"), workload.unique("billing")
    workload.create_topic(broker.address, topic, 1)
    workload.produce(broker.address, topic, {0: 20})
    workload.commit_offsets_without_joining(broker.address, group, {(topic, 0): 0})
    bundle = _bundle_with_empty_metrics(tmp_path)
    args = ["diagnose", "--from", str(bundle), "--bootstrap-server", broker.address, "--group", group]
    # WHEN it is diagnosed
    code, table, err = run(args)
    # THEN the absent metrics are a warning beside the lag that was read, in words
    assert code == ExitCode.FINDINGS, (table, err)
    flat = " ".join(table.split())
    assert "None" not in table, table
    assert f"MaxLag not in the metrics, checker lag of group {group} 20." in flat, table
    diagnosis = run_json(args, ExitCode.FINDINGS)
    assert not any("None" in paragraph for paragraph in diagnosis["narrative"]), diagnosis["narrative"]
    assert any(finding["rule"] == "KD705" for finding in diagnosis["findings"]), diagnosis["findings"]
