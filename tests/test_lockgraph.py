"""The wait-for graph's cycle finder on small graphs, then on real dumps through the parsers."""

from __future__ import annotations

import dataclasses

from kafkadiag.dumps import read_dumps
from kafkadiag.errors import KafkadiagError
from kafkadiag.jvmreport import read_jvm_report
from kafkadiag.lockgraph import LockGraph, _strongly_connected
from kafkadiag.model import DeadlockLink, LockEventKind, ThreadDump

from .conftest import CAPTURED, CORPUS, REPO


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


def _cycles_thread_to_thread(graph: LockGraph) -> list[list[int]]:
    """The cycles as found over thread-to-thread edges (each waiter to each holder): the
    reference that routing the edges through lock nodes must reproduce."""
    edges = {index: blockers for index in range(len(graph.threads)) if (blockers := graph.blockers(index))}
    cycles = []
    for component in _strongly_connected(edges):
        members = set(component)
        start = min(component)
        if len(component) == 1:
            continue
        cycle, current = [start], start
        while (current := next(n for n in edges[current] if n in members)) not in cycle:
            cycle.append(current)
        cycles.append(cycle)
    return sorted(cycles)


def _real_dumps() -> list[ThreadDump]:
    paths = sorted(CAPTURED.glob("*/jstack-l.txt")) + sorted(CORPUS.glob("*/*.txt"))
    paths += sorted(CORPUS.glob("dumpling/*/*.log"))
    dumps = []
    for path in paths:
        try:
            dumps += list(read_dumps(str(path)))
        except KafkadiagError:
            continue  # a corpus file that holds no dump this project reads
    return dumps


def test_cycles_through_lock_nodes_equal_thread_to_thread_cycles() -> None:
    # GIVEN every real dump with lock data, captured and from other projects' corpora
    dumps = [dump for dump in _real_dumps() if dump.has_lock_data]
    assert len(dumps) > 50
    found_some = False
    for dump in dumps:
        graph = LockGraph(dump)
        # THEN the cycles are those of the thread-to-thread graph
        assert graph.cycles() == _cycles_thread_to_thread(graph), dump.source
        found_some = found_some or bool(graph.cycles())
    assert found_some


def test_many_holders_of_one_lock_still_give_the_same_cycles() -> None:
    # GIVEN a real deadlock repeated many times in one dump (same lock addresses): every lock
    # has many holders and many waiters, as a read lock shared by a pool does
    dump = next(read_dumps(str(CAPTURED / "deadlock" / "jstack-l.txt")))
    repeated = dataclasses.replace(dump, threads=dump.threads * 40)
    graph = LockGraph(repeated)
    # THEN the cycles agree with the thread-to-thread graph, and the deadlock is found
    assert graph.cycles() == _cycles_thread_to_thread(graph)
    assert graph.cycles()


def test_a_cycle_through_the_second_holder_of_a_lock_is_found() -> None:
    # GIVEN a real two-thread deadlock, with a third thread in front that holds the first
    # thread's lock too but waits for nothing (a second holder, as of a read lock)
    dump = next(read_dumps(str(CAPTURED / "deadlock" / "jstack-l.txt")))
    first, second = (dump.threads[i] for i in LockGraph(dump).cycles()[0])
    bystander = first._replace(
        name="bystander",
        lock_events=tuple(e for e in first.lock_events if e.kind is not LockEventKind.WAITING_TO_LOCK),
    )
    graph = LockGraph(dataclasses.replace(dump, threads=(bystander, first, second)))
    # THEN the deadlock is found through its real holder, not lost behind the bystander
    assert graph.cycles() == [[1, 2]]


# -- the JVM's own deadlock report --------------------------------------------------------------


def jvm_report(path: str) -> tuple[DeadlockLink, ...]:
    (dump,) = read_dumps(path)
    (links,) = dump.jvm_deadlocks
    return links


def test_a_report_thread_waiting_into_the_cycle_is_behind_it_not_on_it() -> None:
    # GIVEN dumpling's report: -133 waits for -24, -24 for -107, -107 for -24
    links = jvm_report(str(CORPUS / "dumpling" / "jstack" / "deadlock.log"))
    # WHEN its edges are read
    report = read_jvm_report(links)
    # THEN each link's holder is the link the report names, and only -24 and -107 form the cycle
    assert report.holders == (1, 2, 1)
    assert report.cycle == (1, 2)
    assert report.behind == (0,)
    assert report.unresolved == ()


def test_same_named_threads_are_told_apart_by_the_order_the_jvm_walked_them() -> None:
    # GIVEN the report of two threads both named "worker", each waiting for the other
    links = jvm_report(str(CAPTURED / "same-name-threads" / "jstack-l.txt"))
    assert [(link.thread_name, link.held_by) for link in links] == [("worker", "worker")] * 2
    # WHEN its edges are read THEN the first waits for the second (listed next), the second for the
    # first (a thread never waits for itself in the report): one cycle of two
    report = read_jvm_report(links)
    assert report.holders == (1, 0)
    assert report.cycle == (0, 1)


def test_a_report_cut_before_its_cycle_closes_names_no_cycle() -> None:
    # GIVEN KAFKA-2253's report without its last thread (kafka-request-handler-b): the reaper's
    # holder is not among the threads listed
    links = jvm_report(str(REPO / "tests" / "wild" / "dumps" / "kafka-2253-purgatory-deadlock.txt"))[:2]
    # WHEN its edges are read THEN no thread is on a cycle, and none is said to be behind one
    report = read_jvm_report(links)
    assert report.holders == (1, None)
    assert (report.cycle, report.behind, report.unresolved) == ((), (), (0, 1))
