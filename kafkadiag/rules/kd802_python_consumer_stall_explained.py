"""KD802: a Python consumer's stalled poll loop, joined with its group's committed offsets."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from kafkadiag.rules.base import Evidence, Finding, Requirement, Severity
from kafkadiag.rules.cluster import ClusterRule, DiagnosisContext


class PythonConsumerStallExplained(ClusterRule):
    code = "KD802"
    name = "python-consumer-stall-explained"
    title = "A Python poll loop blocked on its full hand-off queue while the group's lag grows"
    severity = Severity.ERROR
    requires = frozenset({Requirement.PYTHON, Requirement.LAG})
    explanation = """
A Python consumer (kafka-python, confluent-kafka, aiokafka) hands records from its poll loop to
worker threads through a bounded queue. When the workers stop taking (they wait on a downstream
call or a lock), the queue fills and the poll loop blocks in put(): it neither polls nor commits,
so the group's committed offsets stop while the log grows. The heartbeat thread may keep the
member in the group until max.poll.interval.ms expires, then a rebalance moves the partitions and
the stall moves with them. This finding joins the py-spy dump (the blocked poll loop, the workers
and what they do) with the group's committed offsets and lag.
"""
    remedy = """
Give the workers' downstream calls timeouts; when the queue is full, pause the partitions
(consumer.pause) and keep calling poll() instead of blocking in put(), resuming when the workers
catch up; commit only what the workers finished.
"""

    def check(self, context: DiagnosisContext) -> Iterator[Finding]:
        if context.lag is None:
            return
        for blocked in context.dump_findings("KD401"):
            poll_thread, *workers = blocked.threads
            groups = [group for group in context.lag.groups if group.source == "kafka" and group.exists]
            for group in groups:
                partitions = [
                    {"topic": p.topic, "partition": p.partition, "checker_lag": p.lag,
                     "committed_offset": p.committed_offset, "high_watermark": p.high_watermark}
                    for p in group.partitions
                ]  # fmt: skip
                facts: dict[str, Any] = {
                    "poll_thread": poll_thread,
                    "workers": workers,
                    "group": group.group,
                    "group_state": group.state,
                    "members": len(group.members),
                    "checker_lag_total": group.total_lag,
                    "partitions": partitions,
                    "heartbeat_thread": context.heartbeat_groups().get(group.group),
                }
                where = f"{context.lag_source}, group {group.group}"
                evidence = [*blocked.evidence[:6]]
                evidence += [
                    Evidence(where, None, "{topic}/{partition}: committed {committed_offset}, high watermark "
                             "{high_watermark}, lag {checker_lag}".format(**p))
                    for p in partitions[:8]
                ]  # fmt: skip
                message = (
                    f"The poll loop {poll_thread} is blocked putting records into its full hand-off queue, "
                    "so "
                    f"group {group.group} ({group.state or 'state unknown'}, {len(group.members)} member(s)) "
                    f"neither polls nor commits: its lag is {group.total_lag} over {len(partitions)} "
                    f"partition(s). The workers that should drain the queue are busy elsewhere: "
                    f"{', '.join(workers) or 'none found'}."
                )
                yield self.finding(
                    message,
                    blocked.threads,
                    evidence,
                    story=f"The poll loop {poll_thread} is blocked on its full hand-off queue while group "
                    f"{group.group}'s lag grows to {group.total_lag}",
                    details=facts,
                )
