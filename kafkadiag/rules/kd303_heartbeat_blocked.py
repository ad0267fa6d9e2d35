"""KD303: the consumer's heartbeat thread blocked behind a thread holding the coordinator."""

from __future__ import annotations

from collections.abc import Iterator

from kafkadiag.model import ThreadStatus
from kafkadiag.rules import newconsumer, stacks
from kafkadiag.rules.base import Finding, Requirement, Rule, Severity
from kafkadiag.rules.context import AnalysisContext


class HeartbeatBlocked(Rule[AnalysisContext]):
    code = "KD303"
    name = "heartbeat-blocked"
    title = "Heartbeat thread blocked behind a thread that holds the coordinator"
    severity = Severity.ERROR
    requires = frozenset({Requirement.JAVA})
    explanation = """
Since Kafka 0.10.1 a consumer of the classic group protocol heartbeats from its own thread
(kafka-coordinator-heartbeat-thread), which synchronizes on the coordinator (and the network
client) for each heartbeat. Another thread that holds the coordinator's monitor and is stuck -
sleeping between attempts to find the coordinator (real 3.9.1, the broker of the group's
coordinator lost), or application code in a client that runs it under the monitor - keeps the
heartbeat thread from sending heartbeats: after session.timeout.ms the coordinator evicts the
member and rebalances the group. A heartbeat thread waiting a moment for a holder that is busy in
network I/O (ConsumerNetworkClient.poll) is normal and not reported; a holder that waits there
for a coordinator that does not answer is KD304's (real 4.1.1: poll() in ensureCoordinatorReady
with the broker frozen, the heartbeat thread BLOCKED behind it). The ConsumerRebalanceListener
does not run under the monitor in the released clients (1.1.1, 2.8.2, 3.9.1 and 4.1.1 read and
captured here: a listener that blocks leaves the heartbeat thread heartbeating, KD310 names it).
"""
    remedy = """
Look at what the holder is doing (quoted). If it is finding the coordinator, check that the group's
__consumer_offsets partition has a leader this host can reach; bound commitSync() and the other
calls that need the coordinator with a timeout. Never run application code that may block while
holding a client's lock.
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
                f"{holder.name}, which is {stacks.doing(holder)}. While it is, no heartbeat is sent: if "
                "the holder keeps the monitor past session.timeout.ms, the coordinator evicts the member "
                "(one dump shows the wait, not how long it lasts).",
                [holder.name, thread.name],
                evidence,
                story=f"The heartbeat thread is blocked behind {holder.name} ({stacks.doing(holder)})",
            )
