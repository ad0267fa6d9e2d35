"""A scan's pause of the garbage collector is given back whole: the threshold, and the objects it
froze (a `lag --serve` exporter scans again and again in one process)."""

from __future__ import annotations

import gc

from kafkadiag.collect.collections_paused import few_collections


def test_a_scan_gives_back_the_threshold_and_what_it_froze() -> None:
    # GIVEN a process that froze nothing
    gc.unfreeze()
    threshold = gc.get_threshold()
    # WHEN a scan runs
    with few_collections():
        # THEN the objects alive at its start are out of the collector's sight meanwhile
        assert gc.get_freeze_count() > 0
        assert gc.get_threshold()[0] >= 100_000
    # AND afterwards nothing stays frozen and the threshold is the caller's again
    assert gc.get_freeze_count() == 0
    assert gc.get_threshold() == threshold


def test_a_callers_own_freeze_is_left_as_it_was() -> None:
    # GIVEN a caller that froze its own objects
    gc.freeze()
    frozen = gc.get_freeze_count()
    try:
        # WHEN a scan runs and ends
        with few_collections():
            pass
        # THEN the caller's frozen objects are still frozen, no more and no fewer
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
