"""KD307: the poll thread is inside a group rebalance (join/sync), possibly for a long time."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime

from kafkadiag.model import Thread, ThreadDump
from kafkadiag.rules import newconsumer, stackindex, stacks
from kafkadiag.rules.base import Finding, Requirement, Rule, Severity
from kafkadiag.rules.context import AnalysisContext

# A rebalance normally completes within seconds; one still running after this long is stuck.
PERSISTENT_SECONDS = 60
TIMESTAMP = "%Y-%m-%d %H:%M:%S"
REBALANCE = (
    "AbstractCoordinator.joinGroupIfNeeded",
    "AbstractCoordinator.ensureActiveGroup",
    "AbstractCoordinator.initiateJoinGroup",
    "AbstractCoordinator.sendJoinGroupRequest",
)


class PollThreadInRebalance(Rule):
    code = "KD307"
    name = "poll-thread-in-rebalance"
    title = "Poll thread inside a group rebalance"
    severity = Severity.INFO
    requires = frozenset({Requirement.JAVA})
    explanation = """
The thread calling KafkaConsumer.poll is joining the group (JoinGroup/SyncGroup): nothing is
consumed until every member has rejoined. A rebalance takes as long as the slowest member needs to
call poll() again (up to max.poll.interval.ms), so a member stuck elsewhere holds up the whole
group. Caught once it is information; the same thread still rebalancing in every one of several
dumps spanning a minute or more is a warning.
"""
    remedy = """
Find the slow member: the broker's group coordinator log, or `kafka-consumer-groups --describe
--state` (state PreparingRebalance/CompletingRebalance). If this member keeps rejoining (its log
says "consumer poll timeout has expired" or "Attempt to heartbeat failed since group is
rebalancing"), it takes longer than max.poll.interval.ms between polls: lower max.poll.records or
raise max.poll.interval.ms. Use static membership (group.instance.id) and the cooperative-sticky
assignor to make rebalances rarer and cheaper.
"""

    def check(self, context: AnalysisContext) -> Iterator[Finding]:
        dump = context.dump
        for thread in stackindex.threads_with(dump, *REBALANCE, suffix=True):
            join = stacks.index_of(thread, *REBALANCE, suffix=True)
            if join is None or not stacks.has_frame(thread, *newconsumer.KAFKA_CONSUMER_POLL, suffix=True):
                continue
            in_all = [other for other in context.series if _rebalancing(context, other, thread)]
            seconds = _span_seconds(context, thread)
            persistent = (
                len(in_all) == len(context.series) and seconds is not None and seconds >= PERSISTENT_SECONDS
            )
            span = f" over {seconds:.0f} s" if persistent and seconds is not None else ""
            yield self.finding(
                f"{thread.name} is rebalancing ({thread.frames[join].function})"
                + (f" in all {len(context.series)} dumps{span}" if persistent else "")
                + ".",
                [thread.name],
                [context.header(thread), context.frame(thread, join)],
                severity=Severity.WARNING if persistent else Severity.INFO,
                story=f"Poll thread {thread.name} is stuck in a group rebalance" if persistent else "",
            )


def _same_thread(context: AnalysisContext, dump: ThreadDump, thread: Thread) -> Thread | None:
    """The thread in another dump of the process: same name and OS thread id (names may repeat)."""
    return context.cached("threads-by-identity", dump, _by_identity).get(thread.identity)


def _by_identity(dump: ThreadDump) -> dict[tuple[str, int | None], Thread]:
    """A dump's threads by name and OS thread id, the first of each (a series has a few dumps)."""
    found: dict[tuple[str, int | None], Thread] = {}
    for thread in dump.threads:
        found.setdefault(thread.identity, thread)
    return found


def _span_seconds(context: AnalysisContext, thread: Thread) -> float | None:
    """Seconds between the series' first and last dumps: from the thread's elapsed= (JDK 11+) or
    the dump timestamps."""
    first, last = context.series[0], context.series[-1]
    before, after = _same_thread(context, first, thread), _same_thread(context, last, thread)
    if before and after and before.elapsed_s is not None and after.elapsed_s is not None:
        return after.elapsed_s - before.elapsed_s
    try:
        start = datetime.strptime(first.timestamp or "", TIMESTAMP)
        end = datetime.strptime(last.timestamp or "", TIMESTAMP)
    except ValueError:
        return None
    return (end - start).total_seconds()


def _rebalancing(context: AnalysisContext, dump: ThreadDump, thread: Thread) -> bool:
    same = _same_thread(context, dump, thread)
    return same is not None and stacks.has_frame(same, *REBALANCE, suffix=True)
