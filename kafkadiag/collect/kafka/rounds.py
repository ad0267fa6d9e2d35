"""What a scan gathers, and the rounds of requests every step of it sends."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from kafkadiag.lag.snapshot import BrokerPartition, GroupSnapshot, TopicLayout


@dataclass
class KafkaScan:
    groups: list[GroupSnapshot] = field(default_factory=list)
    partitions: list[BrokerPartition] = field(default_factory=list)
    topics: list[TopicLayout] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    requests: int = 0
    round_trips: int = 0


class Rounds:
    """Rounds of requests on the client, all bounded by one deadline."""

    def __init__(self, client: Any, deadline: float) -> None:
        self.client = client
        self.deadline = deadline

    def send(self, calls: Sequence[tuple[Any, int | None, Any]]) -> list[tuple[Any, Any, str | None]]:
        """(key, node id or None, request) -> (key, answer, None) or (key, None, reason)."""
        outcomes = self.client.round([(node, request) for _, node, request in calls], self.deadline)
        return [(key, answer, reason) for (key, _, _), (answer, reason) in zip(calls, outcomes)]
