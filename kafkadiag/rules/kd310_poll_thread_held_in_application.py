"""KD310: a consumer's poll thread (or a Kafka Streams thread) held in the application's own call."""

from __future__ import annotations

from collections.abc import Iterator

from kafkadiag.model import Thread, ThreadDump
from kafkadiag.rules import newconsumer, stackindex, stacks
from kafkadiag.rules.base import Finding, Requirement, Rule, Severity
from kafkadiag.rules.context import AnalysisContext

# What the application was called for, told by the frames under its held call.
BETWEEN_POLLS = "between-polls"
LISTENER = "rebalance-listener"
PUNCTUATOR = "punctuator"
PROCESSOR = "processor"
IN_POLL = "poll-callback"
WHERE = {
    BETWEEN_POLLS: "between two calls of poll()",
    LISTENER: "in its ConsumerRebalanceListener (called from inside poll() during a rebalance, which "
    "cannot complete before it returns)",
    PUNCTUATOR: "in a punctuator that Kafka Streams runs on this thread",
    PROCESSOR: "in a processor that Kafka Streams runs on this thread",
    IN_POLL: "in a callback that the client runs from inside poll()",
}


class PollThreadHeldInApplication(Rule[AnalysisContext]):
    code = "KD310"
    name = "poll-thread-held-in-application"
    title = "A poll thread held in the application's own call: no poll() until it returns"
    severity = Severity.WARNING
    requires = frozenset({Requirement.JAVA})
    explanation = """
The thread that calls KafkaConsumer.poll - or a Kafka Streams stream thread, which polls,
processes and punctuates in one loop - is blocked in the application's own code: a socket read
that waits for an answer, a lock, a sleep. It may be handling records between two polls, running
a ConsumerRebalanceListener (which the client calls from inside poll(), during a rebalance), or a
Streams punctuator or processor. Until the call returns nothing is fetched or committed for its
partitions and, in Streams, no task on the thread is processed or punctuated. Past
max.poll.interval.ms (5 minutes by default) the client leaves the group: with the classic
protocol its heartbeat thread sends LeaveGroup and then waits, disabled; with group.protocol=
consumer (KIP-848) the background thread sends the leave heartbeat. The partitions move to other
members, and the next poll() rejoins and receives them again, records already handled included.
One dump cannot tell a call that takes milliseconds from one that never returns: alone it
informs; the same call in every dump of a series is a warning; a heartbeat thread already
disabled while the poll thread is outside poll() shows the member has left the group (an error).
"""
    remedy = """
Give the call a time limit (socket connect and read timeouts, tryLock or a bounded wait) and
decide what to do when it expires. Keep slow work off the poll thread: hand records to workers,
pause the partitions while they are busy and keep polling. Keep rebalance listeners and
punctuators short; write what a listener must save with a bounded call. Raise
max.poll.interval.ms only to cover a known worst case; it also delays noticing a member that is
really stuck.
"""

    def check(self, context: AnalysisContext) -> Iterator[Finding]:
        dump = context.dump
        polled = frozenset().union(
            *(context.cached("pollers", d, newconsumer.pollers) for d in context.series)
        )
        client_seen = newconsumer.has_consumer_client(dump)
        # The stack half of the question once per distinct stack, the state half per thread.
        for position, _ in stackindex.stack_answers(dump, "held-under-application", newconsumer.held_under):
            thread = dump.threads[position]
            held = newconsumer.held_in_application(thread)
            if held is None:
                continue
            if not newconsumer.drives_a_consumer(thread, polled, client_seen):
                continue
            yield self._finding(context, thread, held, newconsumer.is_stream_thread(thread))

    def _finding(self, context: AnalysisContext, thread: Thread, held: int, stream_thread: bool) -> Finding:
        name = context.label(thread)
        called_for = _called_for(thread, held)
        application = thread.frames[held].function
        doing = stacks.doing(thread)
        role = "Stream thread" if stream_thread else "Poll thread"
        consequence = (
            "no task on this thread is processed, punctuated or committed and its consumer does not poll"
            if stream_thread
            else "this thread does not call poll(): nothing is fetched or committed for its partitions"
        )
        message = (
            f"{role} {name} is blocked in the application's own call, {WHERE[called_for]}: "
            f"{thread.status.value.lower().replace('_', ' ')} in {thread.frames[0].function} under "
            f"{_application_path(thread, held)}. Until the call returns, {consequence}; past "
            "max.poll.interval.ms the member leaves the group and its partitions are reassigned."
        )
        evidence = [context.header(thread), context.frame(thread, 0), context.frame(thread, held)]
        caller = _kafka_caller(thread, held)
        if caller is not None:
            evidence.append(context.frame(thread, caller))
        severity = Severity.INFO
        persistent = len(context.series) > 1 and all(
            _holds_same(other, thread, application) for other in context.series
        )
        if persistent:
            severity = Severity.WARNING
            message += f" It is in the same call in all {len(context.series)} dumps."
        heartbeat = newconsumer.disabled_heartbeat(context.dump)
        left = heartbeat is not None and not stacks.has_frame(
            thread, *newconsumer.KAFKA_CONSUMER_POLL, suffix=True
        )
        if left and heartbeat is not None:
            severity = Severity.ERROR
            message += (
                f" Its consumer's heartbeat thread ({heartbeat.name}) waits with no timeout: it is disabled, "
                "which it is only while the member is out of the group; with the poll thread outside "
                "poll(), the member has left it (max.poll.interval.ms passed) or was removed."
            )
            evidence += [context.header(heartbeat), context.frame(heartbeat, 0)]
        what = {PUNCTUATOR: "a punctuator", PROCESSOR: "a processor", LISTENER: "its rebalance listener"}.get(
            called_for, application
        )
        return self.finding(
            message,
            [name],
            evidence,
            severity=severity,
            story=f"{role} {name} is blocked in {what} and does not poll",
            details={
                "held_in": application,
                "called_for": called_for,
                "doing": doing,
                "member_left": left,
                "heartbeat_thread": heartbeat.name if heartbeat is not None else None,
            },
        )


