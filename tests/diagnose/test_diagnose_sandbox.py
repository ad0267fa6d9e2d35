"""`kafkadiag diagnose` and `kafkadiag demo` on the sandbox's real systems.

GIVEN a running scenario (real ZooKeeper, real broker, live producers, a real consumer process),
THEN healthy it diagnoses healthy; WHEN its incident is triggered, THEN one joined finding names the
stream thread that stopped and what it does, the blocked fetcher, the starving topics and MaxLag
against the checker lag (old consumer), or the blocked poll loop and its full hand-off queue
(Python); and the demo runs the whole story and leaves no process behind.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import psutil

from kafkadiag.exitcodes import ExitCode
from kafkadiag.sandbox.scenarios import HUNG_TOPIC, ORDER_TOPICS, running_sandbox
from tests.conftest import REPO
from tests.infra.cli import run


def diagnose_json(arguments: list[str], expect: int) -> dict[str, Any]:
    code, out, err = run(["diagnose", *arguments, "--format", "json"])
    assert code == expect, f"exit {code}, expected {expect}\n{out}\n{err}"
    document: dict[str, Any] = json.loads(out)
    assert document["schema"] == "kafkadiag.diagnosis" and document["version"] == 2
    return document


def by_rule(document: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    found: dict[str, list[dict[str, Any]]] = {}
    for finding in document["findings"]:
        found.setdefault(finding["rule"], []).append(finding)
    return found


def alive(pids: list[int]) -> list[int]:
    return [
        pid for pid in pids if psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    ]


def test_old_consumer_healthy_then_the_stall_explained_from_every_source(tmp_path: Path) -> None:
    with running_sandbox("old-consumer") as sandbox:
        # GIVEN the healthy order service: no warning from any source
        sandbox.wait_until_consuming()
        healthy = diagnose_json(sandbox.diagnose_arguments(), ExitCode.OK)
        assert healthy["verdict"].startswith("Healthy") and healthy["findings"] == []
        assert all(source["ok"] for source in healthy["sources"])
        assert {source["kind"] for source in healthy["sources"]} == {"lag", "dump", "metrics"}

        # WHEN the payments handler hangs and the stall shows
        sandbox.trigger_incident()
        sandbox.wait_until_stalled()
        stalled = diagnose_json(sandbox.diagnose_arguments(), ExitCode.FINDINGS)

        # THEN one record holds the whole story with its facts
        rules = by_rule(stalled)
        (story,) = rules["KD801"]
        facts = story["facts"]
        consumer_id = sandbox.consumer_details["consumer id"]
        assert stalled["findings"][0]["rule"] == "KD801" and story["source"] == "joined"
        assert facts["stalled_stream"]["topic"] == HUNG_TOPIC
        assert facts["stalled_stream"]["thread"].startswith("pool-1-thread-")  # found by behaviour
        assert "WarehouseClient.reserve" in facts["stalled_stream"]["doing"]
        assert facts["fetcher"].startswith(f"ConsumerFetcherThread-{consumer_id}-0-")
        assert facts["consumer_id"] == consumer_id
        assert facts["starving_topics"] == sorted(set(ORDER_TOPICS) - {HUNG_TOPIC})
        assert len(facts["starving_threads"]) == len(ORDER_TOPICS) - 1
        starving = [p for p in facts["partitions"] if p["starving"]]
        assert len(starving) == 4 and all(p["checker_lag"] > 5 for p in starving)
        assert facts["max_lag"] is not None and facts["max_lag"] < 5 < facts["checker_lag_total"]
        assert facts["queue_full_by_metrics"] and facts["buffer_bound_records"] > 0
        for name in (HUNG_TOPIC, facts["fetcher"], facts["stalled_stream"]["thread"], "MaxLag"):
            assert name in story["message"], name
        assert story["message"] in stalled["narrative"]
        # the evidence names where each item came from
        kinds = {item["source"].split(" ")[0] for item in story["evidence"]}
        assert {"pid", "metrics", "zookeeper"} <= kinds
        # and the sources' own findings are there too, in the one vocabulary
        assert {"KD201", "KD202", "KD203", "KD701"} <= set(rules)

        # `--from` a saved dump gives the same dump findings as the live one
        dump = tmp_path / "jstack.txt"
        jstack = shutil.which("jstack") or "jstack"
        dump.write_text(
            subprocess.run([jstack, "-l", str(sandbox.pid)], capture_output=True, text=True).stdout
        )
        offline = diagnose_json(["--from", str(dump)], ExitCode.FINDINGS)
        dump_rules = lambda doc: sorted(  # noqa: E731
            (f["rule"], tuple(f["threads"])) for f in doc["findings"] if f["source"] == "dump"
        )
        assert dump_rules(offline) == dump_rules(stalled)


def test_python_consumer_stall_names_the_poll_loop_and_the_full_queue() -> None:
    with running_sandbox("python") as sandbox:
        sandbox.wait_until_consuming()
        healthy = diagnose_json(sandbox.diagnose_arguments(), ExitCode.OK)
        assert healthy["findings"] == []
        sandbox.trigger_incident()
        sandbox.wait_until_stalled()
        stalled = diagnose_json(sandbox.diagnose_arguments(), ExitCode.FINDINGS)
        (story,) = by_rule(stalled)["KD802"]
        assert story["facts"]["poll_thread"] == "MainThread"
        assert story["facts"]["workers"] == ["billing-worker-0", "billing-worker-1"]
        assert story["facts"]["group"] == sandbox.group and story["facts"]["checker_lag_total"] > 10
        # kafka-python 3.0.12 heartbeats from its I/O thread, named after the client id, which this
        # broker does not report for members: no heartbeat thread can be tied to the group here
        assert story["facts"]["heartbeat_thread"] is None
        assert "full hand-off queue" in story["message"]


def test_unreadable_sources_are_named_and_the_rest_is_diagnosed(tmp_path: Path) -> None:
    with running_sandbox("python") as sandbox:
        sandbox.wait_until_consuming()
        gone = subprocess.Popen([sys.executable, "-c", "pass"])
        gone.wait()
        document = diagnose_json(
            ["--bootstrap-server", sandbox.broker.address, "--group", sandbox.group, "--pid", str(gone.pid),
             "--from", str(tmp_path / "missing")],
            ExitCode.INPUT_UNREADABLE,
        )  # fmt: skip
        failed = {source["target"]: source for source in document["sources"] if not source["ok"]}
        assert f"pid {gone.pid}" in failed and "no process" in failed[f"pid {gone.pid}"]["detail"]
        assert any("missing" in target for target in failed)
        assert document["groups"][0]["group"] == sandbox.group  # the lag was still read
        assert any(line.startswith("Not read:") for line in document["narrative"])
    code, _, err = run(["diagnose"])
    assert code == ExitCode.USAGE and "nothing to diagnose" in err


def run_demo(scenario: str) -> tuple[int, dict[str, Any], str]:
    done = subprocess.run(
        [sys.executable, "-m", "kafkadiag", "demo", "--scenario", scenario, "--format", "json"],
        capture_output=True, text=True, timeout=300, cwd=REPO,
    )  # fmt: skip
    return done.returncode, json.loads(done.stdout), done.stderr


def test_demo_tells_the_old_consumer_story_and_stops_everything() -> None:
    code, diagnosis, progress = run_demo("old-consumer")
    assert code == ExitCode.OK, progress
    assert "Before the incident: Healthy" in progress, progress  # the whole progress, not a cut
    (story,) = by_rule(diagnosis)["KD801"]
    assert story["facts"]["stalled_stream"]["topic"] == HUNG_TOPIC
    assert story["facts"]["starving_topics"] == sorted(set(ORDER_TOPICS) - {HUNG_TOPIC})
    pids = [int(pid) for pid in re.findall(r"\(pid (\d+)\)", progress)]
    assert len(pids) == 3 and alive(pids) == []


def test_demo_tells_the_python_story_and_stops_everything() -> None:
    code, diagnosis, progress = run_demo("python")
    assert code == ExitCode.OK, progress
    (story,) = by_rule(diagnosis)["KD802"]
    assert story["facts"]["poll_thread"] == "MainThread"
    pids = [int(pid) for pid in re.findall(r"\(pid (\d+)\)", progress)]
    assert len(pids) == 3 and alive(pids) == []
