"""`kafkadiag diagnose` and `kafkadiag demo` on the sandbox's real systems.

GIVEN a running scenario (ZooKeeper and an Apache Kafka broker from Kafka's own jars, live
producers, a real consumer process: Kafka 0.8.2.2's old consumer, or kafka-python), THEN healthy it
diagnoses healthy; WHEN its incident is triggered, THEN one joined finding names the stream thread
that stopped and what it does, the real ConsumerFetcherThread blocked on its queue, the starving
topics and MaxLag against the checker lag (old consumer), or the blocked poll loop and its full
hand-off queue (Python); each checked against the consumer's own threads as jstack prints them;
and the demo runs the whole story and leaves no process behind.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

from kafkadiag.exitcodes import ExitCode
from kafkadiag.sandbox.scenarios import HUNG_TOPIC, ORDER_TOPICS, running_sandbox
from tests.infra.cli import run
from tests.infra.demo import Demo


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


def jstack(pid: int) -> str:
    jstack_tool = shutil.which("jstack") or "jstack"
    return subprocess.run(
        [jstack_tool, "-l", str(pid)], capture_output=True, text=True, check=True, timeout=60
    ).stdout


def threads_in(dump: str) -> dict[str, str]:
    """Thread name -> its stack, as jstack printed them: the independent record of who is where."""
    threads: dict[str, str] = {}
    for block in dump.split("\n\n"):
        header = re.match(r'"([^"]+)"', block.strip())
        if header:
            threads[header.group(1)] = block
    return threads


def test_old_consumer_healthy_then_the_stall_explained_from_every_source(tmp_path: Path) -> None:
    with running_sandbox("old-consumer") as sandbox:
        # GIVEN the healthy order service on Kafka 0.8.2.2's old consumer: no warning from any source
        sandbox.wait_until_consuming()
        healthy = diagnose_json(sandbox.diagnose_arguments(), ExitCode.OK)
        assert healthy["verdict"].startswith("Healthy"), healthy["verdict"]
        # a stream queue read full at one moment, beside a dump whose fetcher is not blocked, is a note
        notes = [f for f in healthy["findings"] if f["severity"] != "info" or f["rule"] != "KD701"]
        assert notes == [], notes
        assert all(source["ok"] for source in healthy["sources"])
        assert {source["kind"] for source in healthy["sources"]} == {"lag", "dump", "metrics"}

        # WHEN the payments gateway stops answering and the stall shows
        sandbox.trigger_incident()
        sandbox.wait_until_stalled()
        stalled = diagnose_json(sandbox.diagnose_arguments(), ExitCode.FINDINGS)
        dump = jstack(sandbox.pid)

        # THEN one record holds the whole story with its facts, and the facts are the JVM's own:
        # the real fetcher parked in put() under PartitionTopicInfo.enqueue, the one worker stuck in
        # the gateway's socket read, the workers of the other topics waiting in take()
        threads = threads_in(dump)
        consumer_id = sandbox.consumer_details["consumer id"]
        (fetcher,) = [name for name in threads if name.startswith("ConsumerFetcherThread-")]
        assert fetcher == f"ConsumerFetcherThread-{consumer_id}-0-0"
        assert "LinkedBlockingQueue.put" in threads[fetcher]
        assert "kafka.consumer.PartitionTopicInfo.enqueue" in threads[fetcher]
        (hung,) = [name for name, stack in threads.items() if "PaymentGateway.authorize" in stack]
        starving = sorted(
            name for name, stack in threads.items() if "kafka.consumer.ConsumerIterator.makeNext" in stack
        )
        assert hung not in starving and len(starving) == len(ORDER_TOPICS) - 1

        rules = by_rule(stalled)
        (story,) = rules["KD801"]
        facts = story["facts"]
        assert stalled["findings"][0]["rule"] == "KD801" and story["source"] == "joined"
        assert facts["stalled_stream"]["topic"] == HUNG_TOPIC
        assert facts["stalled_stream"]["thread"] == hung
        assert "PaymentGateway.authorize" in facts["stalled_stream"]["doing"]
        assert facts["fetcher"] == fetcher
        assert facts["consumer_id"] == consumer_id
        assert facts["starving_topics"] == sorted(set(ORDER_TOPICS) - {HUNG_TOPIC})
        assert sorted(facts["starving_threads"]) == starving
        starving_partitions = [p for p in facts["partitions"] if p["starving"]]
        assert len(starving_partitions) == 4 and all(p["checker_lag"] > 5 for p in starving_partitions)
        # the real 0.8.2 fetcher stops fetching, so its MaxLag froze while the checker lag grew
        assert facts["max_lag"] is not None and facts["max_lag"] < 5 < facts["checker_lag_total"]
        assert facts["queue_full_by_metrics"] and facts["buffer_bound_records"] > 0
        for name in (HUNG_TOPIC, fetcher, hung, "MaxLag", *facts["starving_topics"]):
            assert name in story["message"], name
        assert story["message"] in stalled["narrative"]
        # the evidence names where each item came from
        kinds = {item["source"].split(" ")[0] for item in story["evidence"]}
        assert {"pid", "metrics", "zookeeper"} <= kinds
        # and the sources' own findings are there too, in the one vocabulary
        assert {"KD201", "KD202", "KD203", "KD701"} <= set(rules)

        # `--from` a saved dump gives the same dump findings as the live one
        saved = tmp_path / "jstack.txt"
        saved.write_text(dump)
        offline = diagnose_json(["--from", str(saved)], ExitCode.FINDINGS)
        dump_rules = lambda doc: sorted(  # noqa: E731
            (f["rule"], tuple(f["threads"])) for f in doc["findings"] if f["source"] == "dump"
        )
        assert dump_rules(offline) == dump_rules(stalled)

        # and a capture bundle of the process (its dumps and its recorded metrics.json) read
        # `--from` beside the cluster tells the live story: the topic of the stopped stream, the
        # starving topics with their checker lag per partition, MaxLag against the checker lag
        # (was: "Which topic the stopped thread serves needs the consumer's metrics")
        bundle = tmp_path / "bundle"
        code, out, err = run(["capture", "--pid", str(sandbox.pid), "--out", str(bundle), "--count", "2",
                              "--interval", "0.5"])  # fmt: skip
        assert code == ExitCode.OK and (bundle / "metrics.json").is_file(), err
        live = sandbox.diagnose_arguments()
        cluster = [a for i, a in enumerate(live) if a != "--pid" and not (i and live[i - 1] == "--pid")]
        from_bundle = diagnose_json([*cluster, "--from", str(bundle)], ExitCode.FINDINGS)
        (bundled,) = by_rule(from_bundle)["KD801"]
        assert bundled["facts"]["stalled_stream"]["topic"] == HUNG_TOPIC
        assert bundled["facts"]["starving_topics"] == facts["starving_topics"]
        starving_lags = [p["checker_lag"] for p in bundled["facts"]["partitions"] if p["starving"]]
        assert len(starving_lags) == 4 and None not in starving_lags
        assert "committed lag" in bundled["message"] and "MaxLag is" in bundled["message"]
        assert any(s["target"].endswith("(metrics.json)") and s["ok"] for s in from_bundle["sources"])


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
        # kafka-python 3.0.12 heartbeats from its I/O thread, named after the client id, which the
        # real broker reports for the group's member: the thread that keeps the member alive
        assert story["facts"]["heartbeat_thread"] == "kafka-io-billing-service"
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


def test_demo_tells_the_old_consumer_story_and_stops_everything() -> None:
    # WHEN the README's command runs (`kafkadiag demo`: the old consumer, the table a person reads)
    demo = Demo(env={**os.environ, "KAFKADIAG_WIDTH": "250"})
    code = demo.finish()
    # THEN the progress shows the real Kafka 0.8.2.2 broker healthy first, then the incident
    assert code == ExitCode.OK, demo.progress
    assert "Apache Kafka 0.8.2.2 broker is up" in demo.progress, demo.progress
    assert "Before the incident: Healthy" in demo.progress, demo.progress  # the whole progress, not a cut
    # and the printed diagnosis names the real fetcher, the hung payments stream thread (the service
    # names its workers after their topics) and the starving topics
    story = demo.stdout
    assert story.startswith("Stalled: The stream thread order-worker-payments of topic payments"), story
    assert re.search(
        r"ConsumerFetcherThread-orders-service_\S+-[0-9a-f]{8}-0-0 for broker 0 is blocked", story
    )
    assert "PaymentGateway.authorize" in story
    assert "So topics orders, shipments starve" in story
    assert "KD801 old-consumer-stall-explained" in story
    # and every process it started is gone: the three it printed and any it did not
    assert len(demo.pids()) == 3 and demo.left_behind() == []


def test_demo_tells_the_python_story_and_stops_everything() -> None:
    demo = Demo("--scenario", "python", "--format", "json")
    code = demo.finish()
    assert code == ExitCode.OK, demo.progress
    assert "Apache Kafka 3.9.1 broker is up" in demo.progress, demo.progress
    (story,) = by_rule(json.loads(demo.stdout))["KD802"]
    assert story["facts"]["poll_thread"] == "MainThread"
    assert len(demo.pids()) == 3 and demo.left_behind() == []
