"""A poll thread's workers are described by what they do, ten at most; the rest are counted.

A finding repeats the description for every poll thread of a pool, so a pool of thousands of
workers listed in full made the analysis of a large dump quadratic and its messages unreadable.
"""

from __future__ import annotations

from kafkadiag.dumps import read_dumps
from kafkadiag.rules import newconsumer

from ..conftest import CAPTURED

DUMP = CAPTURED / "real-new-consumer-waits-workers-4.1.1" / "jstack-l.txt"


def test_a_few_workers_are_all_described() -> None:
    threads = list(next(read_dumps(str(DUMP))).threads)[:3]
    described = newconsumer.describe_workers(threads)
    assert all(thread.name in described for thread in threads)
    assert "more" not in described


def test_a_large_pool_is_described_by_its_first_ten_and_counted() -> None:
    threads = list(next(read_dumps(str(DUMP))).threads)
    pool = (threads * (25 // len(threads) + 1))[:25]
    described = newconsumer.describe_workers(pool)
    assert described.endswith(" and 15 more")
    assert described.count(" (") == newconsumer.DESCRIBED_WORKERS
