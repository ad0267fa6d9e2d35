"""The JVM's own deadlock report ("Found one Java-level deadlock:"), read as the wait-for edges
its lines state: which of its threads are on the cycle, which only wait into it."""

from __future__ import annotations

from collections.abc import Sequence
from typing import NamedTuple

from kafkadiag.model import DeadlockLink


class JvmReport(NamedTuple):
    """One "Found one Java-level deadlock" entry, read as the wait-for edges its lines state.

    HotSpot (ThreadService::find_deadlocks_at_safepoint, JDK 5 to 25) walks from a thread to the
    owner of the lock it waits for until the walk comes back to a thread it passed, and prints
    every thread of the walk. A thread that only waits into the cycle (the walk's first threads)
    is listed with it: the report says which threads are deadlocked only through its edges.
    Positions below are indexes into `links`.
    """

    links: tuple[DeadlockLink, ...]
    holders: tuple[int | None, ...]  # per link: the link of the thread holding what it waits for
    cycle: tuple[int, ...]  # on the cycle, from the first one listed, each waiting for the next
    behind: tuple[int, ...]  # waiting into the cycle without being on it
    unresolved: tuple[int, ...]  # waiting for a thread the report does not list (a report cut short)


def read_jvm_report(links: Sequence[DeadlockLink]) -> JvmReport:
    """Split the report's threads into the cycle and the threads blocked behind it."""
    listed = tuple(links)
    holders = tuple(_report_holder(listed, position) for position in range(len(listed)))
    on_cycle = {position for position in range(len(listed)) if _returns_to(holders, position)}
    behind = tuple(
        position
        for position in range(len(listed))
        if position not in on_cycle and _leads_into(holders, position, on_cycle)
    )
    unresolved = tuple(
        position for position in range(len(listed)) if position not in on_cycle and position not in behind
    )
    return JvmReport(listed, holders, _in_wait_order(holders, on_cycle), behind, unresolved)


def _report_holder(links: tuple[DeadlockLink, ...], position: int) -> int | None:
    """The link of the thread the report says holds what link `position` waits for.

    Names may repeat (pool threads named alike). The walk is printed in order, so the holder of
    any thread's lock but the last one's is the next thread listed; the last thread waits for one
    listed before it, which a repeated name leaves open unless the thread before that one waits
    for the same lock (a monitor or an exclusive synchronizer has one owner).
    """
    link = links[position]
    named = [other for other, candidate in enumerate(links) if candidate.thread_name == link.held_by]
    named = [other for other in named if other != position]  # HotSpot skips a thread waiting for itself
    if position + 1 in named:
        return position + 1
    if len(named) <= 1:
        return named[0] if named else None
    same_lock = [
        other
        for other in named
        if other > 0 and link.lock_id is not None and links[other - 1].lock_id == link.lock_id
    ]
    return same_lock[0] if len(same_lock) == 1 else None


def _returns_to(holders: tuple[int | None, ...], start: int) -> bool:
    current = holders[start]
    for _ in range(len(holders)):
        if current is None:
            return False
        if current == start:
            return True
        current = holders[current]
    return False


def _leads_into(holders: tuple[int | None, ...], start: int, on_cycle: set[int]) -> bool:
    current = holders[start]
    for _ in range(len(holders)):
        if current is None:
            return False
        if current in on_cycle:
            return True
        current = holders[current]
    return False


def _in_wait_order(holders: tuple[int | None, ...], on_cycle: set[int]) -> tuple[int, ...]:
    """The cycle from its first listed thread, each thread followed by the one it waits for."""
    ordered: list[int] = []
    for start in sorted(on_cycle):
        current: int | None = start
        while current is not None and current in on_cycle and current not in ordered:
            ordered.append(current)
            current = holders[current]
    return tuple(ordered)
