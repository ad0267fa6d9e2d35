"""KD303: the consumer's heartbeat thread blocked behind a stuck thread holding the coordinator."""

from __future__ import annotations

from collections.abc import Iterator

from kafkadiag.model import ThreadStatus
from kafkadiag.rules import newconsumer, stacks
from kafkadiag.rules.base import Finding, Requirement, Rule, Severity
from kafkadiag.rules.context import AnalysisContext


class HeartbeatBlocked(Rule):
    code = "KD303"
    name = "heartbeat-blocked"
    title = "Heartbeat thread blocked behind a stuck thread"
    severity = Severity.ERROR
    requires = frozenset({Requirement.JAVA})
    explanation = """
Since Kafka 0.10.1 a consumer heartbeats from its own thread (kafka-coordinator-heartbeat-thread),
which synchronizes on the coordinator (and the network client) for each heartbeat. The poll
thread holds the same monitor while it rebalances and runs the ConsumerRebalanceListener. When
the holder is stuck - a listener doing slow I/O, a callback waiting on a lock - the heartbeat
thread cannot send heartbeats: after session.timeout.ms the coordinator evicts the member and
rebalances the group. A heartbeat thread waiting a moment for a holder that is busy in network
I/O (ConsumerNetworkClient.poll) is normal and not reported.
"""
    remedy = """
Look at what the holder is doing (quoted). Keep rebalance listeners and anything run inside
poll() fast: no blocking I/O, no waiting on application locks; commit synchronously but with a
bounded timeout; move slow cleanup out of onPartitionsRevoked.
"""

    def check(self, context: AnalysisContext) -> Iterator[Finding]:
        dump = context.dump
        graph = context.graph()
        for index in newconsumer.heartbeat_positions(dump):
            thread = dump.threads[index]
            if thread.status is ThreadStatus.RUNNABLE:
                continue
            waiting = thread.waits_for()
            if waiting is None or waiting.kind.value == "waiting on":
                continue  # Object.wait between heartbeats: idle
            holders = [graph.thread(i) for i in graph.blockers(index)]
            if not holders:
                continue
            holder = holders[0]
            if holder.status is ThreadStatus.RUNNABLE and stacks.has_frame(
                holder, *newconsumer.NETWORK_POLL, suffix=True
            ):
                continue  # a momentary wait: the holder is doing network I/O, as poll() does
            evidence = [context.header(thread), context.event(thread, waiting), context.header(holder)]
            held = next((lock for lock in holder.held_locks() if lock.lock_id == waiting.lock_id), None)
            if held is not None:
                evidence.append(context.held(holder, held))
            application = stacks.first_application_frame(holder)
            if holder.frames:
                evidence.append(context.frame(holder, 0))
            if application is not None and application != 0:
                evidence.append(context.frame(holder, application))
            yield self.finding(
                f"Heartbeat thread {thread.name} is blocked on {waiting.lock_class} held by "
                f"{holder.name}, which is {stacks.doing(holder)}. No heartbeats are sent: the member "
                "will be evicted after session.timeout.ms.",
                [holder.name, thread.name],
                evidence,
                story=f"The heartbeat thread is blocked behind {holder.name} ({stacks.doing(holder)})",
            )
