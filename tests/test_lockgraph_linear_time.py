"""The lock graph and the rules over it take linear time in the threads, whatever their shape.

Each case parses a dump of 1,000 (1x) and 4,000 (4x) blocked threads in one shape (a blocking
chain, one cycle through all of them, many small cycles, everybody behind one lock, a blocking
tree, a chain over java.util.concurrent locks) and times the whole analysis (the graph, its
cycles, every rule): 4x may take at most RATIO_LIMIT times as long as 1x. KD105 walked a chain
per thread (12k, 25k, 50k threads in a row: 17 s, 71 s, 279 s) and a cycle of 100,000 threads
took 36 s to be put in order.
"""

from __future__ import annotations

import random
import time
from pathlib import Path

import pytest

from kafkadiag.dumps import read_dumps
from kafkadiag.errors import KafkadiagError
from kafkadiag.lockgraph import LockGraph
from kafkadiag.model import ThreadDump
from kafkadiag.rules.engine import analyze

from .conftest import CAPTURED, CORPUS
from .dumps.adversarial import LOCK_SHAPES, RATIO_LIMIT, lock_dump_text, measure

BASE_THREADS = 1000


def _dump(tmp_path: Path, shape: str, threads: int) -> ThreadDump:
    path = tmp_path / f"{shape}-{threads}.txt"
    path.write_text(lock_dump_text(shape, threads), encoding="utf-8")
    (dump,) = read_dumps(str(path))
    return dump


@pytest.mark.parametrize("shape", list(LOCK_SHAPES))
def test_the_analysis_of_blocked_threads_takes_linear_time(tmp_path: Path, shape: str) -> None:
    # GIVEN dumps of 1,000 and 4,000 threads blocked in the shape
    dumps = {factor: _dump(tmp_path, shape, BASE_THREADS * factor) for factor in (1, 4)}

    def analysis(factor: int) -> float:
        started = time.process_time()
        analyze([dumps[factor]])
        return time.process_time() - started

    # WHEN each is analysed THEN 4x takes about 4 times as long
    scaling = measure(analysis)
    assert scaling.ratio <= RATIO_LIMIT, (
        f"{shape}: 1x took {scaling.small * 1000:.1f} ms, 4x {scaling.large * 1000:.1f} ms "
        f"({scaling.ratio:.1f} times; linear is about 4)"
    )


def test_a_chain_of_50000_blocked_threads_is_one_finding_within_seconds(tmp_path: Path) -> None:
    # GIVEN 50,000 threads, each blocked by the next (279 s before)
    dump = _dump(tmp_path, "chain", 50_000)
    # WHEN analysed
    started = time.process_time()
    report = analyze([dump])
    elapsed = time.process_time() - started
    # THEN KD105 names the whole chain, and quickly
    (chain,) = [finding for finding in report.findings if finding.rule == "KD105"]
    assert chain.message.startswith("49999 threads wait behind each other"), chain.message
    assert elapsed < 20, f"{elapsed:.1f} s"


def test_a_cycle_of_100000_threads_is_put_in_order_within_seconds(tmp_path: Path) -> None:
    # GIVEN 100,000 threads each waiting for the next one's lock, the last for the first's (36 s)
    dump = _dump(tmp_path, "cycle", 100_000)
    # WHEN its cycles are found
    started = time.process_time()
    cycles = LockGraph(dump).cycles()
    elapsed = time.process_time() - started
    # THEN there is one, through every thread in wait order
    assert [len(cycle) for cycle in cycles] == [100_000]
    assert cycles[0][:3] == [0, 1, 2]
    assert elapsed < 10, f"{elapsed:.1f} s"


def test_the_blocking_tree_of_a_long_chain_is_not_a_recursion(tmp_path: Path) -> None:
    # GIVEN a chain deeper than the interpreter's recursion limit
    graph = LockGraph(_dump(tmp_path, "chain", 5000))
    # WHEN the tree under its end is grown THEN it holds every thread, one under the other
    tree = graph.tree(4999)
    depth = 0
    while tree:
        ((_, tree),) = tree.items()
        depth += 1
    assert depth == 5000


# -- chain_lengths measures what chain() walks ----------------------------------------------------


def _chain_by_walking(graph: LockGraph) -> dict[int, int]:
    """KD105's former walk: every thread's chain, walked from it, when it ends at a thread that
    waits for nobody."""
    lengths = {}
    for index in range(len(graph.threads)):
        if not graph.blockers(index):
            continue
        chain = graph.chain(index)
        if chain[-1] not in chain[:-1]:
            lengths[index] = len(chain)
    return lengths


def _real_dumps() -> list[ThreadDump]:
    paths = sorted(CAPTURED.glob("*/jstack-l.txt")) + sorted(CORPUS.glob("dumpling/*/*.log"))
    dumps = []
    for path in paths:
        try:
            dumps += list(read_dumps(str(path)))
        except KafkadiagError:
            continue
    return dumps


def test_chain_lengths_equal_each_chain_walked_on_real_dumps() -> None:
    dumps = [dump for dump in _real_dumps() if dump.has_lock_data]
    assert len(dumps) > 20
    for dump in dumps:
        graph = LockGraph(dump)
        assert graph.chain_lengths() == _chain_by_walking(graph), dump.source


class _RandomGraph(LockGraph):
    """A lock graph whose wait-for edges are given, not read from a dump."""

    def __init__(self, edges: dict[int, list[int]], threads: int) -> None:
        self._edges = edges
        self.threads = tuple(range(threads))  # type: ignore[arg-type]
        self._wait_event = dict.fromkeys(edges)  # type: ignore[arg-type]

    def blockers(self, index: int) -> list[int]:
        return self._edges.get(index, [])


def test_chain_lengths_equal_each_chain_walked_on_random_graphs() -> None:
    # GIVEN random wait-for graphs: chains, loops, trees into loops, several holders per lock
    chooser = random.Random(32)
    for _ in range(2000):
        threads = chooser.randint(1, 12)
        edges = {
            index: chooser.sample(range(threads), min(threads, chooser.randint(1, 2)))
            for index in range(threads)
            if chooser.random() < 0.7
        }
        graph = _RandomGraph(edges, threads)
        # THEN measuring every chain at once gives what walking each gave
        assert graph.chain_lengths() == _chain_by_walking(graph), edges
