"""KD306: the log says a KafkaConsumer was used from several threads at once."""

from __future__ import annotations

from collections.abc import Iterator

from kafkadiag.rules.base import Evidence, Finding, Requirement, Rule, Severity
from kafkadiag.rules.context import AnalysisContext

MESSAGE = "KafkaConsumer is not safe for multi-threaded access"


class ConsumerSharedBetweenThreads(Rule[AnalysisContext]):
    code = "KD306"
    name = "consumer-shared-between-threads"
    title = "KafkaConsumer used from several threads"
    severity = Severity.ERROR
    requires = frozenset({Requirement.JAVA})
    explanation = """
KafkaConsumer is not thread-safe: every call checks that no other thread is inside the consumer
and throws ConcurrentModificationException ("KafkaConsumer is not safe for multi-threaded
access") when one is. The log around the dump has that message: a second thread (a metrics
reporter, a commit from a worker, a shutdown hook) called the consumer while the poll thread was
in it. The failed call did nothing - a commit that throws this is a commit lost - and the
exception often kills the calling thread.
"""
    remedy = """
Confine each KafkaConsumer to its poll thread. Workers hand offsets back to the poll thread
(a queue it drains between polls), which commits; only wakeup() may be called from other threads.
"""

    def check(self, context: AnalysisContext) -> Iterator[Finding]:
        dump = context.dump
        lines = [signal for signal in dump.log_signals if MESSAGE in signal.text]
        if not lines:
            return
        yield self.finding(
            f"The log has {len(lines)} line{'s' if len(lines) != 1 else ''} saying '{MESSAGE}'.",
            [],
            [Evidence(dump.source, line.line_no, line.text) for line in lines[:5]],
            story="A KafkaConsumer is used from several threads at once",
        )
