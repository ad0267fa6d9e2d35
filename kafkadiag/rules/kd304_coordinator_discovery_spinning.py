"""KD304: the poll thread retries coordinator discovery while holding the coordinator lock."""

from __future__ import annotations

from collections.abc import Iterator

from kafkadiag.rules import newconsumer, stackindex, stacks
from kafkadiag.rules.base import Finding, Requirement, Rule, Severity
from kafkadiag.rules.context import AnalysisContext

DISCOVERY = ("AbstractCoordinator.ensureCoordinatorReady", "AbstractCoordinator.lookupCoordinator")
# ensureCoordinatorReady sleeps retry.backoff.ms only after a lookup failed (Timer.sleep from 2.0,
# Time.sleep before): a thread asleep there is retrying. One waiting for the FindCoordinator answer
# may be on its first lookup (real 4.1.1, fixtures/captured/real-new-consumer-coordinator-lost-4.1.1):
# one dump does not show it retrying, and was told as "keeps retrying".
BACKOFF_SLEEP = "java.lang.Thread.sleep"


class CoordinatorDiscoverySpinning(Rule[AnalysisContext]):
    code = "KD304"
    name = "coordinator-discovery-spinning"
    title = "Coordinator discovery (a lookup or its retries) with the coordinator lock held"
    severity = Severity.WARNING
    requires = frozenset({Requirement.JAVA})
    explanation = """
The consumer cannot find its group coordinator (FindCoordinator fails: the __consumer_offsets
partition's leader is unavailable, the broker is unreachable, or ACLs deny it) and retries in
ensureCoordinatorReady, sleeping retry.backoff.ms between attempts - while holding the
coordinator's monitor. Nothing is consumed, and the heartbeat thread, which needs the same
monitor, is blocked behind it.
"""
    remedy = """
Check the brokers: is the __consumer_offsets partition for this group led and in sync
(kafka-topics --describe --topic __consumer_offsets), can this host reach the coordinator's
advertised listener, do ACLs allow DESCRIBE on the group? The client recovers by itself once the
coordinator answers.
"""

    def check(self, context: AnalysisContext) -> Iterator[Finding]:
        dump = context.dump
        graph = context.graph()
        for index in stackindex.positions_with(dump, *DISCOVERY, suffix=True):
            thread = dump.threads[index]
            discovery = stacks.index_of(thread, *DISCOVERY, suffix=True)
            if discovery is None:
                continue
            coordinator_locks = [
                lock
                for lock in thread.held_locks()
                if (lock.lock_class or "").startswith(newconsumer.COORDINATOR_CLASSES)
            ]
            victims = [graph.thread(i) for i in graph.blocked_by(index)]
            evidence = [context.header(thread), context.frame(thread, discovery)]
            if thread.frames:
                evidence.insert(1, context.frame(thread, 0))
            evidence += [context.held(thread, lock) for lock in coordinator_locks]
            for victim in victims[:3]:
                evidence.append(context.header(victim))
                event = victim.waits_for()
                if event is not None:
                    evidence.append(context.event(victim, event))
            behind = f"; {', '.join(v.name for v in victims)} blocked behind it" if victims else ""
            holding = " while holding the coordinator lock" if coordinator_locks else ""
            sleep = stacks.index_of(thread, BACKOFF_SLEEP)
            if sleep is not None and sleep < discovery:
                doing, story = (
                    "is retrying coordinator discovery",
                    "keeps retrying to find the group coordinator",
                )
                since = ""
            else:
                doing, story = "is looking for its group coordinator", "is looking for the group coordinator"
                since = (
                    " One dump does not show how long it has looked, nor whether a lookup failed: the "
                    "retry.backoff.ms sleep between attempts, or dumps a few seconds apart, show it retrying."
                )
            yield self.finding(
                f"{thread.name} {doing} ({stacks.doing(thread)}){holding}{behind}.{since}",
                [thread.name, *(victim.name for victim in victims)],
                evidence,
                severity=Severity.ERROR if victims else Severity.WARNING,
                story=f"The consumer thread {thread.name} {story}",
            )
