"""Shared by the rules `kafkadiag diagnose` runs over what it read from the cluster and the
consumer's metrics: the lag engine's and the MaxLag comparison's findings, one vocabulary with the
dump rules (codes, severities, `rules`, `explain`, `--select/--ignore`).

A rule here turns facts already computed (a lag report, a MaxLag comparison, the dump findings)
into catalogue findings; like every rule it does no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from typing import TYPE_CHECKING, ClassVar

from kafkadiag.rules.base import SCOPE_CLUSTER, Evidence, Finding, Requirement, Rule, Severity

if TYPE_CHECKING:
    from kafkadiag.lag.model import LagReport, PartitionLag
    from kafkadiag.maxlag.facts import ClientFacts, Verdict
    from kafkadiag.maxlag.model import ClientComparison, MaxLagReport
    from kafkadiag.rules.engine import Report
    from kafkadiag.rules.groupfacts import GroupFacts


@dataclass(frozen=True)
class MetricsRead:
    """One consumer JVM's (or endpoint's) MaxLag comparison, and where it was read."""

    source: str  # "pid 4711", "jmx host:9999" ...
    report: MaxLagReport


@dataclass(frozen=True)
class DiagnosisContext:
    """Everything `diagnose` read, for the cluster rules: no rule reads anything itself."""

    lag: LagReport | None
    lag_source: str
    metrics: tuple[MetricsRead, ...]
    dumps: Report | None
    # The names of the threads in the dumps (latest dump of each process): heartbeat threads name
    # their group ("kafka-coordinator-heartbeat-thread | orders", kafka-python's "orders-heartbeat")
    # or their client ("kafka-io-billing-service", kafka-python 3.0.12).
    thread_names: tuple[str, ...] = ()

    def heartbeat_groups(self) -> dict[str, str]:
        """group -> the name of the dumped thread that sends the group's heartbeats.

        The Java client and kafka-python before 3.0.12 name that thread after the group;
        kafka-python 3.0.12 heartbeats from its I/O thread, named after the client id, which ties
        it to a group through the members the group coordinator reports (client id per member, as
        `kafka-consumer-groups --describe --members` shows them).
        """
        found: dict[str, str] = {}
        for name in self.thread_names:
            match = HEARTBEAT_THREAD.match(name)
            if match:
                found[match.group("java") or match.group("python")] = name
        dumped = set(self.thread_names)
        for group in self.lag.groups if self.lag is not None else ():
            members_io = {f"{PYTHON_IO_THREAD_PREFIX}{m.client_id}" for m in group.members if m.client_id}
            io_threads = sorted(members_io & dumped)
            if io_threads and group.group not in found:
                found[group.group] = io_threads[0]
        return found

    def clients(self) -> Iterator[tuple[MetricsRead, ClientComparison]]:
        for read in self.metrics:
            for client in read.report.clients:
                yield read, client

    def fetchers_dumped(self, client: ClientComparison) -> list[str]:
        """The old consumer's fetcher threads of this client found in the thread dumps: named in
        its metrics, or named after the consumer id its streams' owners start with."""
        return [name for name in self.thread_names if runs_fetcher(client, name)]

    def dump_findings(self, code: str) -> list[Finding]:
        if self.dumps is None:
            return []
        return [finding for finding in self.dumps.findings if finding.rule == code]


def runs_fetcher(client: ClientComparison, fetcher: str) -> bool:
    """Whether the fetcher thread of this name belongs to the client: its metrics name it, or
    the consumer id in its name (ConsumerFetcherThread-<consumer id>-<n>-<broker>) starts the
    owner of one of the client's streams."""
    from kafkadiag.maxlag.facts import consumer_id_of_fetcher

    if fetcher in (name for name, _ in client.fetcher_threads):
        return True
    consumer_id = consumer_id_of_fetcher(fetcher)
    return consumer_id is not None and any((s.owner or "").startswith(consumer_id) for s in client.streams)


# Kafka's Java client (0.10.1+) and kafka-python 2.x: "kafka-coordinator-heartbeat-thread | <group>";
# early kafka-python 3.0 releases: "<group>-heartbeat".
HEARTBEAT_THREAD = re.compile(
    r"^kafka-coordinator-heartbeat-thread \| (?P<java>.+)$|^(?P<python>.+)-heartbeat$"
)

# kafka-python 3.0.12's I/O thread, which also sends the heartbeats: "kafka-io-<client id>".
PYTHON_IO_THREAD_PREFIX = "kafka-io-"


