"""How `kafkadiag batch` splits its input before Spark sees it: batches of about equal bytes, no
batch too small to pay for its task, and the driver's quick start for small local inputs."""

from __future__ import annotations

from pathlib import Path

from kafkadiag.pipeline.job import (
    MIN_BATCH_BYTES,
    QUICK_START_BYTES,
    SLICES_PER_CORE,
    balanced_batches,
    batch_count,
    wants_quick_start,
)
from kafkadiag.pipeline.units import DUMP, Unit


def dump_of(directory: Path, name: str, size: int) -> Unit:
    path = directory / name
    with path.open("wb") as handle:
        handle.truncate(size)  # sparse: the size is what counts, not the content
    return Unit(DUMP, str(path), (str(path),))


def test_batches_hold_about_equal_bytes_with_the_big_files_spread(tmp_path: Path) -> None:
    # GIVEN two large dumps and many small ones
    units = [dump_of(tmp_path, "big-a", 900), dump_of(tmp_path, "big-b", 800)]
    units += [dump_of(tmp_path, f"small-{index:02d}", 50) for index in range(20)]
    # WHEN they are dealt into 2 batches
    batches = balanced_batches(units, 2)
    # THEN each large dump lands in its own batch and the bytes differ by at most one small file
    loads = sorted(sum(Path(unit.path).stat().st_size for unit in batch) for batch in batches)
    assert [sum("big" in unit.path for unit in batch) for batch in batches] == [1, 1]
    assert loads[1] - loads[0] <= 50 and sum(loads) == 2700


def test_no_batch_is_smaller_than_the_byte_floor_nor_more_than_four_per_core(tmp_path: Path) -> None:
    small = [dump_of(tmp_path, f"s{index}", 10_000) for index in range(100)]  # 1 MB in all
    assert batch_count(small, cores=2) == 1
    large = [dump_of(tmp_path, f"l{index}", MIN_BATCH_BYTES) for index in range(50)]
    assert batch_count(large, cores=2) == 2 * SLICES_PER_CORE
    three_floors = [dump_of(tmp_path, f"m{index}", MIN_BATCH_BYTES) for index in range(3)]
    assert batch_count(three_floors, cores=8) == 3
    assert batch_count([], cores=2) == 1


def test_the_quick_start_is_for_small_local_inputs_only(tmp_path: Path) -> None:
    small = [dump_of(tmp_path, "small", 1_000)]
    assert wants_quick_start(small, remote_inputs=[])
    large = [dump_of(tmp_path, "large", QUICK_START_BYTES)]
    assert not wants_quick_start(large, remote_inputs=[])
    # remote inputs are listed only once the session runs: their size is unknown at start-up
    assert not wants_quick_start(small, remote_inputs=["hdfs://namenode/dumps"])
