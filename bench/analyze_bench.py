"""Analysis benchmark: the whole rule catalogue on a 10,000-thread dump and on a 50-dump log.

    python bench/analyze_bench.py [--threads 10000] [--repeat 5]
    python bench/analyze_bench.py --threads 150000 --repeat 1     # the 150k-thread target

The large dump is built from real thread blocks exactly as bench/parse_bench.py builds it; the
50-dump log is the real kill -3 log in fixtures/captured/real-old-consumer-stall-0.8.2.2/ (Apache
Kafka 0.8.2.2's old consumer, gzipped). Times are parse +
analysis in-process (best of --repeat) and `kafkadiag dump analyze` end to end; memory is the
tracemalloc peak of parse + analysis, against the input size.
"""

from __future__ import annotations

import argparse
import gc
import gzip
import subprocess
import sys
import tempfile
import time
import tracemalloc
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import machine  # noqa: E402
from parse_bench import build_large_dump  # noqa: E402

from kafkadiag.dumps import read_dumps  # noqa: E402
from kafkadiag.rules.engine import analyze  # noqa: E402

LOG = REPO / "fixtures" / "captured" / "real-old-consumer-stall-0.8.2.2" / "kill3-50-dumps.log.gz"


def timed(path: Path, repeat: int) -> tuple[float, float, int, int]:
    """Best parse time, best analysis time, findings, dumps."""
    parse_times, analysis_times = [], []
    findings = dumps = 0
    for _ in range(repeat):
        gc.collect()
        started = time.perf_counter()
        parsed = list(read_dumps(str(path)))
        parsed_at = time.perf_counter()
        report = analyze(parsed)
        done = time.perf_counter()
        parse_times.append(parsed_at - started)
        analysis_times.append(done - parsed_at)
        findings, dumps = len(report.findings), len(parsed)
        del parsed, report
    return min(parse_times), min(analysis_times), findings, dumps


def peak(path: Path) -> int:
    gc.collect()
    tracemalloc.start()
    report = analyze(list(read_dumps(str(path))))
    _, high = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del report
    return high


# Runs the CLI as the only child of a small wrapper, whose RUSAGE_CHILDREN peak is then exactly
# the CLI's resident set, whatever else this process has started.
_MEASURE = (
    "import resource, subprocess, sys, time\n"
    "started = time.perf_counter()\n"
    "subprocess.run(sys.argv[1:], stdout=subprocess.DEVNULL, check=False)\n"
    "elapsed = time.perf_counter() - started\n"
    "print(elapsed, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024)\n"
)


def end_to_end(path: Path, repeat: int, output_format: str = "table") -> tuple[float, int]:
    """Best wall time and the peak RSS of `kafkadiag dump analyze --format FORMAT`."""
    argv = [str(Path(sys.executable).with_name("kafkadiag")), "dump", "analyze", "--format", output_format]
    # One uncounted warm-up run (page cache, CPU clock), as for the parse benchmark.
    subprocess.run([*argv, str(path)], stdout=subprocess.DEVNULL, check=False)
    best, rss = float("inf"), 0
    for _ in range(repeat):
        done = subprocess.run(
            [sys.executable, "-c", _MEASURE, *argv, str(path)], capture_output=True, text=True, check=True
        )
        elapsed, peak_rss = done.stdout.split()
        best, rss = min(best, float(elapsed)), max(rss, int(peak_rss))
    return best, rss


def report(label: str, path: Path, repeat: int) -> None:
    # Against the text read, not the gzip of it.
    size = len(gzip.decompress(path.read_bytes())) if path.suffix == ".gz" else path.stat().st_size
    parse_s, analysis_s, findings, dumps = timed(path, repeat)
    high = peak(path)
    print(f"{label}: {size / 1e6:.1f} MB, {dumps} dump(s), {findings} finding(s)")
    print(
        f"  parse {parse_s * 1000:.0f} ms + analysis {analysis_s * 1000:.0f} ms "
        f"= {(parse_s + analysis_s):.3f} s"
    )
    print(f"  peak memory (tracemalloc): {high / 1e6:.1f} MB = {high / size:.2f}x the input")
    for output_format in ("table", "json"):
        seconds, rss = end_to_end(path, repeat, output_format)
        print(
            f"  kafkadiag dump analyze --format {output_format} end to end: {seconds:.3f} s, "
            f"peak RSS {rss / 1e6:.0f} MB"
        )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--threads", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as work:
        large = Path(work) / "large-dump.txt"
        build_large_dump(large, args.threads)
        report(f"{args.threads}-thread dump", large, args.repeat)
    report("50-dump kill -3 log", LOG, args.repeat)
    print(machine.describe())


if __name__ == "__main__":
    main()
