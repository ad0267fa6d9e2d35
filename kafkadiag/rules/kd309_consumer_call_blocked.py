"""KD309: a thread inside a KafkaConsumer call that waits on the cluster (position, committed, offsets,
metadata, a synchronous commit, close) and may retry."""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from kafkadiag.model import Thread
from kafkadiag.rules import newconsumer, stackindex, stacks
from kafkadiag.rules.base import Finding, Requirement, Rule, Severity
from kafkadiag.rules.context import AnalysisContext

_CONSUMER = "org.apache.kafka.clients.consumer."
_INTERNALS = _CONSUMER + "internals."
# The consumer classes a public call enters: KafkaConsumer itself, and from 3.7 the protocol's
# implementation it delegates to.
_CONSUMER_CLASSES = (
    _CONSUMER + "KafkaConsumer",
    _INTERNALS + "LegacyKafkaConsumer",
    _INTERNALS + "ClassicKafkaConsumer",
)
# The public calls that look something up or commit and, before Kafka 2.0 (KIP-266), wait for it
# without a time limit; close(), which commits first with auto-commit on, until 0.10.2 (KIP-102).
# poll() is not one of them: a poll thread inside poll() is other rules' matter.
_CALLS = (
    "position",
    "committed",
    "partitionsFor",
    "listTopics",
    "beginningOffsets",
    "endOffsets",
    "offsetsForTimes",
    "commitSync",
    "close",
)
CALL_FRAMES = tuple(f"{cls}.{call}" for cls in _CONSUMER_CLASSES for call in _CALLS)

_METADATA = "a metadata update (the topic or partition has no known leader)"
_OFFSETS = "the partition's offsets from its leader (ListOffsets)"
_TOPICS = "topic metadata"
_COMMITTED = "the group's committed offsets from its coordinator (OffsetFetch)"
_COMMIT = "an offset commit to be acknowledged (OffsetCommit)"
# Where inside the call it waits, across releases (0.10's Fetcher.listOffset to 3.x's OffsetFetcher).
WAITS = {
    _INTERNALS + "ConsumerNetworkClient.awaitMetadataUpdate": _METADATA,
    _INTERNALS + "Fetcher.listOffset": _OFFSETS,
    _INTERNALS + "Fetcher.resetOffset": _OFFSETS,
    _INTERNALS + "Fetcher.resetOffsets": _OFFSETS,
    _INTERNALS + "Fetcher.resetOffsetsIfNeeded": _OFFSETS,
    _INTERNALS + "Fetcher.getOffsetsByTimes": _OFFSETS,
    _INTERNALS + "Fetcher.fetchOffsetsByTimes": _OFFSETS,
    _INTERNALS + "Fetcher.beginningOrEndOffset": _OFFSETS,
    _INTERNALS + "OffsetFetcher.resetPositionsIfNeeded": _OFFSETS,
    _INTERNALS + "OffsetFetcher.fetchOffsetsByTimes": _OFFSETS,
    _INTERNALS + "OffsetFetcher.beginningOrEndOffset": _OFFSETS,
    _INTERNALS + "Fetcher.getTopicMetadata": _TOPICS,
    _INTERNALS + "Fetcher.getAllTopicMetadata": _TOPICS,
    _INTERNALS + "TopicMetadataFetcher.getTopicMetadata": _TOPICS,
    _INTERNALS + "TopicMetadataFetcher.getAllTopicMetadata": _TOPICS,
    _INTERNALS + "ConsumerCoordinator.fetchCommittedOffsets": _COMMITTED,
    _INTERNALS + "ConsumerCoordinator.commitOffsetsSync": _COMMIT,
}
# position() itself loops on the network client until the partition has a position: it starts the
# lookups (the committed offset, else a ListOffsets reset, which needs the partition's leader) and
# polls for them in its own frame. Real kafka-clients 1.1.1, a partition of a topic the cluster lacks
# (fixtures/captured/real-new-consumer-position-hang-1.1.1): KafkaConsumer.position <-
# ConsumerNetworkClient.poll, in no frame of WAITS, and the call was not named.
_POSITION = "the partition's position: its committed offset, or its offsets from its leader (ListOffsets)"
_POLLED_BY_CALL = {"position": _POSITION}
_NETWORK_POLL = _INTERNALS + "ConsumerNetworkClient.poll"


class _Limit(NamedTuple):
    """From which client release a call gives up by itself, and after how long."""

    since: str
    after: str


_API_TIMEOUT = _Limit("2.0", "default.api.timeout.ms unless given another timeout")
_LIMITS = {"close": _Limit("0.10.2", "30 s unless close(Duration) is given another timeout")}

# Finding the coordinator is KD304's: a call waiting there is named by that rule.
_DISCOVERY = (_INTERNALS + "AbstractCoordinator.ensureCoordinatorReady",)
_SCHEDULED = (
    "java.util.concurrent.ScheduledThreadPoolExecutor$ScheduledFutureTask.run",
    "java.util.TimerThread.mainLoop",
)


