"""KD803: a Java consumer's (KafkaConsumer) stalled poll thread, joined with its group."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from kafkadiag.rules.base import Evidence, Finding, Requirement, Severity
from kafkadiag.rules.cluster import ClusterRule, DiagnosisContext

if TYPE_CHECKING:
    from kafkadiag.lag.model import GroupLag

# The dump rules whose finding means the poll thread is not polling, culprit first.
POLL_STALLS = ("KD302", "KD301", "KD303", "KD304", "KD310", "KD307")


class NewConsumerStallExplained(ClusterRule):
    code = "KD803"
    name = "new-consumer-stall-explained"
    title = "A KafkaConsumer's poll thread is stuck while its group's lag grows"
    severity = Severity.ERROR
    requires = frozenset({Requirement.JAVA, Requirement.LAG})
    explanation = """
The new consumer (KafkaConsumer, 0.9+) fetches inside poll(): while the thread that calls poll()
waits for its workers, is blocked on a full hand-off queue, waits for a lock, or loops in
coordinator discovery, nothing is fetched and nothing is committed, so the group's committed
offsets stop while the log grows. Its heartbeat thread (named after the group) keeps the member in
the group until max.poll.interval.ms expires; then the member is removed, a rebalance moves its
partitions, and the stall follows them. This finding joins the thread dump's poll-thread finding
with the group the heartbeat thread names: its state, members (client and member ids, hosts),
assignment and per-partition lag.
"""
    remedy = """
Keep the poll thread polling: hand records to workers without blocking (pause the partitions when
the hand-off is full, resume when it drains), give the workers' calls timeouts, commit only what
is done. Raise max.poll.interval.ms only to cover a known worst case, not to hide a stall.
"""

    def check(self, context: DiagnosisContext) -> Iterator[Finding]:
        if context.lag is None:
            return
        heartbeats = context.heartbeat_groups()
        stalls = [finding for code in POLL_STALLS for finding in context.dump_findings(code)]
        if not stalls:
            return
        stall = stalls[0]
        for group in context.lag.groups:
            if group.source != "kafka" or not group.exists or group.group not in heartbeats:
                continue
            facts = self._facts(stall, group, heartbeats[group.group])
            where = f"{context.lag_source}, group {group.group}"
            evidence = [*stall.evidence[:5]]
            evidence += [
                Evidence(where, None, f"member {m['member_id']} (client {m['client_id']}, host {m['host']}): "
                         f"{', '.join(m['assignment']) or 'no partitions'}")
                for m in facts["members"][:4]
            ]  # fmt: skip
            evidence += [
                Evidence(where, None, "{topic}/{partition}: committed {committed_offset}, high watermark "
                         "{high_watermark}, lag {checker_lag}".format(**p))
                for p in facts["partitions"][:8]
            ]  # fmt: skip
            yield self.finding(self._message(facts, stall), stall.threads, evidence, details=facts,
                               story=stall.story or self._message(facts, stall))  # fmt: skip

    @staticmethod
    def _facts(stall: Finding, group: GroupLag, heartbeat: str) -> dict[str, Any]:
        return {
            "poll_thread": stall.threads[0] if stall.threads else None,
            "dump_rule": stall.rule,
            "dump_finding": stall.title,
            "related_threads": list(stall.threads[1:]),
            "heartbeat_thread": heartbeat,
            "group": group.group,
            "group_state": group.state,
            "members": [
                {
                    "member_id": m.member_id,
                    "client_id": m.client_id,
                    "host": m.host,
                    "assignment": [f"{topic}/{partition}" for topic, partition in m.assignment],
                }
                for m in group.members
            ],  # fmt: skip
            "checker_lag_total": group.total_lag,
            "partitions": [
                {
                    "topic": p.topic,
                    "partition": p.partition,
                    "checker_lag": p.lag,
                    "committed_offset": p.committed_offset,
                    "high_watermark": p.high_watermark,
                }
                for p in group.partitions
            ],  # fmt: skip
        }

    @staticmethod
    def _message(facts: dict[str, Any], stall: Finding) -> str:
        members = len(facts["members"])
        state = facts["group_state"] or "state unknown"
        return (
            f"The poll thread {facts['poll_thread']} of group {facts['group']} is not polling "
            f"({stall.title.lower()}); the group ({state}, {members} member(s)) "
            f"commits nothing: its lag is {facts['checker_lag_total']} over {len(facts['partitions'])} "
            f"partition(s). Its heartbeat thread ({facts['heartbeat_thread']}) keeps the member in the group "
            "until max.poll.interval.ms expires."
        )
