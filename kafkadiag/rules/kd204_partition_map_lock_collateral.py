"""KD204: threads queued behind a blocked fetcher's partition-map lock."""

from __future__ import annotations

from collections.abc import Iterator

from kafkadiag.model import Thread
from kafkadiag.rules import oldconsumer, stacks
from kafkadiag.rules.base import Finding, Requirement, Rule, Severity
from kafkadiag.rules.context import AnalysisContext

# Fetcher-manager work that takes a fetcher's partitionMapLock (Kafka 0.8 to 0.10).
PARTITION_MAP_USERS = (
    "AbstractFetcherThread.addPartitions",
    "AbstractFetcherThread.removePartitions",
    "AbstractFetcherThread.delayPartitions",
    "AbstractFetcherThread.partitionCount",
)


class PartitionMapLockCollateral(Rule[AnalysisContext]):
    code = "KD204"
    name = "partition-map-lock-collateral"
    title = "Threads waiting behind a blocked fetcher's partition-map lock"
    severity = Severity.WARNING
    requires = frozenset({Requirement.JAVA})
    explanation = """
The blocked fetcher (KD201) holds its partitionMapLock while it waits. Work that takes that lock
without first stopping the fetcher queues behind it: the leader finder after a leader change,
adding the moved partitions to a fetcher (addPartitions) or, when it shuts idle fetchers down,
asking each fetcher for its partition count (partitionCount). On Kafka 0.8.2.2 with the leader of
one topic stopped, the leader finder parks in partitionCount and the topic never moves to the new
leader. So the consumer does not follow leader moves until the stream drains. These are victims,
not causes. A rebalance is
not among them in the real old consumer (0.8.2 to 1.1): it stops the fetchers first, which
interrupts the blocked put, and then starts a new fetcher that blocks again on the same full
queue while the stream stays stalled. The finding names only threads the dump shows waiting.
"""
    remedy = """
Nothing to fix in these threads: they recover when the fetcher does (see KD201 and KD203).
A leader change the consumer never follows is this.
"""

    def check(self, context: AnalysisContext) -> Iterator[Finding]:
        dump = context.dump
        fetchers = context.cached("blocked-fetchers", dump, oldconsumer.blocked_fetchers)
        if not fetchers:
            return
        graph = context.graph()
        # By identity, not by name: several threads may share a fetcher's name.
        fetcher_ids = {id(fetcher.thread) for fetcher in fetchers}
        by_holder: list[Thread] = []
        for index, thread in enumerate(dump.threads):
            if id(thread) in fetcher_ids:
                by_holder.extend(graph.thread(victim) for victim in graph.blocked_by(index))
        victims = list({id(thread): thread for thread in by_holder}.values())
        holder_visible = bool(victims)
        if not victims:
            # Without -l the holder of a ReentrantLock is not in the dump; the stacks still tell.
            victims = [
                thread
                for thread in dump.threads
                if id(thread) not in fetcher_ids
                and thread.status in stacks.WAITING_STATUSES
                and stacks.has_frame(thread, *PARTITION_MAP_USERS, suffix=True)
            ]
        if not victims:
            return
        evidence = []
        for thread in victims:
            evidence.append(context.header(thread))
            event = thread.waits_for()
            if event is not None:
                evidence.append(context.event(thread, event))
            user = stacks.index_of(thread, *PARTITION_MAP_USERS, suffix=True)
            if user is not None:
                evidence.append(context.frame(thread, user))
        names = context.labels(victims)
        holder = ", ".join(sorted(context.label(fetcher.thread) for fetcher in fetchers))
        wait = "waits" if len(names) == 1 else "wait"
        how = (
            f"{wait} for the lock {holder} holds"
            if holder_visible
            else (
                f"{wait} for a fetcher's partition-map lock "
                f"(the dump has no lock data to show it is {holder}'s)"
            )
        )
        yield self.finding(
            f"{', '.join(names)} {how}.",
            names,
            evidence,
            story=f"Threads {', '.join(names)} queue behind the fetcher's partition-map lock",
        )
