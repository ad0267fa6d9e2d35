"""The KD70x rules: the verdicts of the MaxLag comparison, in the order they are tried.

The first rule whose `judge` holds names the client's verdict; none holding is healthy. Absent
metrics come first (nothing else can be judged), then a full stream queue (it explains a small
MaxLag), then a fetcher behind by more than one fetch, then metrics that no longer describe it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkadiag.rules.cluster import MetricsVerdictRule
from kafkadiag.rules.kd701_streams_not_draining import StreamsNotDraining
from kafkadiag.rules.kd702_fetch_bound import FetchBound
from kafkadiag.rules.kd703_consumer_behind import ConsumerBehind
from kafkadiag.rules.kd704_fetcher_stale import FetcherStale
from kafkadiag.rules.kd705_fetcher_absent import FetcherAbsent

if TYPE_CHECKING:
    from kafkadiag.maxlag.facts import ClientFacts, Verdict

VERDICT_RULES: tuple[type[MetricsVerdictRule], ...] = (
    FetcherAbsent,
    StreamsNotDraining,
    ConsumerBehind,
    FetchBound,
    FetcherStale,
)


def judge(facts: ClientFacts) -> Verdict | None:
    """The verdict of the first rule that holds for the client; None: healthy."""
    for rule in VERDICT_RULES:
        verdict = rule().judge(facts)
        if verdict is not None:
            return verdict
    return None
