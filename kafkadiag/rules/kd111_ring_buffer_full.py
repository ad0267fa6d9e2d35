"""KD111: threads parked claiming a slot of a full ring buffer (the LMAX Disruptor, Reactor), and
what the threads that drain it are doing."""

from __future__ import annotations

from collections.abc import Iterator

from kafkadiag.model import Thread
from kafkadiag.rules import ringbuffers, stacks
from kafkadiag.rules.base import Evidence, Finding, Requirement, Rule, Severity
from kafkadiag.rules.context import AnalysisContext

_SENDER = "org.apache.kafka.clients.producer.internals.Sender.run"


def _is_producer_io_thread(thread: Thread) -> bool:
    return thread.name.startswith("kafka-producer-network-thread") or stacks.has_frame(thread, _SENDER)


_NAMED = 5  # producers quoted by name in the message; the finding lists them all


class RingBufferFull(Rule[AnalysisContext]):
    code = "KD111"
    name = "ring-buffer-full"
    title = "Threads waiting to claim a slot of a full ring buffer (LMAX Disruptor, Reactor)"
    severity = Severity.WARNING
    requires = frozenset({Requirement.JAVA})
    explanation = """
A ring buffer is a bounded hand-off between threads that is not a java.util.concurrent queue: the
LMAX Disruptor (behind log4j2's async loggers and AsyncLoggerConfig, and many event pipelines) and
Reactor's RingBuffer. A producer claims its next slot in Sequencer.next(); while the slowest consumer
is a whole buffer behind, next() parks for a nanosecond and tries again, for ever: the producer neither
fails nor times out. With log4j2's default queue-full policy every thread that logs then waits for the
async logger's thread - a consumer, a poll loop, a producer's I/O thread as much as any. The consumer
is the thread to look at: busy in its handler (an appender writing to a slow disk, a socket, a Kafka
appender whose producer is itself stuck), it is the bottleneck; waiting in the buffer's wait strategy
while producers are parked, the buffer's gating sequence is not the one it advances (a consumer
removed or dead, a handler that threw). The finding names the parked producers and each consumer with
what it does; a dump names no buffer, so producers and consumers are linked only by the library they
run in, and a consumer left out of the input cannot be seen.
"""
    remedy = """
Find what the consumer waits in and fix that (the appender's destination, the handler's call). For
log4j2 set log4j2.asyncQueueFullPolicy=Discard (with log4j2.discardThreshold) so that logging drops
events instead of stalling the application, or enlarge the ring buffer (log4j2.asyncLoggerRingBufferSize)
for bursts; never log from inside an appender or a handler of the same buffer. Take several dumps: a
consumer that moves between them is slow, one that does not is stuck.
"""

    def check(self, context: AnalysisContext) -> Iterator[Finding]:
        dump = context.dump
        waits = ringbuffers.claim_waits(dump)
        if not waits:
            return
        for library in dict.fromkeys(wait.library for wait in waits):
            parked = [wait for wait in waits if wait.library == library]
            drains = ringbuffers.consumers(dump, parked[0].package)
            yield self._finding(context, library, parked, drains)

    def _finding(
        self,
        context: AnalysisContext,
        library: str,
        parked: list[ringbuffers.ClaimWait],
        drains: list[Thread],
    ) -> Finding:
        producers = context.labels([wait.thread for wait in parked])
        more = len(producers) - _NAMED
        shown = ", ".join(producers[:_NAMED]) + (f" and {more} more" if more > 0 else "")
        claim = parked[0].thread.frames[parked[0].claim].function
        message = (
            f"{len(producers)} thread(s) waiting to claim a slot of a full ring buffer of {library} "
            f"({claim}): {shown}. They wait until its consumer moves on, with no time limit."
        )
        io_threads = [wait.thread for wait in parked if _is_producer_io_thread(wait.thread)]
        if io_threads:
            message += (
                f" {context.label(io_threads[0])} is a Kafka producer's I/O thread: when the buffer's "
                "consumer writes through that producer (log4j2's Kafka appender), the consumer waits "
                "for this very thread, which waits for the consumer, and neither moves."
            )
        busy = [thread for thread in drains if not ringbuffers.consumer_is_idle(thread)]
        severity = self.severity
        if not drains:
            message += (
                " No thread consuming such a buffer (BatchEventProcessor, WorkProcessor) is in the "
                "input: what the consumer does is not shown; a full dump of the process shows it."
            )
            culprits: list[Thread] = []
        elif busy:
            # A consumer waiting inside its handler (a lock, a socket, a full queue of its own) will
            # not make room; one running its handler may only be slow: a second dump tells.
            if any(thread.status in stacks.WAITING_STATUSES for thread in busy):
                severity = Severity.ERROR
            doing = "; ".join(f"{context.label(t)} is {stacks.doing(t)}" for t in busy)
            message += f" The consumer is inside its handler, not waiting for events: {doing}."
            culprits = busy
        else:
            idle = ", ".join(context.labels(drains))
            message += (
                f" Its consumer thread(s) ({idle}) wait for events in the buffer's wait strategy: the "
                "producers wait on a sequence that no running consumer advances (a consumer removed, "
                "dead or stopped)."
            )
            culprits = []
        threads = [*context.labels(culprits), *producers]
        evidence = [context.header(parked[0].thread), context.frame(parked[0].thread, parked[0].claim)]
        evidence += [self._where(context, thread) for thread in culprits[:2]]
        return self.finding(
            message,
            threads,
            evidence,
            severity=severity,
            story=f"{len(producers)} thread(s) wait for room in a full ring buffer of {library}",
            details={"library": library, "producers": producers, "consumers": context.labels(drains)},
        )

    @staticmethod
    def _where(context: AnalysisContext, thread: Thread) -> Evidence:
        return context.frame(thread, 0) if thread.frames else context.header(thread)
