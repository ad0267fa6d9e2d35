"""Reading a dump pauses the cyclic garbage collector and gives back exactly the state it found:
to the caller between dumps, after a parse inside a parse, and when the caller stops early. An
analysis freezes the objects alive while its rules run and gives back only what it froze."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from kafkadiag.dumps import read_dumps
from kafkadiag.dumps.hotspot import parse_hotspot

from ..conftest import CAPTURED

SERIES = CAPTURED / "real-old-consumer-stall-0.8.2.2" / "kill3-50-dumps.log.gz"
ONE_DUMP = CAPTURED / "real-old-consumer-stall-0.8.2.2" / "jstack-l.txt"


@pytest.fixture(autouse=True)
def _collector_back_on() -> Iterator[None]:
    yield
    gc.enable()


def test_the_caller_gets_the_collector_as_it_left_it_between_dumps() -> None:
    # GIVEN a real log of many dumps, read one dump at a time
    gc.enable()
    dumps = read_dumps(str(SERIES))
    next(dumps)
    assert gc.isenabled()
    # WHEN the caller turns the collector off between two dumps
    gc.disable()
    next(dumps)
    # THEN the next dump comes back with it still off, and reading on does not turn it on
    assert not gc.isenabled()
    dumps.close()
    assert not gc.isenabled()


def test_a_parse_inside_a_parse_leaves_the_collector_on() -> None:
    # GIVEN a parse whose batches come from a generator that parses another real dump meanwhile
    gc.enable()
    inner_states = []

    def batches() -> Iterator[list[str]]:
        inner_states.append(len(list(read_dumps(str(ONE_DUMP)))))
        yield ONE_DUMP.read_text(encoding="utf-8").split("\n")

    # WHEN both are read to the end
    outer = list(parse_hotspot(batches(), "outer"))
    # THEN both parsed, and the collector is on again as it was
    assert outer and inner_states == [1]
    assert gc.isenabled()


def test_an_analysis_gives_back_the_objects_it_froze_and_no_others() -> None:
    from kafkadiag.rules.engine import analyze

    # GIVEN a real dump, and no object frozen by anyone
    dumps = list(read_dumps(str(ONE_DUMP)))
    assert gc.get_freeze_count() == 0
    # WHEN it is analysed THEN nothing is left frozen
    assert analyze(dumps).findings
    assert gc.get_freeze_count() == 0
    # AND a caller's own frozen objects stay frozen through an analysis
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        analyze(dumps)
        # As for a parse: none of the analysis joined them, none were given back; a memo of the
        # first analysis, frozen by the caller, may die in this one.
        after = gc.get_freeze_count()
        assert frozen * 0.99 < after <= frozen, (frozen, after)
    finally:
        gc.unfreeze()


def test_a_parse_leaves_nothing_frozen_and_a_callers_freeze_as_it_was() -> None:
    # GIVEN a real dump and no object frozen
    gc.enable()
    assert gc.get_freeze_count() == 0
    # WHEN it is read THEN what the parse built is in the collector's generations, none frozen
    dumps = list(read_dumps(str(ONE_DUMP)))
    assert dumps and gc.get_freeze_count() == 0
    assert gc.is_tracked(dumps[0].threads[0].frames)
    # AND a caller's own frozen objects stay frozen, and only those, through a parse
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert list(read_dumps(str(ONE_DUMP)))
        # Nothing of the parse joined the frozen objects, and they were not given back (an
        # unfreeze puts the count at 0). A frozen object may still die meanwhile: a memo of the
        # first parse, alive when the caller froze, that this parse replaces.
        after = gc.get_freeze_count()
        assert frozen * 0.99 < after <= frozen, (frozen, after)
    finally:
        gc.unfreeze()
