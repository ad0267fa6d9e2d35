"""KD307: the poll thread is inside a group rebalance (join/sync), possibly for a long time."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime
from typing import NamedTuple

from kafkadiag.model import Thread, ThreadDump
from kafkadiag.rules import newconsumer, stackindex, stacks
from kafkadiag.rules.base import Evidence, Finding, Requirement, Rule, Severity
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


class PollThreadInRebalance(Rule[AnalysisContext]):
    code = "KD307"
    name = "poll-thread-in-rebalance"
    title = "Poll thread inside a group rebalance"
    severity = Severity.INFO
    requires = frozenset({Requirement.JAVA})
    explanation = """
The thread calling KafkaConsumer.poll is joining the group (JoinGroup/SyncGroup): nothing is
consumed until every member has rejoined. A rebalance takes as long as the slowest member needs to
call poll() again (up to max.poll.interval.ms), so a member stuck elsewhere holds up the whole
group. Before 2.0 poll() waits for the join in AbstractCoordinator.joinGroupIfNeeded; from 2.0,
poll(Duration) sends the JoinGroup and waits for its answer in its ordinary network polls, so the
stack looks idle, and the classic protocol's heartbeat thread tells: it stays disabled, waiting
with no timeout, until the member has its assignment (read only when the process has one
consumer, so that the heartbeat thread is surely the poll thread's). Caught once it is
information; the same thread still rebalancing in every one of several dumps spanning a minute or
more is a warning. A poll thread blocked in its own rebalance listener is KD310's.
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
            if newconsumer.held_in_application(thread) is not None:
                # Not waiting for the other members: blocked in its own rebalance listener, which
                # KD310 names (real 4.1.1 dumps: the listener runs under joinGroupIfNeeded).
                continue
            yield self._finding(
                context,
                thread,
                f"{thread.name} is rebalancing ({thread.frames[join].function})",
                [context.header(thread), context.frame(thread, join)],
            )
        found = joining(dump)
        if found is not None and not stacks.has_frame(found.poll_thread, *REBALANCE, suffix=True):
            thread, heartbeat = found
            evidence = [context.header(thread)]
            in_poll = stacks.index_of(thread, *newconsumer.KAFKA_CONSUMER_POLL, suffix=True)
            if in_poll is not None:
                evidence.append(context.frame(thread, in_poll))
            evidence += [context.header(heartbeat), context.frame(heartbeat, 0)]
            yield self._finding(
                context,
                thread,
                f"{thread.name} is rebalancing: it is in poll() while its heartbeat thread "
                f"({heartbeat.name}) waits with no timeout, disabled, as it is from the member's "
                "JoinGroup until its assignment arrives (since 2.0, poll(Duration) waits for the "
                "answer in its network polls, not in joinGroupIfNeeded)",
                evidence,
            )

    def _finding(
        self, context: AnalysisContext, thread: Thread, what: str, evidence: list[Evidence]
    ) -> Finding:
        in_all = [other for other in context.series if _rebalancing(context, other, thread)]
        seconds = _span_seconds(context, thread)
        persistent = (
            len(in_all) == len(context.series) and seconds is not None and seconds >= PERSISTENT_SECONDS
        )
        span = f" over {seconds:.0f} s" if persistent and seconds is not None else ""
        return self.finding(
            what + (f" in all {len(context.series)} dumps{span}" if persistent else "") + ".",
            [thread.name],
            evidence,
            severity=Severity.WARNING if persistent else Severity.INFO,
            story=f"Poll thread {thread.name} is stuck in a group rebalance" if persistent else "",
        )


class Joining(NamedTuple):
    poll_thread: Thread
    heartbeat: Thread


def joining(dump: ThreadDump) -> Joining | None:
    """A classic member joining its group, told by its heartbeat thread: disabled while the dump's
    one thread in KafkaConsumer.poll waits in its network polls (real 4.1.1: a second member
    waiting for the rebalance a stuck member holds up, fixtures/captured/real-new-consumer-listener-
    blocks-4.1.1/member-jstack-l.txt). A disabled heartbeat with the poll thread outside poll() is
    a member that left (KD310's)."""
    heartbeat = newconsumer.disabled_heartbeat(dump)
    if heartbeat is None:
        return None
    polling = [
        thread
        for thread in stackindex.threads_with(dump, *newconsumer.KAFKA_CONSUMER_POLL, suffix=True)
        if not newconsumer.is_heartbeat(thread)
    ]
    if len(polling) != 1:
        return None
    # Waiting in its network poll as an idle consumer does; anywhere else (finding the coordinator,
    # KD304's, or a listener, KD310's) it is doing something else than waiting for the join.
    return Joining(polling[0], heartbeat) if stacks.is_idle_wait(polling[0]) else None


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
    if same is None:
        return False
    if stacks.has_frame(same, *REBALANCE, suffix=True):
        return True
    found = context.cached("joining", dump, joining)
    return found is not None and found.poll_thread.identity == thread.identity
