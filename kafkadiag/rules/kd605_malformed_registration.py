"""KD605: the lag engine's `malformed-registration` finding."""

from __future__ import annotations

from kafkadiag.rules.base import Severity
from kafkadiag.rules.cluster import LagFindingRule


class MalformedRegistration(LagFindingRule):
    code = "KD605"
    name = "malformed-registration"
    title = "Consumer registration that is not one"
    severity = Severity.WARNING
    lag_code = "malformed-registration"
    explanation = """
A znode under /consumers/<group>/ids is not a consumer registration as ZookeeperConsumerConnector
writes it: rebalances may fail to parse it.
"""
    remedy = """
Identify the process that wrote it (the value is quoted) and remove it with every consumer of the
group stopped.
"""