class ClusterRule(Rule["DiagnosisContext"]):
    """A rule over `DiagnosisContext` (abstract: it has no code of its own)."""

    scope = SCOPE_CLUSTER
    code = "KD000"  # placeholders for the checks of the base class; every subclass sets its own
    name = "cluster-rule"
    title = "cluster rule"
    severity = Severity.INFO
    explanation = "-"
    remedy = "-"

    def check(self, context: DiagnosisContext) -> Iterator[Finding]:
        raise NotImplementedError


class LagFindingRule(ClusterRule):
    """A KD6xx rule: judges one group when the lag engine computes it (`group_check`), and
    brings those findings into `diagnose` (`check`) with where the lag was read."""

    requires = frozenset({Requirement.LAG})

    def group_check(self, facts: GroupFacts) -> Iterator[Finding]:
        raise NotImplementedError

    def group_finding(
        self,
        facts: GroupFacts,
        message: str,
        evidence: Iterable[str],
        *,
        topic: str | None = None,
        partitions: Iterable[int] = (),
    ) -> Finding:
        """A finding about one group: evidence lines quote znodes and offsets as read."""
        where = f"{facts.snapshot.source}, group {facts.name}"
        return self.finding(
            message,
            (),
            [Evidence(where, None, line) for line in evidence],
            details={
                "group": facts.name,
                "source": facts.snapshot.source,
                "topic": topic,
                "partitions": list(partitions),
            },
        )

    def per_topic(
        self,
        facts: GroupFacts,
        partitions: Iterable[PartitionLag],
        message: Callable[[str, list[PartitionLag]], str],
        line: Callable[[PartitionLag], str],
    ) -> Iterator[Finding]:
        """One finding per topic of the partitions given, quoting a line per partition."""
        from kafkadiag.lag.evidence import by_topic, limited

        for topic, members in by_topic(partitions):
            yield self.group_finding(
                facts,
                message(topic, members),
                limited([line(partition) for partition in members]),
                topic=topic,
                partitions=[partition.partition for partition in members],
            )

    def check(self, context: DiagnosisContext) -> Iterator[Finding]:
        if context.lag is None:
            return
        for group in context.lag.groups:
            where = f"{context.lag_source}, group {group.group} ({group.source})"
            for found in group.findings:
                if found.rule != self.code:
                    continue
                evidence = [Evidence(where, None, line.text) for line in found.evidence]
                yield replace(
                    found,
                    message=f"group {group.group}: {found.message}",
                    evidence=tuple(evidence or [Evidence(where, None, found.message)]),
                )


class MetricsVerdictRule(ClusterRule):
    """One unhealthy verdict of the MaxLag comparison (`verdict`, docs/maxlag.md) as a rule."""

    verdict: ClassVar[str]
    requires = frozenset({Requirement.CONSUMER_METRICS})

    def judge(self, facts: ClientFacts) -> Verdict | None:
        """This rule's verdict on one client's comparison, or None when it does not hold."""
        raise NotImplementedError

    def decided(self, summary: str, evidence: list[str], remedy: str) -> Verdict:
        """The verdict this rule names, worded for the client it judged."""
        from kafkadiag.maxlag.facts import Verdict

        return Verdict(self.verdict, summary, evidence, remedy, rule=self.code, title=self.title)

    def weigh(self, context: DiagnosisContext, client: ClientComparison) -> tuple[Severity, str]:
        """How much this verdict weighs beside what else `diagnose` read, and the sentence that
        says why when it is not the rule's own severity ("" otherwise). Most verdicts stand on
        the metrics alone."""
        return self.severity, ""

    def check(self, context: DiagnosisContext) -> Iterator[Finding]:
        for read, client in context.clients():
            if client.verdict != self.verdict:
                continue
            severity, weighed = self.weigh(context, client)
            message = f"client {client.client_id} (group {client.group or 'unknown'}): {client.summary}"
            yield self.finding(
                f"{message}. {weighed}" if weighed else message,
                [name for name, _ in client.fetcher_threads],
                [Evidence(f"metrics {read.source}", None, line) for line in client.evidence],
                severity=severity,
                remedy=client.remedy,
                details={
                    "client_id": client.client_id,
                    "group": client.group,
                    "max_lag": client.max_lag,
                    "fetcher_lag_total": client.fetcher_lag_total,
                    "checker_lag_total": client.checker_lag_total,
                    "gap_total": client.gap_total,
                    "buffer_bound_records": client.bound.records if client.bound else None,
                    "weighed": weighed or None,
                    "streams": [
                        {"topic": s.topic, "thread_id": s.thread_id, "queue_size": s.queue_size,
                         "capacity": s.capacity, "state": s.state, "partitions": list(s.partitions),
                         "owner": s.owner}
                        for s in client.streams
                    ],
                },
            )  # fmt: skip
