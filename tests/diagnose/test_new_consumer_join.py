"""KD803: a Java consumer's captured thread dump (its poll thread blocked on a full hand-off queue,
its heartbeat thread naming the group) joined with that group's offsets on the real broker."""

from __future__ import annotations

import json

from kafkadiag.exitcodes import ExitCode
from tests.conftest import CAPTURED
from tests.infra import workload
from tests.infra.cli import run
from tests.infra.workload import Cluster

GROUP = "fulfilment"


def test_the_poll_thread_stall_is_joined_with_the_group_its_heartbeat_thread_names(cluster: Cluster) -> None:
    # GIVEN the group the dump's heartbeat thread names ("kafka-coordinator-heartbeat-thread |
    # fulfilment": Apache Kafka 4.1.1's real consumer, its poll thread parked on a full hand-off
    # queue) with committed offsets behind the log on the real broker
    topic = cluster.topic(2, {0: 30, 1: 20})
    workload.commit_offsets_without_joining(cluster.bootstrap, GROUP, {(topic, 0): 10, (topic, 1): 20})
    dump = CAPTURED / "real-new-consumer-handoff-full-4.1.1" / "jstack-l.txt"
    # WHEN diagnose reads the dump and the group
    code, out, err = run(["diagnose", "--bootstrap-server", cluster.bootstrap, "--group", GROUP,
                          "--from", str(dump), "--format", "json"])  # fmt: skip
    assert code == ExitCode.FINDINGS, err
    findings = {finding["rule"]: finding for finding in json.loads(out)["findings"]}
    # THEN one record joins the poll thread, its workers, the heartbeat thread and the group's lag
    story = findings["KD803"]
    facts = story["facts"]
    assert facts["poll_thread"] == "fulfilment-poll" and facts["dump_rule"] == "KD302"
    workers = {"fulfilment-worker-1", "fulfilment-worker-2", "fulfilment-worker-3"}
    assert workers <= set(facts["related_threads"])
    assert facts["heartbeat_thread"] == "kafka-coordinator-heartbeat-thread | fulfilment"
    lags = {(p["topic"], p["partition"]): p["checker_lag"] for p in facts["partitions"]}
    assert lags[(topic, 0)] == 20 and lags[(topic, 1)] == 0
    assert "fulfilment-poll" in story["message"] and "max.poll.interval.ms" in story["message"]
    assert "KD302" in findings
    # and a group no heartbeat thread names is not joined
    other = workload.unique("other")
    code, out, _ = run(["diagnose", "--bootstrap-server", cluster.bootstrap, "--group", other,
                        "--from", str(dump), "--format", "json"])  # fmt: skip
    assert "KD803" not in {finding["rule"] for finding in json.loads(out)["findings"]}
