"""Benchmarks of the live commands, on this machine, against the bare tools in the same run.

    python bench/diagnose_bench.py [--repeat 5] [--processes 500] [--threads 200]

- demo: wall time from `kafkadiag demo` starting to the diagnosis printed (the step line), and to
  the end (everything stopped), for both scenarios.
- capture: one capture (`kafkadiag capture --count 1`, a whole process) of a JVM running 200
  parked threads, against a bare `jstack -l` of the same JVM; with and without the metrics read.
- ps: `kafkadiag ps` (a whole process) and the library call, on a host with N more processes.
Medians of --repeat runs (after one uncounted warm-up); the load average is printed alongside.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
ENV = {**os.environ, "PYTHONPATH": str(REPO)}
KAFKADIAG = [sys.executable, "-m", "kafkadiag"]


def timed(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True, env=ENV, timeout=600)
    return time.perf_counter() - started


def median_of(repeat: int, run: callable) -> float:  # type: ignore[valid-type]
    run()
    return statistics.median(run() for _ in range(repeat))


def bench_demo(scenario: str) -> tuple[float, float]:
    started = time.perf_counter()
    argv = [*KAFKADIAG, "demo", "--scenario", scenario]
    done = subprocess.run(argv, capture_output=True, text=True, env=ENV, timeout=600)
    total = time.perf_counter() - started
    printed = re.search(r"\[\s*([\d.]+)s\] Diagnosis printed", done.stderr)
    assert done.returncode == 0 and printed, done.stderr[-2000:]
    return float(printed.group(1)), total


def many_threads_jvm(directory: Path, threads: int) -> subprocess.Popen[str]:
    source = directory / "ManyThreads.java"
    source.write_text(
        "import java.util.concurrent.locks.LockSupport;\n"
        "public class ManyThreads { public static void main(String[] a) throws Exception {\n"
        f"  for (int i = 0; i < {threads}; i++) {{\n"
        '    Thread t = new Thread(() -> { while (true) LockSupport.park(); }, "worker-" + i);\n'
        "    t.setDaemon(true); t.start(); }\n"
        '  System.out.println("READY"); Thread.sleep(3600000); } }\n'
    )
    process = subprocess.Popen(["java", "-Xmx64m", str(source)], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stdout.readline().strip() == "READY"
    return process


def bench_capture(repeat: int, threads: int) -> None:
    with tempfile.TemporaryDirectory() as temporary:
        directory = Path(temporary)
        jvm = many_threads_jvm(directory, threads)
        jstack = shutil.which("jstack") or "jstack"
        counter = iter(range(10**6))
        try:
            bare = median_of(repeat, lambda: timed([jstack, "-l", str(jvm.pid)]))
            no_metrics = median_of(repeat, lambda: timed(
                [*KAFKADIAG, "capture", "--pid", str(jvm.pid), "--count", "1", "--no-metrics",
                 "--out", str(directory / f"b{next(counter)}")]))  # fmt: skip
            with_metrics = median_of(repeat, lambda: timed(
                [*KAFKADIAG, "capture", "--pid", str(jvm.pid), "--count", "1",
                 "--out", str(directory / f"b{next(counter)}")]))  # fmt: skip
        finally:
            jvm.kill()
            jvm.wait()
    print(
        f"capture of a JVM with {threads} parked threads: bare jstack -l {bare:.3f} s; "
        f"kafkadiag capture --count 1 --no-metrics {no_metrics:.3f} s ({no_metrics / bare:.2f}x); "
        f"with the metrics read {with_metrics:.3f} s ({with_metrics / bare:.2f}x)"
    )


def bench_ps(repeat: int, processes: int) -> None:
    from kafkadiag.collect.processes import find_consumers

    sleepers = [subprocess.Popen(["sleep", "600"]) for _ in range(processes)]
    try:
        total = len(os.listdir("/proc"))
        whole = median_of(repeat, lambda: timed([*KAFKADIAG, "ps"]))

        def library() -> float:
            started = time.perf_counter()
            find_consumers()
            return time.perf_counter() - started

        inside = median_of(repeat, library)
    finally:
        for sleeper in sleepers:
            sleeper.kill()
        for sleeper in sleepers:
            sleeper.wait()
    print(
        f"ps with {processes} extra processes (~{total} /proc entries): "
        f"kafkadiag ps {whole:.3f} s (whole process), find_consumers() {inside:.3f} s"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--processes", type=int, default=500)
    parser.add_argument("--threads", type=int, default=200)
    parser.add_argument("--skip-demo", action="store_true")
    args = parser.parse_args()
    print(f"cores: {os.cpu_count()}; load: {os.getloadavg()}")
    if not args.skip_demo:
        for scenario in ("old-consumer", "python"):
            printed, total = bench_demo(scenario)
            print(
                f"demo --scenario {scenario}: diagnosis printed after {printed:.1f} s, "
                f"all stopped after {total:.1f} s"
            )
    bench_capture(args.repeat, args.threads)
    bench_ps(args.repeat, args.processes)


if __name__ == "__main__":
    main()
