"""What `kafkadiag dump parse` reports about one dump: counts, identical stacks, locks.

Pure functions over the model; reporters render the result without interpreting it.
"""

from __future__ import annotations

import functools
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass

from kafkadiag.dumps.lines import ReadStats, display_name
from kafkadiag.errors import KafkadiagError
from kafkadiag.jvmreport import JvmReport, read_jvm_report
from kafkadiag.lockgraph import LockGraph, LockNode
from kafkadiag.model import DumpFormat, Frame, Thread, ThreadDump, ThreadStatus

# Frames compared when grouping threads by stack: deep enough to separate pools that share a
# top frame, shallow enough that recursion depth differences deep down do not split a group.
STACK_KEY_DEPTH = 12


@dataclass(frozen=True)
class StackGroup:
    """Threads whose stacks (top STACK_KEY_DEPTH frames) and status are identical."""

    status: str
    frames: tuple[Frame, ...]
    thread_names: tuple[str, ...]


@dataclass(frozen=True)
class LockSummary:
    lock_id: int
    lock_class: str | None
    holders: tuple[str, ...]
    blocked: tuple[str, ...]
    parked: tuple[str, ...]
    waiting: tuple[str, ...]


@dataclass(frozen=True)
class DumpSummary:
    dump: ThreadDump
    by_status: dict[str, int]
    by_state: dict[str, int]
    identical_stacks: tuple[StackGroup, ...]  # groups of two or more threads, largest first
    locks: tuple[LockSummary, ...]  # locks someone waits for, most waiters first
    deadlocked: tuple[tuple[str, ...], ...]  # wait-for cycles found in the lock graph
    # The JVM's deadlock reports, each split by its own edges into the cycle and the threads behind it.
    jvm_reports: tuple[JvmReport, ...] = ()


def stack_key(thread: Thread) -> tuple[ThreadStatus, tuple[Frame, ...]]:
    return thread.status, thread.frames[:STACK_KEY_DEPTH]


def summarize(dump: ThreadDump) -> DumpSummary:
    groups: dict[tuple[ThreadStatus, tuple[Frame, ...]], list[str]] = {}
    for thread in dump.threads:
        if thread.frames:
            groups.setdefault((thread.status, thread.frames[:STACK_KEY_DEPTH]), []).append(thread.name)
    identical = sorted(
        (
            StackGroup(status.value, frames, tuple(names))
            for (status, frames), names in groups.items()
            if len(names) > 1
        ),
        key=lambda group: (-len(group.thread_names), group.thread_names[0]),
    )
    graph = LockGraph(dump)
    return DumpSummary(
        dump=dump,
        # Counted by member, named afterwards: Enum.value is a descriptor call per thread.
        by_status={s.value: n for s, n in Counter(t.status for t in dump.threads).most_common()},
        by_state={s.value: n for s, n in Counter(t.state for t in dump.threads).most_common()},
        identical_stacks=tuple(identical),
        locks=tuple(_lock_summary(graph, node) for node in _waited_for(graph)),
        deadlocked=tuple(tuple(graph.thread(i).name for i in cycle) for cycle in graph.cycles()),
        jvm_reports=tuple(read_jvm_report(links) for links in dump.jvm_deadlocks),
    )


def _waited_for(graph: LockGraph) -> list[LockNode]:
    nodes = [node for node in graph.locks.values() if node.blocked or node.parked or node.waiting]
    return sorted(nodes, key=lambda node: (-node.waiter_count, -len(node.waiting), node.lock_id))


def _lock_summary(graph: LockGraph, node: LockNode) -> LockSummary:
    def names(indexes: list[int]) -> tuple[str, ...]:
        return tuple(graph.thread(i).name for i in indexes)

    return LockSummary(
        lock_id=node.lock_id,
        lock_class=node.lock_class,
        holders=names(node.holders),
        blocked=names(node.blocked),
        parked=names(node.parked),
        waiting=names(node.waiting),
    )


def summarize_files(
    paths: Iterable[str],
    input_format: DumpFormat | None,
    on_progress: Callable[[str, int], None] | None = None,
) -> Iterator[DumpSummary | InputFailure]:
    """Read every path and yield a summary per dump, or an InputFailure for a path that fails.

    A failing file does not stop the others: the caller reports each failure and decides the
    exit code once everything readable has been read.
    """
    from kafkadiag.dumps import read_dumps

    for path in paths:
        stats = ReadStats()
        progress = None if on_progress is None else functools.partial(on_progress, path)
        try:
            for dump in read_dumps(path, input_format, stats, progress):
                yield summarize(dump)
        except KafkadiagError as error:
            yield InputFailure(display_name(path), error, stats)


@dataclass(frozen=True)
class InputFailure:
    source: str
    error: KafkadiagError
    stats: ReadStats
