"""KD701: the MaxLag comparison's `streams-not-draining` verdict."""

from __future__ import annotations

from kafkadiag.maxlag.model import VERDICT_STREAMS_NOT_DRAINING
from kafkadiag.rules.base import Severity
from kafkadiag.rules.cluster import MetricsVerdictRule


class StreamsNotDraining(MetricsVerdictRule):
    code = "KD701"
    name = "streams-not-draining"
    title = "A full stream queue blocks the fetcher (MaxLag small, checker lag past the buffers)"
    severity = Severity.ERROR
    verdict = VERDICT_STREAMS_NOT_DRAINING
    explanation = """
A stream's FetchQueueSize reached queued.max.message.chunks while the committed lag is more than
the consumer's buffers explain: its thread is not taking from the queue as fast as the fetcher
fills it. The fetcher blocks in put() on that queue, so MaxLag stays small while the committed
offsets fall behind, and every other stream the fetcher serves waits. One reading cannot tell a
stream that stopped from one that only drains slower than it is fed (a consumer working through a
backlog fills its queues too): the thread dump (KD203) or a second reading tells which.
"""
    remedy = """
Take a thread dump of the consumer and look at the thread iterating the full stream (`kafkadiag
diagnose --pid` does both): fix what it is stuck in, or move processing to a worker pool.
"""
