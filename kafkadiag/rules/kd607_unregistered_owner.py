"""KD607: the lag engine's `unregistered-owner` finding."""

from __future__ import annotations

from kafkadiag.rules.base import Severity
from kafkadiag.rules.cluster import LagFindingRule


class UnregisteredOwner(LagFindingRule):
    code = "KD607"
    name = "unregistered-owner"
    title = "Partition owned by a consumer that is gone"
    severity = Severity.ERROR
    lag_code = "unregistered-owner"
    explanation = """
An owner znode names a consumer id that has no registration: a dead consumer's claim. The live
consumers cannot take the partition, so rebalances fail and the partition is not consumed.
"""
    remedy = """
Wait for the dead consumer's ZooKeeper session to expire; if the claim persists, stop the group
and remove the stale owner znode.
"""
