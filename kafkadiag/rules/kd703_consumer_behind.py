"""KD703: the MaxLag comparison's `consumer-behind` verdict."""

from __future__ import annotations

from kafkadiag.maxlag.facts import ClientFacts, Verdict, describe_setting, limited
from kafkadiag.maxlag.model import VERDICT_CONSUMER_BEHIND
from kafkadiag.rules.base import Severity
from kafkadiag.rules.cluster import MetricsVerdictRule


class ConsumerBehind(MetricsVerdictRule):
    code = "KD703"
    name = "consumer-behind"
    title = "The new consumer's position trails the log"
    severity = Severity.WARNING
    verdict = VERDICT_CONSUMER_BEHIND
    explanation = """
records-lag-max exceeds one fetch: the new consumer fetches inside poll(), so a slow poll loop and
a slow fetch look the same here.
"""
    remedy = """
Take a thread dump (or py-spy dump) of the consumer to see where the poll loop spends its time.
"""

    def judge(self, facts: ClientFacts) -> Verdict | None:
        if not facts.new_consumer or not facts.behind():
            return None
        behind = [
            p for p in facts.partitions if p.fetcher_lag is not None and p.fetcher_lag > facts.threshold
        ]
        return self.decided(
            f"client {facts.client}: records-lag-max {facts.max_fetcher_lag} > {facts.threshold} "
            f"({facts.threshold_source}); {len(behind)} partition(s) behind",
            limited([*facts.max_lag_lines(), facts.threshold_line(), *facts.partition_lines()]),
            "The consumer's position trails the log. The new consumer fetches inside poll(): check the "
            "time between polls (a slow poll loop looks the same) and, if polls are frequent, the "
            f"broker and network, and raise {describe_setting(facts.settings, facts.fetch_setting)} or add "
            "consumers.",
        )
