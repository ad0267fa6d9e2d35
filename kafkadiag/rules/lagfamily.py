"""The KD6xx rules, as the lag engine runs them over each group: the registry's KD6 family."""

from __future__ import annotations

from functools import cache

from kafkadiag.rules.base import Finding
from kafkadiag.rules.cluster import LagFindingRule
from kafkadiag.rules.groupfacts import GroupFacts
from kafkadiag.rules.registry import FAMILIES, family_rules


@cache
def lag_rules() -> tuple[type[LagFindingRule], ...]:
    """The KD6 family's rules, in code order."""
    (family,) = [family for family in FAMILIES if family.prefix == "KD6"]
    return tuple(rule for rule in family_rules(family) if issubclass(rule, LagFindingRule))


def group_findings(facts: GroupFacts) -> tuple[Finding, ...]:
    """Every KD6xx rule over one group, in code order."""
    return tuple(finding for rule in lag_rules() for finding in rule().group_check(facts))
