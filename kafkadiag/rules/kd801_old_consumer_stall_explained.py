"""KD801: the old consumer's stall, joined across the thread dump, the consumer's metrics and the
committed offsets."""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from kafkadiag.lag.model import known_sum_text
from kafkadiag.maxlag.facts import consumer_id_of_fetcher
from kafkadiag.maxlag.model import VERDICT_STREAMS_NOT_DRAINING
from kafkadiag.rules.base import Evidence, Finding, Requirement, Severity
from kafkadiag.rules.cluster import ClusterRule, DiagnosisContext, MetricsRead, runs_fetcher

if TYPE_CHECKING:
    from kafkadiag.lag.model import GroupLag
    from kafkadiag.maxlag.model import ClientComparison

# One consumer's metrics: where they were read, and its MaxLag comparison.
ClientRead = tuple[MetricsRead, "ClientComparison"]


class OldConsumerStallExplained(ClusterRule):
    code = "KD801"
    name = "old-consumer-stall-explained"
    title = "One stream stopped draining: its full queue blocks the fetcher and starves the other topics"
    severity = Severity.ERROR
    requires_any = frozenset({Requirement.LAG, Requirement.CONSUMER_METRICS})
    requires = frozenset({Requirement.JAVA})
    explanation = """
The old (ZooKeeper-based) consumer's fetcher hands each fetched chunk to the stream queue of the
partition's consumer thread, a LinkedBlockingQueue bounded by queued.max.message.chunks, while
holding its partition-map lock. When one stream's thread stops taking (its handler sleeps, waits on
a lock or a remote call), that queue fills, the fetcher blocks in put() and every other topic and
partition it serves starves. The fetcher's MaxLag (high watermark minus fetch offset) freezes at a
small value, because the fetcher stopped fetching, while the committed-offset lag that
ConsumerOffsetChecker shows grows without bound. This finding joins the three views: the thread
dump (the blocked fetcher, the stream thread that stopped and what it does, the starving stream
threads), the consumer's metrics (which stream's FetchQueueSize is full, MaxLag) and the committed
offsets (the starving partitions' lag and time since progress).
"""
    remedy = """
Fix what the stream thread that stopped draining is stuck in (a timeout on its remote call, a
shorter critical section). So that one slow topic cannot starve the others: hand records from the
stream thread to a worker pool, or give the slow topic a connector of its own. Restarting the
consumer releases the stall only until that stream's queue fills again.
"""

    def check(self, context: DiagnosisContext) -> Iterator[Finding]:
        for blocked in context.dump_findings("KD201"):
            fetcher = blocked.threads[0]
            consumer_id = consumer_id_of_fetcher(fetcher)
            broker = fetcher.rsplit("-", 1)[1] if consumer_id else None
            stopped = next((f for f in context.dump_findings("KD203") if fetcher in f.threads), None)
            starving = next(iter(context.dump_findings("KD202")), None)
            client = self._client(context, fetcher)
            group = self._group_lag(context, consumer_id, client)
            facts = self._facts(fetcher, consumer_id, broker, stopped, starving, client, group)
            evidence = [*blocked.evidence[:2]]
            if stopped is not None:
                evidence += stopped.evidence[:3]
            if client is not None:
                _, comparison = client
                evidence += [
                    Evidence(f"metrics {client[0].source}", None, line) for line in comparison.evidence[:4]
                ]
            evidence += self._lag_evidence(context, facts)
            threads = [
                t for t in [facts["stalled_stream"].get("thread"), fetcher, *facts["starving_threads"]] if t
            ]
            yield self.finding(
                self._message(facts),
                threads,
                evidence,
                story=self._message(facts).split(". ")[0],
                details=facts,
            )

    @staticmethod
    def _client(context: DiagnosisContext, fetcher: str) -> ClientRead | None:
        for read, client in context.clients():
            if runs_fetcher(client, fetcher):
                return read, client
        return None

    @staticmethod
    def _group_lag(
        context: DiagnosisContext, consumer_id: str | None, client: ClientRead | None
    ) -> GroupLag | None:
        if context.lag is None:
            return None
        wanted = client[1].group if client is not None else None
        for group in context.lag.groups:
            if wanted and group.group == wanted and group.source == "zookeeper":
                return group
            if consumer_id and any((p.owner or "").startswith(consumer_id) for p in group.partitions):
                return group
        return None

    @staticmethod
    def _facts(
        fetcher: str, consumer_id: str | None, broker: str | None, stopped: Finding | None,
        starving: Finding | None, client: ClientRead | None, group: GroupLag | None,
    ) -> dict[str, Any]:  # fmt: skip
        stalled: dict[str, Any] = {}
        if stopped is not None:
            stalled = {"thread": stopped.threads[0], "doing": stopped.details.get("doing")}
        comparison = client[1] if client is not None else None
        full = [s for s in comparison.streams if s.state == "full"] if comparison else []
        empty = [s for s in comparison.streams if s.state == "empty"] if comparison else []
        if full:
            stream = full[0]
            stalled.update(
                topic=stream.topic, stream=f"{stream.topic}/{stream.thread_id}", owner=stream.owner,
                queue=f"{stream.queue_size} of {stream.capacity} chunks", partitions=list(stream.partitions),
            )  # fmt: skip
        starving_topics = sorted({s.topic for s in empty} - {stalled.get("topic")})
        partitions = []
        if group is not None:
            for p in group.partitions:
                if not starving_topics or p.topic in starving_topics or p.topic == stalled.get("topic"):
                    partitions.append(
                        {"topic": p.topic, "partition": p.partition, "checker_lag": p.lag,
                         "committed_offset": p.committed_offset, "high_watermark": p.high_watermark,
                         "since_progress_s": p.since_progress_s, "starving": p.topic in starving_topics}
                    )  # fmt: skip
        return {
            "fetcher": fetcher,
            "consumer_id": consumer_id,
            "broker": broker,
            "group": group.group if group is not None else (comparison.group if comparison else None),
            "stalled_stream": stalled,
            "starving_threads": list(starving.threads) if starving is not None else [],
            "starving_topics": starving_topics,
            "partitions": partitions,
            "max_lag": comparison.max_lag if comparison else None,
            "checker_lag_total": comparison.checker_lag_total
            if comparison
            else (group.total_lag if group else None),
            "buffer_bound_records": comparison.bound.records if comparison and comparison.bound else None,
            "metrics_verdict": comparison.verdict if comparison else None,
            "queue_full_by_metrics": bool(comparison and comparison.verdict == VERDICT_STREAMS_NOT_DRAINING),
        }

    @staticmethod
    def _message(facts: dict[str, Any]) -> str:
        stalled = facts["stalled_stream"]
        thread = stalled.get("thread") or "a stream thread"
        topic = f" of topic {stalled['topic']}" if stalled.get("topic") else ""
        doing = f": it is {stalled['doing']}" if stalled.get("doing") else ""
        parts = [f"The stream thread {thread}{topic} stopped draining its queue{doing}"]
        queue = f" ({stalled['stream']}, {stalled['queue']})" if stalled.get("queue") else ""
        broker = f" for broker {facts['broker']}" if facts["broker"] else ""
        parts.append(f"The fetcher {facts['fetcher']}{broker} is blocked putting into that full queue{queue}")
        starving = [p for p in facts["partitions"] if p["starving"]]
        if facts["starving_topics"]:
            worst = max((p["since_progress_s"] or 0 for p in starving), default=0)
            since = f", no progress for {worst:.0f} s" if worst else ""
            parts.append(
                f"So topics {', '.join(facts['starving_topics'])} starve ({len(starving)} partitions, "
                f"{known_sum_text('committed lag', [p['checker_lag'] for p in starving])}{since})"
            )
        elif facts["starving_threads"]:
            parts.append(f"So stream threads {', '.join(facts['starving_threads'])} starve waiting in take")
        if facts["max_lag"] is not None and facts["checker_lag_total"] is not None:
            parts.append(
                _gap_sentence(facts["max_lag"], facts["checker_lag_total"], facts["buffer_bound_records"])
            )
        if not stalled.get("topic"):
            parts.append(
                "Which topic the stopped thread serves needs the consumer's metrics (FetchQueueSize)"
            )
        return ". ".join(parts) + "."

    @staticmethod
    def _lag_evidence(context: DiagnosisContext, facts: dict[str, Any]) -> list[Evidence]:
        where = f"{context.lag_source}, group {facts['group']}"
        lines = []
        for p in facts["partitions"][:8]:
            since = p["since_progress_s"]
            lines.append(
                f"{p['topic']}/{p['partition']}: committed {p['committed_offset']}, high watermark "
                f"{p['high_watermark']}, lag {p['checker_lag']}, "
                + (f"no progress for {since:.1f} s" if since is not None else "time since progress unknown")
            )
        return [Evidence(where, None, line) for line in lines]


def _gap_sentence(max_lag: int, checker_lag: int, bound: int | None) -> str:
    """MaxLag against the checker lag, and what the consumer's buffers can account for: a gap
    past them is unconsumed records; a gap within them (small records fill few chunks) proves
    nothing by itself, and the blocked fetcher in the dump is the evidence."""
    gap = (
        f"MaxLag is {max_lag} while the checker lag is {checker_lag}: "
        "the fetcher stopped fetching, so its lag froze"
    )
    if bound is None:
        return gap
    if checker_lag > bound:
        return f"{gap}; its buffers hold at most {bound} records, so the rest was never consumed"
    return (
        f"{gap}; its buffers could hold up to {bound} records, so the gap alone does not prove a stall: "
        "the fetcher blocked in put in the dump does"
    )
