"""How the lag findings quote their evidence: partition ranges, bounded lists, owner names."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from typing import Protocol, TypeVar

from kafkadiag.digits import all_ascii_digits

# Listing at most this many partitions or nodes in one finding's evidence keeps reports readable.
EVIDENCE_LIMIT = 20


def ranges(numbers: Iterable[int]) -> str:
    """[0, 1, 2, 5, 7, 8] -> "0-2, 5, 7-8"."""
    ordered = sorted(set(numbers))
    parts: list[str] = []
    index = 0
    while index < len(ordered):
        end = index
        while end + 1 < len(ordered) and ordered[end + 1] == ordered[end] + 1:
            end += 1
        parts.append(str(ordered[index]) if end == index else f"{ordered[index]}-{ordered[end]}")
        index = end + 1
    return ", ".join(parts)


def limited(lines: list[str], limit: int = EVIDENCE_LIMIT) -> tuple[str, ...]:
    """At most `limit` lines, and how many more there were."""
    if len(lines) <= limit:
        return tuple(lines)
    return (*lines[:limit], f"... and {len(lines) - limit} more")


def consumer_of_owner(owner: str) -> str:
    """ "<consumerId>-<threadNo>" -> "<consumerId>"."""
    head, dash, thread = owner.rpartition("-")
    return head if dash and all_ascii_digits(thread) else owner


class _OfTopic(Protocol):
    @property
    def topic(self) -> str: ...


class _OfPartition(_OfTopic, Protocol):
    @property
    def partition(self) -> int: ...


def where(item: _OfPartition) -> str:
    """A partition as the evidence names it: "orders/3"."""
    return f"{item.topic}/{item.partition}"


OfTopicT = TypeVar("OfTopicT", bound=_OfTopic)


def by_topic(items: Iterable[OfTopicT]) -> list[tuple[str, list[OfTopicT]]]:
    """Partitions (or offsets) grouped by topic, topics in name order, each in its given order."""
    grouped: dict[str, list[OfTopicT]] = defaultdict(list)
    for item in items:
        grouped[item.topic].append(item)
    return sorted(grouped.items())
