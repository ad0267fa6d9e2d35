"""The dump-wide stack index answers exactly what asking every thread answers, in dump order."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from kafkadiag.dumps import read_dumps
from kafkadiag.rules import queues, stackindex, stacks

from ..conftest import CAPTURED

# Questions the rules ask, with and without suffix matching, of functions and of classes.
FUNCTIONS = (
    (("java.lang.Thread.join",), False),
    (("java.util.concurrent.LinkedBlockingQueue.put", "java.lang.Object.wait"), False),
    (("PartitionTopicInfo.enqueue",), True),
    (("KafkaConsumer.poll", "ConsumerIterator.makeNext"), True),
    (("no.such.Function",), False),
    # The loop function of a frame printed as `at (Unknown Source)` is empty: it matches every
    # stack, but never a thread without frames.
    (("",), True),
)
CLASSES = (
    "java.util.concurrent.LinkedBlockingQueue",
    "kafka.consumer.ConsumerFetcherThread",
    "java.lang.Thread",
)


def _captured_dumps() -> list[Path]:
    return sorted(CAPTURED.glob("*/jstack*.txt")) + sorted(CAPTURED.glob("*/py-spy*.txt"))


@pytest.fixture(autouse=True)
def _fresh_index() -> None:
    stackindex.forget_indexes()


@pytest.mark.parametrize("path", _captured_dumps(), ids=lambda path: f"{path.parent.name}/{path.name}")
def test_index_agrees_with_every_thread_asked(path: Path) -> None:
    # GIVEN a real captured dump
    dump = next(read_dumps(str(path)))
    for functions, suffix in FUNCTIONS:
        # WHEN the index is asked which threads run the functions
        found = stackindex.positions_with(dump, *functions, suffix=suffix)
        # THEN it names exactly the threads has_frame accepts, in dump order
        expected = [i for i, t in enumerate(dump.threads) if stacks.has_frame(t, *functions, suffix=suffix)]
        assert found == expected, functions
        assert stackindex.threads_with(dump, *functions, suffix=suffix) == [dump.threads[i] for i in expected]
    for class_name in CLASSES:
        expected = [i for i, t in enumerate(dump.threads) if stacks.runs_in_class(t, class_name)]
        assert stackindex.positions_in_class(dump, class_name) == expected, class_name
    puts = [
        (i, f)
        for i, t in enumerate(dump.threads)
        if (f := queues.queue_frame(t, queues.PUT_METHODS)) is not None
    ]
    assert queues.queue_frames(dump, queues.PUT_METHODS) == puts


def test_threads_sharing_a_stack_are_each_answered() -> None:
    # GIVEN a real dump whose threads are repeated, as a pool's workers repeat one stack
    dump = next(read_dumps(str(CAPTURED / "real-old-consumer-stall-0.8.2.2" / "jstack-l.txt")))
    fetcher = next(t for t in dump.threads if stacks.has_frame(t, "PartitionTopicInfo.enqueue", suffix=True))
    copies = [fetcher._replace(name=f"copy-{n}", line_no=fetcher.line_no) for n in range(3)]
    repeated = dataclasses.replace(dump, threads=(*copies, *dump.threads, *copies))
    # WHEN the index is asked THEN every copy is found, each at its own position, in order
    found = stackindex.threads_with(repeated, "PartitionTopicInfo.enqueue", suffix=True)
    assert [t.name for t in found] == [
        "copy-0",
        "copy-1",
        "copy-2",
        fetcher.name,
        "copy-0",
        "copy-1",
        "copy-2",
    ]
    assert stackindex.positions_with(repeated, "PartitionTopicInfo.enqueue", suffix=True) == [
        0,
        1,
        2,
        3 + dump.threads.index(fetcher),
        3 + len(dump.threads),
        4 + len(dump.threads),
        5 + len(dump.threads),
    ]


def test_an_index_is_not_reused_for_another_dump() -> None:
    # GIVEN two different real dumps asked the same question in turn
    stall = next(read_dumps(str(CAPTURED / "real-old-consumer-stall-0.8.2.2" / "jstack-l.txt")))
    healthy = next(read_dumps(str(CAPTURED / "real-old-consumer-healthy-0.8.2.2" / "jstack-l.txt")))
    in_stall = stackindex.threads_with(stall, "PartitionTopicInfo.enqueue", suffix=True)
    in_healthy = stackindex.threads_with(healthy, "PartitionTopicInfo.enqueue", suffix=True)
    # THEN each answer holds threads of its own dump only
    assert in_stall and all(any(t is u for u in stall.threads) for t in in_stall)
    assert all(any(t is u for u in healthy.threads) for t in in_healthy)


def test_a_stack_with_an_unhashable_field_is_still_answered() -> None:
    # GIVEN a real dump in which one thread's frame carries a field no dict can hash
    dump = next(read_dumps(str(CAPTURED / "real-old-consumer-stall-0.8.2.2" / "jstack-l.txt")))
    fetcher = next(t for t in dump.threads if stacks.has_frame(t, "PartitionTopicInfo.enqueue", suffix=True))
    odd = fetcher._replace(frames=(fetcher.frames[0]._replace(module=["java.base"]), *fetcher.frames[1:]))
    mixed = dataclasses.replace(dump, threads=(odd, *dump.threads))
    # WHEN the index is asked THEN that thread is found like any other, in its place
    found = stackindex.positions_with(mixed, "PartitionTopicInfo.enqueue", suffix=True)
    assert found == [0, 1 + dump.threads.index(fetcher)]
