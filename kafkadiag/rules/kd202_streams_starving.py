"""KD202: old consumer streams starving in take while their fetcher is blocked."""

from __future__ import annotations

from collections.abc import Iterator

from kafkadiag.rules import oldconsumer
from kafkadiag.rules.base import Finding, Requirement, Rule, Severity
from kafkadiag.rules.context import AnalysisContext
from kafkadiag.rules.kd201_fetcher_blocked_on_full_queue import REMEDY

MAX_QUOTED = 6


class StreamsStarving(Rule[AnalysisContext]):
    code = "KD202"
    name = "streams-starving"
    title = "Old consumer streams starve while their fetcher is blocked"
    severity = Severity.ERROR
    requires = frozenset({Requirement.JAVA})
    explanation = """
These stream threads wait in ConsumerIterator.makeNext (LinkedBlockingQueue.take) for chunks that
do not come while the fetcher that feeds them is blocked on another stream's full queue (KD201).
Their topics fall behind although nothing is wrong with them. A stream idle in take is normal
when there is simply no data; this rule only speaks when a fetcher is blocked.
"""
    remedy = REMEDY

    def check(self, context: AnalysisContext) -> Iterator[Finding]:
        dump = context.dump
        fetchers = context.cached("blocked-fetchers", dump, oldconsumer.blocked_fetchers)
        if not fetchers:
            return
        streams = context.cached("starving-streams", dump, oldconsumer.starving_streams)
        if not streams:
            return
        fetcher_names = [fetcher.thread.name for fetcher in fetchers]
        consumer_ids = {fetcher.consumer_id for fetcher in fetchers if fetcher.consumer_id}
        evidence = [context.header(fetchers[0].thread)]
        for thread, take_index in streams[:MAX_QUOTED]:
            evidence.append(context.header(thread))
            evidence.append(context.frame(thread, take_index))
        names = [thread.name for thread, _ in streams]
        attribution = (
            f"fed by {', '.join(fetcher_names)}"
            if len(consumer_ids) <= 1
            else "(the dump does not say which of the blocked fetchers feeds which stream)"
        )
        yield self.finding(
            f"{len(streams)} stream thread{'s' if len(streams) != 1 else ''} wait in "
            f"ConsumerIterator.makeNext for chunks {attribution}: {', '.join(names)}.",
            names,
            evidence,
            story=f"Streams {', '.join(names)} starve waiting for data the blocked fetcher cannot deliver",
        )
