"""The MaxLag comparison's verdicts as `kafkadiag diagnose` reports them (KD702 fetch-bound, KD704
fetcher-stale, KD705 fetcher-absent), on the reproducer JVM read by PID, with the checker lag from
the real ZooKeeper and broker."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path
from typing import Any

from kafkadiag.exitcodes import ExitCode
from tests.infra.cli import run
from tests.maxlag.scenario import deploy
from tests.maxlag.test_maxlag_cli import INTERVAL_MS, SETTINGS, catch_up


def diagnosed(pid: int, cli_args: list[str]) -> dict[str, dict[str, Any]]:
    code, out, err = run(["diagnose", "--pid", str(pid), *cli_args, "--format", "json"])
    assert code == ExitCode.FINDINGS, f"{out}\n{err}"
    return {finding["rule"]: finding for finding in json.loads(out)["findings"]}


def test_slow_fetcher_is_kd702(cluster, start) -> None:
    # GIVEN a caught-up consumer whose fetch requests then take 2 s each
    deployment = deploy(cluster, start, SETTINGS)
    catch_up(deployment)
    deployment.consumer.command("slow-fetch 2000")
    deployment.produce({0: 150, 1: 150})
    deployment.wait_for(
        lambda s: all(10 < p["fetch_offset"] and 15 < p["fetcher_lag"] for p in s["partitions"]),
        "one slow fetch done, still far behind",
    )
    deployment.settle_commits(INTERVAL_MS)
    # THEN diagnose reports the fetch-bound verdict with MaxLag and the streams as facts
    finding = diagnosed(deployment.pid, deployment.cli_args())["KD702"]
    assert finding["source"] == "metrics" and finding["facts"]["max_lag"] > 15
    assert all(stream["state"] != "full" for stream in finding["facts"]["streams"])


def test_stopped_fetcher_is_kd704(cluster, start) -> None:
    deployment = deploy(cluster, start, SETTINGS)
    catch_up(deployment)
    deployment.consumer.command("stop-fetcher")
    deployment.produce({0: 100, 1: 100})
    deployment.settle_commits(INTERVAL_MS)
    finding = diagnosed(deployment.pid, deployment.cli_args())["KD704"]
    assert finding["facts"]["max_lag"] == 0 and finding["facts"]["checker_lag_total"] == 200


def test_a_jvm_without_a_consumer_is_kd705(cluster, start, tmp_path: Path) -> None:
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
        finding = diagnosed(idle.pid, deployment.cli_args())["KD705"]
        assert finding["facts"]["client_id"] == deployment.group.group
    finally:
        idle.kill()
        idle.wait()
