"""`diagnose` on a real broker's groups: lag that nobody consumes is said, never called healthy,
and a healthy verdict drawn from one reading of the lag says so.

GIVEN a group with committed offsets, lag 2,000 and no member (the coordinator calls it Empty),
WHEN diagnose reads it, THEN KD612 names the group, quotes its state and member count from
DescribeGroups, and the verdict is "At risk", not "Healthy". GIVEN a group whose member is alive
and caught up, THEN the verdict is Healthy and says it rests on one reading.
"""

from __future__ import annotations

from kafkadiag.exitcodes import ExitCode
from tests.infra import workload
from tests.infra.cli import run, run_json
from tests.infra.servers import ServerProcess


def test_lag_with_no_member_is_not_healthy(broker: ServerProcess) -> None:
    topic = workload.unique("billing-events")
    workload.create_topic(broker.address, topic, 2)
    workload.produce(broker.address, topic, {0: 1500, 1: 1000})
    group = workload.unique("billing")
    workload.commit_offsets_without_joining(broker.address, group, {(topic, 0): 300, (topic, 1): 200})
    args = ["diagnose", "--bootstrap-server", broker.address, "--group", group]
    document = run_json(args, expect=ExitCode.FINDINGS)
    assert document["verdict"].startswith("At risk"), document["verdict"]
    (finding,) = [f for f in document["findings"] if f["rule"] == "KD612"]
    assert finding["severity"] == "warning"
    assert "Empty with 0 members and lag 2000 over 2 partition(s)" in finding["message"]
    quoted = [line["text"] for line in finding["evidence"]]
    assert "DescribeGroups: state Empty, 0 members" in quoted
    assert f"{topic}/0: committed 300, high watermark 1500, lag 1200" in quoted
    code, text, _ = run(args)
    assert code == ExitCode.FINDINGS
    assert "Healthy" not in text


def test_a_healthy_verdict_from_one_reading_says_so(broker: ServerProcess) -> None:
    topic = workload.unique("billing-live")
    workload.create_topic(broker.address, topic, 1)
    workload.produce(broker.address, topic, {0: 5})
    group = workload.unique("billing-live")
    with workload.new_consumer(broker.address, group, [topic]) as member:
        member.consume(5)
        args = ["diagnose", "--bootstrap-server", broker.address, "--group", group]
        document = run_json(args, expect=ExitCode.OK)
    assert document["verdict"].startswith("Healthy"), document["verdict"]
    assert "rests on one reading" in document["verdict"]
    assert document["findings"] == []
