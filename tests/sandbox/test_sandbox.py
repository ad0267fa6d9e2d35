"""The sandbox's systems, observed with kafkadiag's own commands as production ones would be.

GIVEN a running scenario (ZooKeeper and an Apache Kafka broker from Kafka's own jars, live
producers, a real consumer process: Kafka 0.8.2.2's old consumer or kafka-python),
WHEN its incident is triggered, THEN the lag, the consumer's metrics and its thread dump show the
stall the scenario promises; and every process is gone afterwards, also when the run fails.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from kafkadiag.sandbox.scenarios import HUNG_TOPIC, ORDER_TOPICS, running_sandbox
from tests.infra.cli import run, run_json


def alive(pids: list[int]) -> list[int]:
    return [
        pid for pid in pids if psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    ]


def analyze(dump_text: str, tmp_path: Path) -> dict:
    path = tmp_path / f"dump-{time.monotonic_ns()}.txt"
    path.write_text(dump_text)
    code, out, err = run(["dump", "analyze", str(path), "--format", "json"])
    assert code in (0, 1), err
    return json.loads(out)


def rules_of(analysis: dict) -> dict[str, list[dict]]:
    found: dict[str, list[dict]] = {}
    for finding in analysis["findings"]:
        found.setdefault(finding["rule"], []).append(finding)
    return found


def jstack(pid: int) -> str:
    return subprocess.run(
        [shutil.which("jstack") or "jstack", "-l", str(pid)],
        capture_output=True,
        text=True,
        check=True,
        timeout=60,
    ).stdout


def test_old_consumer_scenario_stalls_as_the_mission_describes(tmp_path: Path) -> None:
    with running_sandbox("old-consumer") as sandbox:
        pids = [sandbox.zookeeper.pid, sandbox.broker.pid, sandbox.pid]
        # GIVEN the healthy service: every stream drains, the dump shows no stall
        sandbox.wait_until_consuming()
        healthy = rules_of(analyze(jstack(sandbox.pid), tmp_path))
        assert not {"KD201", "KD202", "KD203"} & set(healthy), healthy
        zookeeper_args = ["--zookeeper", sandbox.zookeeper_connect, "--group", sandbox.group]
        before = run_json(["lag", *zookeeper_args])

        # WHEN the payment gateway the payments handler calls stops answering
        sandbox.trigger_incident()
        status = sandbox.wait_until_stalled()

        # THEN the payments queue is full and every topic's committed lag grows, the starving ones too
        queues = {queue["topic"]: queue for queue in status["queues"]}
        assert queues[HUNG_TOPIC]["size"] == queues[HUNG_TOPIC]["capacity"]
        after = run_json(["lag", *zookeeper_args])
        (group_before,) = before["groups"]
        (group_after,) = after["groups"]
        lag_before = {(p["topic"], p["partition"]): p["lag"] for p in group_before["partitions"]}
        for partition in group_after["partitions"]:
            assert partition["lag"] > lag_before[(partition["topic"], partition["partition"])] + 5, partition
            assert partition["owner"].startswith(sandbox.consumer_details["consumer id"])

        # the dump names the blocked fetcher, the starving streams and the stream that stopped draining
        findings = rules_of(analyze(jstack(sandbox.pid), tmp_path))
        (fetcher,) = findings["KD201"]
        assert fetcher["threads"][0].startswith(
            "ConsumerFetcherThread-" + sandbox.consumer_details["consumer id"]
        )
        (culprit,) = findings["KD203"]
        assert culprit["threads"][0] == "order-worker-payments"
        assert "PaymentGateway.authorize" in culprit["message"]
        (starving,) = findings["KD202"]
        assert len(starving["threads"]) == len(ORDER_TOPICS) - 1

        # the fetcher's MaxLag stays small while the checker lag grows: the streams do not drain
        code, out, err = run(["maxlag", "--pid", str(sandbox.pid), *zookeeper_args, "--format", "json"])
        assert code == 1, err
        (client,) = json.loads(out)["clients"]
        assert client["verdict"] == "streams-not-draining", client
    assert alive(pids) == []


def test_python_scenario_blocks_the_poll_loop_on_the_full_handoff_queue(tmp_path: Path) -> None:
    py_spy = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
    with running_sandbox("python") as sandbox:
        pids = [sandbox.zookeeper.pid, sandbox.broker.pid, sandbox.pid]
        sandbox.wait_until_consuming()
        sandbox.trigger_incident()
        status = sandbox.wait_until_stalled()
        assert status["queued"] == status["capacity"]
        dump = subprocess.run(
            [py_spy, "dump", "--pid", str(sandbox.pid)],
            capture_output=True,
            text=True,
            check=True,
            timeout=60,
        ).stdout
        (blocked,) = rules_of(analyze(dump, tmp_path))["KD401"]
        assert blocked["threads"][0] == "MainThread"
        assert {"billing-worker-0", "billing-worker-1"} <= set(blocked["threads"])
        lag = run_json(["lag", "--bootstrap-server", sandbox.broker.address, "--group", sandbox.group])
        (group,) = lag["groups"]
        assert sum(partition["lag"] for partition in group["partitions"]) > 10
    assert alive(pids) == []


def test_a_failure_inside_the_sandbox_still_stops_every_process() -> None:
    pids: list[int] = []
    with pytest.raises(RuntimeError, match="boom"), running_sandbox("old-consumer") as sandbox:
        pids = [sandbox.zookeeper.pid, sandbox.broker.pid, sandbox.pid]
        raise RuntimeError("boom")
    assert pids and alive(pids) == []