def _called_for(thread: Thread, held: int) -> str:
    """Why the application code runs on this thread: read from the frames under the held call."""
    below = thread.frames[held:]
    if any(frame.method in newconsumer.LISTENER_METHODS for frame in below if not stacks.is_library(frame)):
        return LISTENER
    functions = [frame.function for frame in below]
    if any(function.endswith(newconsumer.STREAMS_PUNCTUATE) for function in functions):
        return PUNCTUATOR
    if any(function.endswith(newconsumer.STREAMS_PROCESS) for function in functions):
        return PROCESSOR
    if any(function.endswith(newconsumer.KAFKA_CONSUMER_POLL) for function in functions):
        return IN_POLL
    return BETWEEN_POLLS


# Application frames named in a message, from the held call down: enough to see the call and
# what called it (a poll loop, a listener, a punctuator) without the whole stack.
PATH_FRAMES = 3


def _application_path(thread: Thread, held: int) -> str:
    """The application frames from the held one down to the first library frame under them, as
    "a.Service.call <- a.Listener.onPartitionsRevoked"."""
    path = []
    for frame in thread.frames[held:]:
        if stacks.is_library(frame):
            break
        path.append(frame.function)
    return " <- ".join(path[:PATH_FRAMES]) + (" <- ..." if len(path) > PATH_FRAMES else "")


def _kafka_caller(thread: Thread, held: int) -> int | None:
    """The first Kafka frame under the application's held call: what called it (the listener
    invoker, StreamTask.punctuate), quoted so a reader sees the callback's origin."""
    for index in range(held + 1, len(thread.frames)):
        if thread.frames[index].function.startswith(("org.apache.kafka.", "kafka.")):
            return index
    return None


def _holds_same(dump: ThreadDump, thread: Thread, application: str) -> bool:
    """The same thread (name and OS id) held under the same application frame in `dump`."""
    for other in dump.threads:
        if other.identity == thread.identity:
            held = newconsumer.held_in_application(other)
            return held is not None and other.frames[held].function == application
    return False
