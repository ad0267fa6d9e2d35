"""The KD7xx rules, as the MaxLag comparison tries them: the registry's KD7 family, in the order
that decides a client's verdict.

The first rule whose `judge` holds names the verdict; none holding is healthy. Absent metrics come
first (nothing else can be judged), then a full stream queue (it explains a small MaxLag), then a
fetcher behind by more than one fetch (KD703 for the new consumer, KD702 for the old), then
metrics that no longer describe the consumer.
"""

from __future__ import annotations

from functools import cache
from typing import TYPE_CHECKING

from kafkadiag.rules.cluster import MetricsVerdictRule
from kafkadiag.rules.registry import FAMILIES, family_rules

if TYPE_CHECKING:
    from kafkadiag.maxlag.facts import ClientFacts, Verdict

VERDICT_ORDER = ("KD705", "KD701", "KD703", "KD702", "KD704")


@cache
def verdict_rules() -> tuple[type[MetricsVerdictRule], ...]:
    """The KD7 family's rules in VERDICT_ORDER."""
    (family,) = [family for family in FAMILIES if family.prefix == "KD7"]
    by_code = {rule.code: rule for rule in family_rules(family) if issubclass(rule, MetricsVerdictRule)}
    return tuple(by_code[code] for code in VERDICT_ORDER)


def judge(facts: ClientFacts) -> Verdict | None:
    """The verdict of the first rule that holds for the client; None: healthy."""
    for rule in verdict_rules():
        verdict = rule().judge(facts)
        if verdict is not None:
            return verdict
    return None
