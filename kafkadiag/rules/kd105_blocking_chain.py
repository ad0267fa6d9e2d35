"""KD105: the longest chain of threads each blocked by the next."""

from __future__ import annotations

from collections.abc import Iterator

from kafkadiag.rules import stacks
from kafkadiag.rules.base import Finding, Requirement, Rule, Severity
from kafkadiag.rules.context import AnalysisContext

# A chain of this many threads (three waiting on each other behind a fourth) is worth a warning.
WARNING_LENGTH = 4


class BlockingChain(Rule[AnalysisContext]):
    code = "KD105"
    name = "blocking-chain"
    title = "A chain of threads, each blocked by the next"
    severity = Severity.WARNING
    requires = frozenset({Requirement.JAVA})
    explanation = """
Thread A waits for a lock held by B, which waits for a lock held by C, and so on. Only the thread
at the end of the chain can make progress, and whatever it is doing (I/O, a sleep, a slow call)
holds everybody behind it. The longer the chain, the more of the application one slow call stops.
"""
    remedy = """
Look at the last thread in the chain: it is the one to fix (a timeout on its I/O, moving the slow
work out of the locked region). Shorten lock scopes so that holding one lock while waiting for
another becomes rare.
"""

    def check(self, context: AnalysisContext) -> Iterator[Finding]:
        graph = context.graph()
        in_cycle = {member for cycle in graph.cycles() for member in cycle}
        # The first thread (in the dump's order) whose chain is the longest, outside deadlocks;
        # chains that run into a loop are not among the lengths.
        lengths = graph.chain_lengths()
        candidates = sorted(index for index in lengths if index not in in_cycle)
        if not candidates:
            return
        start = max(candidates, key=lengths.__getitem__)
        longest = graph.chain(start)
        if len(longest) < 3:
            return
        threads = [graph.thread(index) for index in longest]
        end = threads[-1]
        evidence = []
        for thread in threads:
            evidence.append(context.header(thread))
            event = thread.waits_for()
            if event is not None and thread is not end:
                evidence.append(context.event(thread, event))
        severity = Severity.WARNING if len(threads) >= WARNING_LENGTH else Severity.INFO
        labels = context.labels(threads)
        path = " -> ".join(labels)
        yield self.finding(
            f"{len(threads) - 1} threads wait behind each other ({path}); the last, {labels[-1]}, "
            f"is {stacks.doing(end)}.",
            [labels[-1], *labels[:-1]],
            evidence,
            severity=severity,
            story=f"Thread {labels[-1]} holds up a chain of {len(threads) - 1} blocked threads",
        )
