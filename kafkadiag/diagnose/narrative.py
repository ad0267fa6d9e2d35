"""The story a diagnosis starts with: the joined findings' explanations first; else what the
sources show, healthy or not; and what could not be read."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kafkadiag.diagnosis import SourceStatus
from kafkadiag.findings import Finding, Severity
from kafkadiag.lag.model import known_sum_text

# A group with members and lag, read once, may be consuming or stopped: `check` refuses to judge
# it from one sample, and a healthy diagnosis says what it rests on.
ONE_READING = (
    "the verdict rests on one reading of the lag, which cannot tell a consumer that moves from one "
    "that stopped (kafkadiag check --samples 2 can)"
)


def compose(
    joined: Sequence[Finding],
    findings: Sequence[tuple[str, Finding]],
    sources: Sequence[SourceStatus],
    lag: Any,
    dump_report: Any,
    metrics: Sequence[Any],
) -> tuple[str, list[str]]:
    lines: list[str] = [finding.message for finding in joined]
    worst = max((f.severity for _, f in findings), key=lambda s: s.rank, default=None)
    if not joined:
        if dump_report is not None and worst is not None:
            lines.append(dump_report.verdict)
        lines.extend(_lag_lines(lag))
        lines.extend(_metrics_lines(metrics, findings))
    unread = [source for source in sources if not source.ok]
    for source in unread:
        lines.append(f"Not read: {source.target}: {source.detail}.")
    if worst is Severity.ERROR:
        verdict = "Stalled: " + (joined[0].story if joined else _first_story(findings))
    elif worst is Severity.WARNING:
        verdict = "At risk: " + _first_story(findings)
    elif unread:
        verdict = "Incomplete: no problem in what was read, but not every source could be read"
    else:
        verdict = "Healthy: " + _healthy_summary(lag, dump_report, metrics)
    return verdict, lines


def _first_story(findings: Sequence[tuple[str, Finding]]) -> str:
    ranked = sorted((f for _, f in findings), key=lambda f: -f.severity.rank)
    top = ranked[0]
    return top.story or top.title


def _lag_lines(lag: Any) -> list[str]:
    if lag is None:
        return []
    lines = []
    for group in lag.groups:
        if group.exists is None:
            lines.append(f"Group {group.group}: not read ({_unreached(lag)}).")
            continue
        if not group.exists:
            lines.append(f"Group {group.group}: not found ({group.source}).")
            continue
        lines.append(
            f"Group {group.group} ({group.source}, {group.state or 'state unknown'}): lag "
            f"{group.total_lag} over {len(group.partitions)} partition(s), max {group.max_lag}."
        )
    return lines


def _unreached(lag: Any) -> str:
    """Why a group is unknown: a store that could hold it was not reached. Its cause is said
    once, with the source not read, not again for every group."""
    from kafkadiag.lag.snapshot import SOURCE_KAFKA, SOURCE_ZOOKEEPER, unread_cause

    names = {SOURCE_ZOOKEEPER: "ZooKeeper", SOURCE_KAFKA: "the brokers"}
    causes = [f"{names.get(source, source)} {unread_cause(error)}" for source, error in lag.unreachable]
    return " and ".join(causes) if causes else "its store could not be read"


def _metrics_lines(metrics: Sequence[Any], findings: Sequence[tuple[str, Finding]]) -> list[str]:
    """A line per client: its verdict's title, MaxLag and the checker lag, and how the verdict
    was weighed against the thread dump where that changed its severity (KD701)."""
    weighed = {
        (finding.rule, finding.details.get("client_id")): finding.details.get("weighed")
        for _, finding in findings
        if finding.rule.startswith("KD7")
    }
    lines = []
    for read in metrics:
        for client in read.report.clients:
            line = f"Consumer {client.client_id} ({read.source}): {client.title}; {_lag_words(client)}."
            why = weighed.get((client.rule, client.client_id))
            lines.append(f"{line} {why}." if why else line)
    return lines


def _lag_words(client: Any) -> str:
    """MaxLag and the checker lag, each as read or said not read (never a bare None)."""
    max_lag = "MaxLag not in the metrics" if client.max_lag is None else f"MaxLag {client.max_lag}"
    checker = client.checker_lag_total
    group = f" of group {client.group}" if client.group else ""
    return f"{max_lag}, checker lag{group} {'not read' if checker is None else checker}"


def _healthy_summary(lag: Any, dump_report: Any, metrics: Sequence[Any]) -> str:
    parts = []
    if lag is not None:
        totals = [group.total_lag for group in lag.groups]
        parts.append(f"{len(lag.groups)} group(s), {known_sum_text('total lag', totals, 'groups')}")
        if lag.samples <= 1 and any(group.members for group in lag.groups):
            parts.append(ONE_READING)
    if dump_report is not None:
        threads = sum(series.threads for series in dump_report.series)
        parts.append(f"no stall in the thread dumps ({threads} threads)")
    if metrics:
        parts.append("the fetchers keep up")
    return ", ".join(parts) or "nothing wrong found"
