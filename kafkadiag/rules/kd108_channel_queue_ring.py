"""KD108: threads parked putting into the full queues of one channel, which only they use."""

from __future__ import annotations

from collections.abc import Iterator

from kafkadiag.rules import queues
from kafkadiag.rules.base import Evidence, Finding, Requirement, Rule, Severity
from kafkadiag.rules.context import AnalysisContext


def _short(class_name: str) -> str:
    return class_name.rpartition(".")[2]


class ChannelQueueRing(Rule[AnalysisContext]):
    code = "KD108"
    name = "channel-queue-ring"
    title = "Threads parked putting into the full queues of one channel that only they use"
    severity = Severity.ERROR
    requires = frozenset({Requirement.JAVA})
    explanation = """
Two stages talk through one object holding two bounded queues (a broker's request channel: the
network thread puts requests the handlers take, the handlers put responses the network thread
takes). When both queues fill, the network thread parks putting a request while the handler
parks putting a response: each waits for room in a queue only the other drains, and neither
will take again. A deadlock through queues, which no JVM detector reports (a queue has no owner)
and no lock rule sees (nobody waits for a lock). A Java dump shows neither which queue a thread
puts into nor who takes from it, only the condition it parks on and the method that called put.
The ring is inferred from the channel: to take from one of its queues a thread must call into
it, and here every thread that does is parked putting into one of its queues, two queues or more
(told apart by the condition each parks on). When the input is an excerpt, a thread left out of
it may be the one that takes, and the finding is a warning. KD104 finds the same ring in Python
dumps, where the queue objects themselves are visible.
"""
    remedy = """
Break the ring: a stage that is the only consumer of one queue must not block forever putting
into another. Bound the put (offer with a timeout, then drain your own inbox and retry), make one
direction unbounded or let it spill, or apply back-pressure at the source (stop reading new
requests while responses are pending) instead of inside the ring.
"""

    def check(self, context: AnalysisContext) -> Iterator[Finding]:
        for ring in context.cached("queue-rings", context.dump, queues.queue_rings):
            yield self._finding(context, ring)

    def _finding(self, context: AnalysisContext, ring: queues.QueueRing) -> Finding:
        dump = context.dump
        channel = _short(ring.channel)
        threads = [dump.threads[put.index] for put in ring.puts]
        evidence: list[Evidence] = []
        steps = []
        queue_details = []
        for put, caller, thread in zip(ring.puts, ring.callers, threads):
            evidence += [context.header(thread), context.frame(thread, put.put_frame)]
            condition = ""
            if put.waits_on is not None:
                evidence.append(context.event(thread, put.waits_on))
                if put.waits_on.lock_id is not None:
                    condition = f" on <0x{put.waits_on.lock_id:x}>"
            evidence.append(context.frame(thread, caller))
            calling = thread.frames[caller].function
            steps.append(
                f"{context.label(thread)} is parked in {put.method(dump)}{condition} called by "
                f"{_short(calling.rpartition('.')[0])}.{calling.rpartition('.')[2]}"
            )
            queue_details.append(
                {
                    "thread": context.label(thread),
                    "queue_class": put.queue_class,
                    "condition": f"0x{put.waits_on.lock_id:x}"
                    if put.waits_on is not None and put.waits_on.lock_id is not None
                    else None,
                    "caller": calling,
                }
            )
        names = context.labels(threads)
        excerpt = dump.banner is None
        message = (
            "; ".join(steps)
            + f": {len(ring.puts)} threads putting into different queues of {ring.channel}. No other "
            f"thread of this dump runs in {channel}, so whichever thread drains these queues is one of "
            "them, and each waits for room in a queue: none will take again, a deadlock through "
            "queues no JVM detector reports. A Java dump does not show which thread takes from which "
            "queue: this is inferred from the channel they share."
        )
        if excerpt:
            message += (
                " The input is an excerpt (no 'Full thread dump' banner): a thread left out of it may "
                "be draining one of these queues."
            )
        return self.finding(
            message,
            names,
            evidence,
            severity=Severity.WARNING if excerpt else Severity.ERROR,
            story=f"Threads {' and '.join(names)} are deadlocked through the full queues of {channel}",
            details={"channel": ring.channel, "queues": queue_details, "excerpt": excerpt},
        )
