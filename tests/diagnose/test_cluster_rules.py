"""The cluster rules' mapping of the lag engine's findings and the MaxLag comparison's verdicts
into catalogue findings, on reports built here (the detection itself is tested against real
servers in tests/collect, tests/lag and tests/maxlag; the end-to-end diagnoses in this folder)."""

from __future__ import annotations

import pytest

from kafkadiag.consumer_metrics import ConsumerSettings
from kafkadiag.lag.model import GroupLag, LagReport
from kafkadiag.lag.snapshot import GroupMember, GroupSnapshot
from kafkadiag.maxlag.model import ClientComparison, MaxLagReport
from kafkadiag.rules.base import Evidence, Finding, Severity
from kafkadiag.rules.cluster import DiagnosisContext, LagFindingRule, MetricsRead
from kafkadiag.rules.engine import Report, selected_rules
from kafkadiag.rules.groupfacts import GroupFacts
from kafkadiag.rules.registry import rule_by_code

LAG_CODES = {
    "KD601": "offset-below-log-start",
    "KD602": "offset-above-high-watermark",
    "KD603": "unreadable-offset",
    "KD604": "watermark-unknown",
    "KD605": "malformed-registration",
}


def lag_report(*findings: Finding) -> LagReport:
    group = GroupLag("g1", "zookeeper", "Active", (), (), (), 0, None, tuple(findings), ())
    return LagReport(0, (), (group,), (), ())


def client(verdict: str) -> ClientComparison:
    return ClientComparison(
        client_id="c1", consumer="new", naming="0.9+", group="g1", verdict=verdict, summary="behind",
        evidence=("records-lag-max = 900",), remedy="dump the poll loop", max_lag=900, max_lag_source="x",
        min_fetch_rate=None, partitions=(), streams=(), fetcher_lag_total=900, checker_lag_total=950,
        gap_total=50, bound=None, settings=ConsumerSettings(()), lag_threshold=100,
        lag_threshold_source="default",
    )  # fmt: skip


def run(code: str, context: DiagnosisContext) -> list:
    (rule,) = [rule for rule in selected_rules(select=[code], scope="cluster")]
    return list(rule.check(context))


def lag_finding(code: str, message: str, topic: str, partitions: list[int], *evidence: str) -> Finding:
    rule = rule_by_code(code)
    assert rule is not None and issubclass(rule, LagFindingRule)
    facts = GroupFacts(GroupSnapshot("g1", "zookeeper"), (), {})
    return rule().group_finding(facts, message, evidence, topic=topic, partitions=partitions)


@pytest.mark.parametrize("code", sorted(LAG_CODES))
def test_each_lag_finding_reaches_diagnose_as_its_rule_with_where_the_lag_was_read(code: str) -> None:
    # GIVEN the lag engine's finding of this rule and one of another rule, in one group
    found = lag_finding(code, "what happened", "t1", [0, 3], "/consumers/g1/x = 1")
    other = lag_finding("KD608", "unrelated", "t1", [1])
    context = DiagnosisContext(lag_report(found, other), "zookeeper z:2181", (), None)
    # WHEN the rule runs in diagnose
    (finding,) = run(code, context)
    # THEN it is the engine's finding, named after its group and quoting where the lag was read
    assert finding.rule == code and finding.name == LAG_CODES[code]
    assert finding.severity is found.severity and finding.message == "group g1: what happened"
    assert finding.details == {"group": "g1", "source": "zookeeper", "topic": "t1", "partitions": [0, 3]}
    assert finding.evidence[0].source == "zookeeper z:2181, group g1 (zookeeper)"
    assert finding.evidence[0].text == "/consumers/g1/x = 1"
    assert run(code, DiagnosisContext(lag_report(other), "z", (), None)) == []
    assert run(code, DiagnosisContext(None, "", (), None)) == []


def test_consumer_behind_verdict_is_kd703_and_healthy_is_nothing() -> None:
    report = MaxLagReport(0, "pid", "pid 1", (client("consumer-behind"), client("healthy")))
    context = DiagnosisContext(None, "", (MetricsRead("pid 1", report),), None)
    (finding,) = run("KD703", context)
    assert finding.details["client_id"] == "c1" and finding.details["max_lag"] == 900
    assert finding.evidence[0].source == "metrics pid 1" and finding.remedy == "dump the poll loop"
    assert all(run(code, context) == [] for code in ("KD701", "KD702", "KD704", "KD705"))


def group_with_members(group: str, *client_ids: str) -> GroupLag:
    members = tuple(
        GroupMember(f"{client}-{index}", client_id=client) for index, client in enumerate(client_ids)
    )
    return GroupLag(group, "kafka", "Stable", members, (), (), 0, None, (), ())


