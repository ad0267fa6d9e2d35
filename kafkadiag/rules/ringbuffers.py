"""Ring buffers in a Java dump: threads parked claiming a slot of a full one, and the threads that
drain it.

A ring buffer is a bounded hand-off that is no java.util.concurrent queue: the LMAX Disruptor (log4j2's
async loggers and AsyncLoggerConfig, and many pipelines) and Reactor's RingBuffer before 3.1. A
producer claims its next slot with Sequencer.next(), which spins with LockSupport.parkNanos while the
slowest consumer's sequence is a whole buffer behind: a full buffer shows as producers parked in next().
Its consumers run a BatchEventProcessor (or a WorkProcessor) and wait for events in the buffer's wait
strategy when they have none. Nothing in a dump names the buffer: a producer and a consumer are tied
to each other only by the library both run in.
"""

from __future__ import annotations

from typing import NamedTuple

from kafkadiag.model import Thread, ThreadDump
from kafkadiag.rules import stacks

# Claiming a slot waits here when the buffer is full (suffixes: relocated copies are read too).
CLAIM_FRAMES = (
    "com.lmax.disruptor.MultiProducerSequencer.next",
    "com.lmax.disruptor.SingleProducerSequencer.next",
    "reactor.core.publisher.MultiProducerRingBuffer.next",
    "reactor.core.publisher.SingleProducerSequencer.next",
    # log4j2 (2.9 on) lets one publisher at a time wait for room in a full buffer: the others are
    # BLOCKED entering this method's lock, behind the one parked in next() (LOG4J2-2893's I/O thread).
    "org.apache.logging.log4j.core.async.AsyncLoggerDisruptor.enqueueLogMessageWhenQueueFull",
    "org.apache.logging.log4j.core.async.AsyncLoggerConfigDisruptor.enqueueLogMessageWhenQueueFull",
)
# The library of each claim frame, by the start of its function's name, and where its consumers run.
LIBRARIES = (
    ("com.lmax.disruptor.", "the LMAX Disruptor", "com.lmax.disruptor."),
    (
        "org.apache.logging.log4j.core.async.",
        "log4j2's async logging (an LMAX Disruptor)",
        "com.lmax.disruptor.",
    ),
    ("reactor.core.publisher.", "Reactor", "reactor.core.publisher."),
)
# A consumer's loop, and where it waits when the buffer holds nothing for it.
CONSUMER_FRAMES = (
    "com.lmax.disruptor.BatchEventProcessor.run",
    "com.lmax.disruptor.WorkProcessor.run",
    "reactor.core.publisher.EventLoopProcessor$QueueSubscriberLoop.run",
    "reactor.core.publisher.TopicProcessor$TopicInner.run",
    "reactor.core.publisher.WorkQueueProcessor$WorkQueueInner.run",
)
IDLE_CONSUMER_FRAMES = (
    "com.lmax.disruptor.ProcessingSequenceBarrier.waitFor",
    "WaitStrategy.waitFor",  # every wait strategy of the Disruptor and of Reactor
    "reactor.core.publisher.RingBuffer$Reader.waitFor",
)
_PARKED = frozenset(stacks.WAITING_STATUSES)


class ClaimWait(NamedTuple):
    thread: Thread
    claim: int  # index of the Sequencer.next frame
    library: str  # "the LMAX Disruptor"
    package: str  # "com.lmax.disruptor.": where its consumers' frames are found


def claim_waits(dump: ThreadDump) -> list[ClaimWait]:
    """Threads parked claiming a slot: the Sequencer's next() right under the park."""
    waits = []
    for thread in dump.threads:
        claim = stacks.index_of(thread, *CLAIM_FRAMES, suffix=True)
        if claim is None or claim > 3 or thread.status not in _PARKED:
            continue  # a next() deeper in the stack is not what the thread waits in
        function = thread.frames[claim].function
        library, package = next(
            ((name, consumed) for prefix, name, consumed in LIBRARIES if prefix in function),
            ("a ring buffer", ""),
        )
        waits.append(ClaimWait(thread, claim, library, package))
    return waits


def consumers(dump: ThreadDump, package: str) -> list[Thread]:
    """Threads running a consumer loop of the library whose classes start with `package`."""
    loops = tuple(frame for frame in CONSUMER_FRAMES if frame.startswith(package))
    return [thread for thread in dump.threads if stacks.index_of(thread, *loops, suffix=True) is not None]


def consumer_is_idle(thread: Thread) -> bool:
    """Waiting in the buffer for events, not inside a handler."""
    return stacks.index_of(thread, *IDLE_CONSUMER_FRAMES, suffix=True) is not None
