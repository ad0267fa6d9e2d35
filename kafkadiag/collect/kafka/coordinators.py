"""Each group's coordinator: FindCoordinator for every group at once (v4+), or one request per
group on brokers before 3.0, retried while the coordinator is still loading."""

from __future__ import annotations

import time
from typing import Any

from kafkadiag.collect.kafka.errors import error_name
from kafkadiag.collect.kafka.requests import Broker, Coordinator, FindCoordinatorRequest
from kafkadiag.collect.kafka.rounds import KafkaScan, Rounds

# Coordinator errors a broker answers while the group's offsets partition is being created or
# loaded (on first use, after a leader change): Kafka's own clients retry them, and so does the
# scan, for at most this long and never past --timeout.
COORDINATOR_RETRY_S = 5.0
COORDINATOR_RETRY_BACKOFF_S = 0.25
_RETRIABLE_COORDINATOR_ERRORS = {14, 15}  # COORDINATOR_LOAD_IN_PROGRESS, COORDINATOR_NOT_AVAILABLE


def find_coordinators(rounds: Rounds, result: KafkaScan, group_ids: list[str]) -> dict[str, int | str]:
    """Each group's coordinator node id, or the reason it is unknown."""
    retry_until = min(rounds.deadline, time.monotonic() + COORDINATOR_RETRY_S)
    by_group: dict[str, int | str] = {}
    learned: set[int] = set()  # a few coordinators answer for 1,000s of groups
    pending = list(group_ids)
    while True:
        retriable = []
        for coordinator in _ask_coordinators(rounds, result, pending):
            if coordinator.error_code in _RETRIABLE_COORDINATOR_ERRORS:
                retriable.append(coordinator.key)
            if coordinator.error_code:
                by_group[coordinator.key] = str(error_name(coordinator.error_code))
                continue
            if coordinator.node_id not in learned:
                rounds.client.add_broker(Broker(coordinator.node_id, coordinator.host, coordinator.port))
                learned.add(coordinator.node_id)
            by_group[coordinator.key] = coordinator.node_id
        if not retriable or time.monotonic() + COORDINATOR_RETRY_BACKOFF_S >= retry_until:
            return by_group
        time.sleep(COORDINATOR_RETRY_BACKOFF_S)
        pending = retriable


def _ask_coordinators(rounds: Rounds, result: KafkaScan, group_ids: list[str]) -> list[Coordinator]:
    if rounds.client.accepts(FindCoordinatorRequest(("", ""))):
        requests: list[tuple[str | None, int | None, Any]] = [
            (None, None, FindCoordinatorRequest(tuple(group_ids)))
        ]
    else:  # a broker before 3.0: one request per group
        requests = [(group, None, FindCoordinatorRequest((group,))) for group in group_ids]
    found: list[Coordinator] = []
    for group, answer, reason in rounds.send(requests):
        if reason is None:
            found += answer
        elif group is None:
            result.errors.append(f"cannot find group coordinators: {reason}")
        else:
            result.errors.append(f"cannot find the coordinator of group {group}: {reason}")
    return found
