"""Shared by the rules `kafkadiag diagnose` runs over what it read from the cluster and the
consumer's metrics: the lag engine's and the MaxLag comparison's findings, one vocabulary with the
dump rules (codes, severities, `rules`, `explain`, `--select/--ignore`).

A rule here turns facts already computed (a lag report, a MaxLag comparison, the dump findings)
into catalogue findings; like every rule it does no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from kafkadiag.rules.base import SCOPE_CLUSTER, Evidence, Finding, Requirement, Rule, Severity

if TYPE_CHECKING:
    from kafkadiag.lag.model import LagReport
    from kafkadiag.maxlag.model import ClientComparison, MaxLagReport
    from kafkadiag.rules.engine import Report


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

    def dump_findings(self, code: str) -> list[Finding]:
        if self.dumps is None:
            return []
        return [finding for finding in self.dumps.findings if finding.rule == code]


# Kafka's Java client (0.10.1+) and kafka-python 2.x: "kafka-coordinator-heartbeat-thread | <group>";
# early kafka-python 3.0 releases: "<group>-heartbeat".
HEARTBEAT_THREAD = re.compile(
    r"^kafka-coordinator-heartbeat-thread \| (?P<java>.+)$|^(?P<python>.+)-heartbeat$"
)

# kafka-python 3.0.12's I/O thread, which also sends the heartbeats: "kafka-io-<client id>".
PYTHON_IO_THREAD_PREFIX = "kafka-io-"

_SEVERITIES = {"error": Severity.ERROR, "warning": Severity.WARNING, "info": Severity.INFO}


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
    """One kind of the lag engine's findings (`lag_code`, docs/lag.md) as a catalogue rule."""

    lag_code: ClassVar[str]
    requires = frozenset({Requirement.LAG})

    def check(self, context: DiagnosisContext) -> Iterator[Finding]:
        if context.lag is None:
            return
        for group in context.lag.groups:
            for found in group.findings:
                if found.code != self.lag_code:
                    continue
                where = f"{context.lag_source}, group {group.group} ({group.source})"
                yield self.finding(
                    f"group {group.group}: {found.message}",
                    (),
                    [Evidence(where, None, line) for line in found.evidence]
                    or [Evidence(where, None, found.message)],
                    severity=_SEVERITIES.get(found.severity, self.severity),
                    details={
                        "group": group.group,
                        "source": group.source,
                        "topic": found.topic,
                        "partitions": list(found.partitions),
                    },
                )


class MetricsVerdictRule(ClusterRule):
    """One unhealthy verdict of the MaxLag comparison (`verdict`, docs/maxlag.md) as a rule."""

    verdict: ClassVar[str]
    requires = frozenset({Requirement.CONSUMER_METRICS})

    def check(self, context: DiagnosisContext) -> Iterator[Finding]:
        for read, client in context.clients():
            if client.verdict != self.verdict:
                continue
            yield self.finding(
                f"client {client.client_id} (group {client.group or 'unknown'}): {client.summary}",
                [name for name, _ in client.fetcher_threads],
                [Evidence(f"metrics {read.source}", None, line) for line in client.evidence],
                remedy=client.remedy,
                details={
                    "client_id": client.client_id,
                    "group": client.group,
                    "max_lag": client.max_lag,
                    "fetcher_lag_total": client.fetcher_lag_total,
                    "checker_lag_total": client.checker_lag_total,
                    "gap_total": client.gap_total,
                    "buffer_bound_records": client.bound.records if client.bound else None,
                    "streams": [
                        {"topic": s.topic, "thread_id": s.thread_id, "queue_size": s.queue_size,
                         "capacity": s.capacity, "state": s.state, "partitions": list(s.partitions),
                         "owner": s.owner}
                        for s in client.streams
                    ],
                },
            )  # fmt: skip
