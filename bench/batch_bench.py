"""Batch benchmark: the Spark path (local[*]) against the plain single-process path, same inputs,
same run.

    python bench/batch_bench.py [--sizes 100,2000,20000] [--snapshot-rows 1000000] [--master local[*]]

Dump inputs are copies of the real dumps in fixtures/captured and tests/corpus (every file
`dump analyze` reads), cycled until the asked number of files exists. The plain path is the
loop a single process would run: `analyze_unit` (read_dumps + the rule engine) over every file in
turn, in this process (no start-up counted). The Spark path is `kafkadiag batch` end to end in a
process of its own: interpreter and JVM start-up, listing, analysis, writing every output. One
batch run before the measured ones leaves the driver's class-data archive in place, as any run
after a machine's first finds it (docs/batch.md, "Start-up").
Lag inputs: snapshot files as `kafkadiag lag --record` writes them (10 recorders, each 100
groups x 10 partitions per snapshot), evaluated by the plain path as
`lag history` would at every snapshot, and by Spark SQL window functions.
Prints files/s, MB/s and rows/s for both, and the ratio.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from kafkadiag.collect.lagrecord import RECORD_FILE  # noqa: E402
from kafkadiag.pipeline.units import expand_local  # noqa: E402
from kafkadiag.pipeline.work import analyze_unit  # noqa: E402

CORPUS = REPO / "tests" / "corpus"
CAPTURED = REPO / "fixtures" / "captured"


def real_dump_files() -> list[Path]:
    units, _ = expand_local([str(CAPTURED), str(CORPUS)])
    readable = []
    for unit in units:
        if unit.kind == "dump" and not analyze_unit(unit)["quarantine"]:
            readable.append(Path(unit.path))
    return readable


def build_dump_inputs(directory: Path, count: int, sources: list[Path]) -> int:
    directory.mkdir(parents=True)
    total = 0
    for index in range(count):
        source = sources[index % len(sources)]
        target = directory / f"{index:06d}-{source.name}"
        shutil.copyfile(source, target)
        total += target.stat().st_size
    return total


def build_lag_inputs(
    directory: Path, rows: int, recorders: int = 10, groups: int = 100, partitions: int = 10
) -> int:
    """Snapshot files whose rows add up to `rows`; offsets move, stall and rewind by group."""
    from kafkadiag.lag.snapshot import (
        BrokerPartition,
        CommittedOffset,
        GroupSnapshot,
        Snapshot,
        to_json,
    )

    per_snapshot = groups * partitions
    snapshots = max(1, rows // (per_snapshot * recorders))
    for recorder in range(recorders):
        target = directory / f"recorder-{recorder}"
        target.mkdir(parents=True)
        with open(target / RECORD_FILE, "w") as handle:
            for step in range(snapshots):
                high = 1000 + 50 * step
                group_snapshots = []
                for group in range(groups):
                    speed = group % 4  # 0: stalled, 1: slow, 2: keeping up, 3: rewinding now and then
                    committed = {0: 500, 1: 500 + 20 * step, 2: high - 5, 3: 500 + 40 * (step % 7)}[speed]
                    group_snapshots.append(
                        GroupSnapshot(
                            group=f"r{recorder}-g{group}",
                            source="kafka",
                            offsets=tuple(
                                CommittedOffset(f"topic-{group % 10}", p, committed)
                                for p in range(partitions)
                            ),
                        )
                    )
                snapshot = Snapshot(
                    taken_at_ms=1_700_000_000_000 + 10_000 * step,
                    groups=tuple(group_snapshots),
                    partitions=tuple(
                        BrokerPartition(f"topic-{t}", p, high_watermark=high)
                        for t in range(10)
                        for p in range(partitions)
                    ),
                )
                handle.write(json.dumps(to_json(snapshot), separators=(",", ":")) + "\n")
    return snapshots * per_snapshot * recorders


def plain_dumps(directory: Path) -> float:
    units, _ = expand_local([str(directory)])
    started = time.perf_counter()
    for unit in units:
        analyze_unit(unit)
    return time.perf_counter() - started


def plain_lag(directory: Path) -> float:
    """`lag history` at every snapshot of every recorder: its window evaluation, one process."""
    from kafkadiag.collect.lagrecord import read_recorded
    from kafkadiag.lag.window import evaluate_window

    started = time.perf_counter()
    for recorder in sorted(directory.iterdir()):
        snapshots, _ = read_recorded(str(recorder))
        for end in range(1, len(snapshots) + 1):
            evaluate_window(snapshots[max(0, end - 10) : end])
    return time.perf_counter() - started


def spark_batch(inputs: list[Path], out: Path, master: str) -> float:
    started = time.perf_counter()
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "kafkadiag",
            "batch",
            *map(str, inputs),
            "--out",
            str(out),
            "--master",
            master,
        ],
        capture_output=True,
        text=True,
        cwd=REPO,
    )
    elapsed = time.perf_counter() - started
    if done.returncode not in (0, 1):
        raise SystemExit(f"kafkadiag batch failed ({done.returncode}):\n{done.stderr[-3000:]}")
    return elapsed


def wait_for_archive_writers(timeout_s: float = 120.0) -> None:
    """The first run's JVM writes the class-data archive after its process has ended."""
    import psutil

    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        writers = [
            p
            for p in psutil.process_iter(["cmdline"])
            if "-XX:ArchiveClassesAtExit" in " ".join(p.info["cmdline"] or [])
        ]
        if not writers:
            return
        time.sleep(0.5)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--sizes", default="100,2000,20000")
    parser.add_argument("--snapshot-rows", type=int, default=1_000_000)
    parser.add_argument("--master", default="local[*]")
    args = parser.parse_args()
    sources = real_dump_files()
    print(f"{len(sources)} real dump files as sources; cores: {os.cpu_count()}; load: {os.getloadavg()}")
    with tempfile.TemporaryDirectory(prefix="kafkadiag-batch-bench-") as temporary:
        root = Path(temporary)
        spark_batch([CAPTURED / "healthy"], root / "warm-up", args.master)  # class archive, page cache
        wait_for_archive_writers()
        for size in (int(value) for value in args.sizes.split(",")):
            inputs = root / f"dumps-{size}"
            total = build_dump_inputs(inputs, size, sources)
            plain = plain_dumps(inputs)
            spark = spark_batch([inputs], root / f"out-{size}", args.master)
            megabytes = total / 1e6
            print(
                f"{size:>6} dump files, {megabytes:7.1f} MB: "
                f"plain {plain:7.2f} s ({size / plain:7.1f} files/s, "
                f"{megabytes / plain:5.1f} MB/s); spark {spark:7.2f} s ({size / spark:7.1f} files/s, "
                f"{megabytes / spark:5.1f} MB/s); spark/plain {spark / plain:4.2f}x"
            )
            shutil.rmtree(inputs)
        if args.snapshot_rows:
            lag_inputs = root / "lag"
            rows = build_lag_inputs(lag_inputs, args.snapshot_rows)
            plain = plain_lag(lag_inputs)
            spark = spark_batch([lag_inputs], root / "out-lag", args.master)
            print(
                f"{rows:,} snapshot rows: plain {plain:7.2f} s ({rows / plain:,.0f} rows/s); "
                f"spark {spark:7.2f} s ({rows / spark:,.0f} rows/s); spark/plain {spark / plain:4.2f}x"
            )


if __name__ == "__main__":
    main()