class ConsumerCallBlocked(Rule[AnalysisContext]):
    code = "KD309"
    name = "consumer-call-blocked"
    title = "A KafkaConsumer call waiting on the cluster: position(), committed(), an offsets call, close()"
    severity = Severity.WARNING
    requires = frozenset({Requirement.JAVA})
    explanation = """
Besides poll(), KafkaConsumer has calls that look something up from the cluster and wait for the
answer: position() and the offsets calls (beginningOffsets, endOffsets, offsetsForTimes) ask the
partition's leader (ListOffsets), committed() asks the group coordinator (OffsetFetch),
partitionsFor() and listTopics() ask for metadata, commitSync() waits for the commit, and close()
commits the consumed offsets first when auto-commit is on. A retriable error - the topic is unknown
or was deleted, a partition has no leader, the coordinator is moving - makes them wait for a
metadata update and ask again. Before Kafka 2.0 (KIP-266) they do so for ever: the calling thread
never returns, and nothing is logged. Since 2.0 they give up after default.api.timeout.ms (60 s)
unless given another timeout; close() has no time limit before 0.10.2 (KIP-102), and waits 30 s by
default since. A consumer's poll thread waiting here does not poll; a scheduled task waiting here
never runs again.
"""
    remedy = """
Check the topic and its partitions: kafka-topics --describe shows whether the topic exists and
every partition has a leader. Give the call a time limit - position(tp, Duration) and the other
Duration overloads, or default.api.timeout.ms - which needs Kafka clients 2.0 or newer; with an
older client, upgrade it. Do not look up partitions of topics that may have been deleted. A close()
that does not return waits for the group's coordinator: check that the leader of the group's
__consumer_offsets partition is up and reachable, and close with a timeout (close(Duration), 0.10.2
or newer) so that a stopping service stops.
"""

    def check(self, context: AnalysisContext) -> Iterator[Finding]:
        dump = context.dump
        for thread in stackindex.threads_with(dump, *CALL_FRAMES):
            call = _outermost(thread, CALL_FRAMES)
            if call is None:
                continue
            wait = stacks.index_of(thread, *WAITS)
            if wait is not None and wait < call:
                awaited = WAITS[thread.frames[wait].function]
            elif (polled := _polled_by_call(thread, call)) is not None:
                wait, awaited = call - 1, polled
            else:
                continue
            discovery = stacks.index_of(thread, *_DISCOVERY)
            if discovery is not None and discovery < call:
                continue
            yield self._finding(context, thread, call, wait, awaited)

    def _finding(
        self, context: AnalysisContext, thread: Thread, call: int, wait: int, awaited: str
    ) -> Finding:
        name = context.label(thread)
        called = thread.frames[call].method
        where = ".".join(thread.frames[wait].function.rsplit(".", 2)[-2:])  # "Fetcher.listOffset"
        limit = _LIMITS.get(called, _API_TIMEOUT)
        message = (
            f"{name} waits in KafkaConsumer.{called}, in {where}, for {awaited}; "
            f"it is {stacks.doing(thread)}. "
            f"Before Kafka {limit.since} this call has no time limit: while the topic is unknown or "
            "deleted, a partition has no leader or the coordinator does not answer, it retries for ever; "
            f"from {limit.since} on it gives up after {limit.after}."
        )
        if called != "close" and newconsumer.looks_like_poll_thread(thread, frozenset()):
            # (a consumer being closed leaves its group anyway)
            message += (
                f" {name} is a consumer's poll thread: while it waits it does not poll, and past "
                "max.poll.interval.ms its member leaves the group."
            )
        if stacks.has_frame(thread, *_SCHEDULED):
            message += " It runs a scheduled task: until the call returns, the task does not run again."
        evidence = [context.header(thread)]
        if thread.frames:
            evidence.append(context.frame(thread, 0))
        evidence += [context.frame(thread, wait), context.frame(thread, call)]
        return self.finding(
            message,
            [name],
            evidence,
            # One dump shows the call waiting, not that it never returns.
            story=(
                f"A consumer call waits on the cluster: {name} waits in KafkaConsumer.{called} for {awaited}"
            ),
            details={"call": f"KafkaConsumer.{called}", "awaited": awaited, "waiting_in": where},
        )


def _polled_by_call(thread: Thread, call: int) -> str | None:
    """What a call that polls the network client in its own frame (position) waits for, when the
    thread is in that poll: the frame right above the call's is ConsumerNetworkClient.poll."""
    awaited = _POLLED_BY_CALL.get(thread.frames[call].method)
    if awaited is None or call == 0 or thread.frames[call - 1].function != _NETWORK_POLL:
        return None
    return awaited


def _outermost(thread: Thread, functions: tuple[str, ...]) -> int | None:
    """The deepest frame (the public call the application made) among `functions`."""
    wanted = frozenset(functions)
    found = [index for index, frame in enumerate(thread.frames) if frame.function in wanted]
    return found[-1] if found else None