def test_heartbeat_threads_are_tied_to_groups_by_name_or_by_a_member_client_id() -> None:
    report = LagReport(
        0,
        (),
        (
            group_with_members("orders", "orders-app"),
            group_with_members("billing", "billing-service", "other-service"),
            group_with_members("audit", "audit-service"),
        ),
        (),
        (),
    )
    names = (
        "MainThread",
        "kafka-coordinator-heartbeat-thread | orders",
        "kafka-io-orders-app",  # orders is already tied by its Java-style heartbeat thread
        "kafka-io-billing-service",
        "kafka-io-unknown-client",
    )
    context = DiagnosisContext(report, "kafka b:9092", (), None, names)
    assert context.heartbeat_groups() == {
        "orders": "kafka-coordinator-heartbeat-thread | orders",
        "billing": "kafka-io-billing-service",
    }
    # without the coordinator's member list, an I/O thread names no group
    assert DiagnosisContext(None, "", (), None, names).heartbeat_groups() == {
        "orders": "kafka-coordinator-heartbeat-thread | orders"
    }


FETCHER = "ConsumerFetcherThread-orders_host-1700000000000-0a1b2c3d-0-0"


def stalled_client() -> ClientComparison:
    """An old consumer whose payments stream queue was read full once (2 of 2 chunks)."""
    from dataclasses import replace

    from kafkadiag.maxlag.model import StreamComparison

    owner = "orders_host-1700000000000-0a1b2c3d-0"
    full = StreamComparison("payments", "0", 2, 2, "full", (0, 1), owner, "jmx")
    stalled = client("streams-not-draining")
    return replace(stalled, consumer="old", streams=(full,), summary="stream queue full")


def dump_report(*findings: Finding) -> Report:
    return Report("verdict", findings, (), (), ())


def dump_finding(code: str, message: str, *threads: str) -> Finding:
    rule = rule_by_code(code)
    assert rule is not None
    return rule().finding(message, threads, [Evidence("jstack", 3, "at LinkedBlockingQueue.put")])


def metrics_context(dumps: Report | None, names: tuple[str, ...]) -> DiagnosisContext:
    report = MaxLagReport(0, "pid", "pid 1", (stalled_client(),))
    return DiagnosisContext(None, "", (MetricsRead("pid 1", report),), dumps, names)


def test_a_full_stream_queue_is_an_error_only_when_the_dump_shows_the_fetcher_blocked() -> None:
    # GIVEN a full queue read once, and a dump of the same consumer whose fetcher is parked in put()
    blocked = dump_finding("KD201", f"{FETCHER} is parked in put under enqueue. The lock ...", FETCHER)
    (finding,) = run("KD701", metrics_context(dump_report(blocked), (FETCHER, "main")))
    # THEN the stall is stated, quoting the dump's finding
    assert finding.severity is Severity.ERROR
    said = f"KD201: {FETCHER} is parked in put under enqueue"
    assert finding.details["weighed"] == f"The thread dump confirms it ({said})"
    # and KD203 (the stream thread that stopped, naming the fetcher it holds up) confirms it too
    stopped = dump_finding("KD203", "worker-1 is not waiting for data", "worker-1", FETCHER)
    (finding,) = run("KD701", metrics_context(dump_report(stopped), (FETCHER, "worker-1")))
    assert finding.severity is Severity.ERROR
    # but a note on the fetcher's thread is no stall
    busy = dump_finding("KD503", "hot", FETCHER)
    assert busy.severity is not Severity.ERROR
    (finding,) = run("KD701", metrics_context(dump_report(busy), (FETCHER,)))
    assert finding.severity is Severity.INFO


def test_a_full_stream_queue_beside_a_dump_of_its_unblocked_fetcher_is_a_note() -> None:
    # GIVEN the same reading, and a dump of that consumer in which no rule finds its fetcher blocked
    other_fetcher = "ConsumerFetcherThread-other_h-1-0a1b2c3d-0-0"
    other = dump_finding("KD201", "another consumer's fetcher", other_fetcher)
    (finding,) = run("KD701", metrics_context(dump_report(other), (FETCHER, "main")))
    # THEN it is a note that says what the dump shows, and not a stall
    assert finding.severity is Severity.INFO
    assert f"shows {FETCHER} not blocked in put()" in finding.message
    assert "no stall is shown" in finding.details["weighed"]


def test_a_full_stream_queue_without_a_dump_of_that_consumer_is_a_warning_that_says_so() -> None:
    for dumps, names in ((None, ()), (dump_report(), ("ConsumerFetcherThread-other_h-1-0a1b2c3d-0-0",))):
        (finding,) = run("KD701", metrics_context(dumps, names))
        assert finding.severity is Severity.WARNING
        assert "no thread dump of this consumer" in finding.message
