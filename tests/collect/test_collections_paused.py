"""A scan's fewer garbage collections end with the scan, and cycles made meanwhile are still freed."""

from __future__ import annotations

import gc
import weakref

from kafkadiag.collect.collections_paused import few_collections


class _Node:
    def __init__(self) -> None:
        self.partner: _Node | None = None


def test_the_threshold_is_raised_inside_and_restored_after_even_on_an_error() -> None:
    # GIVEN the interpreter's thresholds
    before = gc.get_threshold()
    # WHEN a scan runs inside few_collections and fails
    try:
        with few_collections():
            inside = gc.get_threshold()
            raise RuntimeError("the scan failed")
    except RuntimeError:
        pass
    # THEN the youngest generation was collected less often inside, and as before after
    assert inside[0] >= 100_000 and inside[1:] == before[1:]
    assert gc.get_threshold() == before


def test_a_cycle_made_inside_is_collected_later() -> None:
    # GIVEN two objects referring to each other, made inside and dropped there
    with few_collections():
        first, second = _Node(), _Node()
        first.partner, second.partner = second, first
        watched = weakref.ref(first)
        del first, second
    # WHEN the collector runs THEN the cycle is freed: nothing made in a scan is kept for ever
    gc.collect()
    assert watched() is None
