"""KD305 groups threads by their name without its trailing number, in time linear in the names.

`\\d+$` was tried from every digit of a run that does not end the name: a thread named by a
256 KB run of digits and a letter took minutes. `(?<!\\d)` starts it at the run's first digit.
"""

from __future__ import annotations

import dataclasses
import time

from kafkadiag.dumps import read_dumps
from kafkadiag.rules.kd305_single_busy_worker import TRAILING_NUMBER, pools

from ..conftest import CAPTURED
from ..dumps.adversarial import RATIO_LIMIT, measure


def test_a_name_of_a_long_run_of_digits_is_grouped_in_linear_time() -> None:
    # GIVEN names of 64 KB (1x) and 256 KB (4x): digits, then a letter
    names = {factor: "9" * (64 * 1024 * factor) + "x" for factor in (1, 4)}

    def search(factor: int) -> float:
        started = time.process_time()
        TRAILING_NUMBER.search(names[factor])
        return time.process_time() - started

    scaling = measure(search)
    assert scaling.ratio <= RATIO_LIMIT, f"{scaling.small:.4f} s, {scaling.large:.4f} s"


def test_pools_are_the_names_without_their_trailing_number() -> None:
    # GIVEN a real dump's threads renamed as pool workers, a name of digits and one with a newline
    dump = next(read_dumps(str(CAPTURED / "deadlock" / "jstack-l.txt")))
    names = [
        "clicks-worker-1",
        "clicks-worker-22",
        "clicks-worker-333",
        "7",
        "8",
        "9",
        "job-4\n",
        "job-5\n",
        "job-6\n",
    ]
    threads = tuple(thread._replace(name=name) for thread, name in zip(dump.threads, names))
    grouped = pools(dataclasses.replace(dump, threads=threads))
    # THEN each pool is named by what its members share
    assert {prefix: len(members) for prefix, members in grouped.items()} == {
        "clicks-worker-": 3,
        "": 3,
        "job-\n": 3,
    }
