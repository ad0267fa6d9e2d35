"""KD203: the stream thread not draining its queue (the culprit), or its absence."""

from __future__ import annotations

from collections.abc import Iterator

from kafkadiag.model import ThreadStatus
from kafkadiag.rules import oldconsumer, stacks
from kafkadiag.rules.base import Finding, Requirement, Rule, Severity
from kafkadiag.rules.context import AnalysisContext

# A handler that sleeps per record (a throttle, a retry back-off) keeps the fetcher waiting in put
# most of the time and lets a chunk through now and then: real Kafka 0.8.2.2 with a 200 ms sleep
# per payment (fixtures/captured/real-old-consumer-slow-0.8.2.2) looks, dump after dump, just like a
# handler stuck for good.
SLOW_OR_STOPPED = (
    " A sleep in the stream loop drains the queue slowly rather than not at all, and dumps cannot "
    "tell the two apart: the committed offsets of its partitions (ConsumerOffsetChecker) can."
)


class StreamNotDraining(Rule[AnalysisContext]):
    code = "KD203"
    name = "stream-not-draining"
    title = "The stream thread not draining its queue"
    severity = Severity.ERROR
    requires = frozenset({Requirement.JAVA})
    explanation = """
When an old consumer's fetcher is blocked on a full stream queue (KD201), some stream is not being
consumed. The threads that iterate streams share the application's loop (the frame below
ConsumerIterator in the starving streams); a thread in that loop that is not waiting in take is
busy elsewhere - blocked in I/O, waiting on a lock, sleeping - and it is the one whose queue is
full. If no such thread exists, the stream has nobody iterating it: its thread died on an
uncaught exception, was never started, or the application created more streams than it runs
threads for (createMessageStreams with a count larger than the thread pool). An excerpt (no 'Full
thread dump' banner) cannot show that: the stream's thread may be one left out of it, and the
finding is then a warning that says so.
"""
    remedy = """
Fix what the named thread is stuck in (a timeout on its I/O, a smaller critical section), or
move processing off the stream thread to a worker pool so the stream keeps draining. If no thread
was found, check the application log for an exception that killed a stream thread and make sure
every stream returned by createMessageStreams has a live thread iterating it.
"""

    def check(self, context: AnalysisContext) -> Iterator[Finding]:
        dump = context.dump
        fetchers = context.cached("blocked-fetchers", dump, oldconsumer.blocked_fetchers)
        if not fetchers:
            return
        streams = context.cached("starving-streams", dump, oldconsumer.starving_streams)
        culprits = oldconsumer.undrained_stream_threads(dump, streams)
        fetcher = fetchers[0].thread
        if culprits:
            for thread, loop_index in culprits:
                evidence = [context.header(thread)]
                if thread.frames:
                    evidence.append(context.frame(thread, 0))
                application = stacks.first_application_frame(thread)
                if application is not None and application != loop_index:
                    evidence.append(context.frame(thread, application))
                evidence.append(context.frame(thread, loop_index))
                loop = thread.frames[loop_index].function
                slow = thread.status is ThreadStatus.SLEEPING
                yield self.finding(
                    f"{thread.name} runs the stream loop {loop} but is not waiting for data: it is "
                    f"{stacks.doing(thread)}. Its queue is the full one that blocks {fetcher.name}."
                    + (SLOW_OR_STOPPED if slow else ""),
                    [thread.name, fetcher.name],
                    evidence,
                    story=(
                        f"Stream thread {thread.name} "
                        # A dump shows it away from its queue, not since when ("stopped" needs dumps
                        # over time).
                        + ("drains its queue slowly or not at all" if slow else "is not draining its queue")
                        + f" ({stacks.doing(thread)})"
                    ),
                    details={"doing": stacks.doing(thread), "fetcher": fetcher.name, "stream_loop": loop},
                )
            return
        loops = sorted(oldconsumer.stream_loop_functions(streams))
        looked_for = f" (a thread in {', '.join(loops)} not waiting in take)" if loops else ""
        if dump.banner is None:
            # An excerpt (KAFKA-914's four quoted threads) leaves out threads: the stream thread
            # may be one of them, so its absence says nothing.
            yield self.finding(
                f"No thread in the dump is draining the full queue{looked_for}, but the input is an "
                "excerpt (no 'Full thread dump' banner): the stream's thread may be one left out of "
                "it. A full dump of the process shows whether any thread iterates the stream.",
                [fetcher.name],
                [context.header(fetcher)],
                severity=Severity.WARNING,
                story=(
                    "No thread of the excerpt drains the full stream queue (its thread may be one left out)"
                ),
            )
            return
        yield self.finding(
            f"No thread in the dump is draining the full queue{looked_for}: the stream has nobody "
            "iterating it. Its thread may have died on an exception, never been started, or the "
            "application created more streams than threads.",
            [fetcher.name],
            [context.header(fetcher)],
            story="No live thread drains the full stream queue (a stream thread died or was never started)",
        )
