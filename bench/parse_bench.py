"""Parse benchmark: throughput, peak memory, end-to-end CLI time, --help time.

    python bench/parse_bench.py [--threads 10000] [--repeat 5]

The large dump is built from real thread blocks: every thread of the other projects' dumps in
tests/corpus (JDK 6 to 25, jstack and jcmd, from production systems and test suites),
repeated until the dump holds the asked number of threads: about 12 MB for 10,000 threads, the
size the throughput target is stated for. A share of the blocks has its `java.lang.Thread.State:`
line dropped, which is exactly how a JDK 5 dump differs.

A second figure adds the blocks of fixtures/captured: each reproducer is a JVM of about twenty
threads, mostly idle JDK service threads with short stacks, captured three ways (jstack,
jstack -l, jcmd). They would make a third of the blocks and shrink the dump to about 9 MB, and
the dump would change with every new reproducer; they are measured apart, for the per-thread cost
of small stacks. The many-dumps input is a real kill -3 log from fixtures/.

`dump parse` end to end is timed for the table and for `--format json` (best of `--repeat` after a
warm-up), in wall time and in CPU time, and their ratio printed against its target. The large
dump repeats the corpus blocks, so many of its stacks recur, as the threads of a pool's do in a
real dump; the JSON writer writes a recurring stack's text once. Its headers recur too (about
2,200 distinct), which a real dump's never do: every thread of a JVM has its own name, ids and
pointers. So the comparison is also made on the same dump with every header made distinct
(unique_header), where the JSON writer has to read and write 10,000 headers of their own.

The large dump's throughput is measured in three rounds of `--repeat` runs: at the start, after
the end-to-end runs and at the end. Parsing is bound by memory as much as by the interpreter, and
on a shared machine other tenants can slow memory for seconds at a time (the reference loop,
which stays in the cache, does not see it). The best run gives what the parser does; the median
over the rounds shows how much the machine varied.
"""

from __future__ import annotations

import argparse
import gc
import gzip
import os
import re
import resource
import statistics
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

from kafkadiag.dumps import read_dumps  # noqa: E402

CORPUS = REPO / "tests" / "corpus"
CAPTURED = REPO / "fixtures" / "captured"
# The JSON document of a dump is about three times the dump's size; writing it may cost at most
# half again the table's end-to-end time.
JSON_TARGET_RATIO = 1.5


def real_thread_blocks(with_reproducers: bool = False) -> list[str]:
    """Every thread block (header to the line before the next thread) of the real dumps."""
    sources = sorted(CORPUS.glob("*/*.txt")) + sorted(CORPUS.glob("dumpling/*/*.log"))
    if with_reproducers:
        sources += sorted(CAPTURED.glob("*/jstack*.txt")) + sorted(CAPTURED.glob("*/jcmd*.txt"))
    blocks: list[str] = []
    for source in sources:
        if source.name in ("thread-dump-jstack.txt",) or "jrockit" in source.name:
            continue  # stored line-reversed / not HotSpot
        try:
            dumps = list(read_dumps(str(source)))
        except Exception:  # noqa: BLE001 - a corpus file without a dump simply gives no blocks
            continue
        lines = source.read_text(encoding="utf-8", errors="replace").replace("\r\n", "\n").split("\n")
        for dump in dumps:
            threads = dump.threads
            for index, thread in enumerate(threads):
                if thread.virtual:
                    continue
                end = threads[index + 1].line_no - 1 if index + 1 < len(threads) else thread.line_no + 1
                block = lines[thread.line_no - 1 : end]
                while block and not block[-1].strip():
                    block.pop()
                if len(block) > 1 and all(
                    not text.startswith(("JNI", "Found", "Java stack")) for text in block
                ):
                    blocks.append("\n".join(block))
    return blocks


# The parts of a HotSpot header that differ between any two threads of one JVM: the name (pools
# number their threads), the Java id (`#12`), the OS id in brackets (JDK 19 and later), the
# native pointer and the native id. Names run to the last quote before the Java id or the flags.
_HEADER = re.compile(r'^"(?P<name>.*)"(?P<rest>(?: #\d+| daemon| prio=| tid=| os_prio=| Id=).*)$')
_JAVA_ID = re.compile(r" #\d+")
_OS_ID = re.compile(r" \[\d+\]")
_TID = re.compile(r"tid=(?:0x[0-9a-fA-F]+|\d+)")
_NID = re.compile(r"nid=(?:0x[0-9a-fA-F]+|\d+)")


def unique_header(block: str, index: int) -> str:
    """The block with its thread made distinct, as every thread of a real JVM's dump is: name,
    Java id, OS id, thread pointer and native id. Blocks whose header is not HotSpot's are kept."""
    header, _, stack = block.partition("\n")
    match = _HEADER.match(header)
    if match is None:
        return block
    rest = _JAVA_ID.sub(f" #{index + 1}", match["rest"], count=1)
    rest = _OS_ID.sub(f" [{index + 20_000}]", rest, count=1)
    rest = _TID.sub(f"tid=0x{0x7F3A_0000_0000 + index * 0x1800:016x}", rest, count=1)
    rest = _NID.sub(f"nid=0x{index + 20_000:x}", rest, count=1)
    return f'"{match["name"]}-{index}"{rest}\n{stack}'


def build_large_dump(
    path: Path, thread_count: int, with_reproducers: bool = False, unique: bool = False
) -> None:
    """The corpus blocks repeated to `thread_count` threads; with `unique`, each thread's header
    is made distinct (unique_header), so only the stacks recur."""
    blocks = real_thread_blocks(with_reproducers)
    with path.open("w", encoding="utf-8") as out:
        out.write(
            "2026-11-22 08:00:00\n"
            "Full thread dump OpenJDK 64-Bit Server VM (25+36-LTS mixed mode, sharing):\n\n"
        )
        for index in range(thread_count):
            block = blocks[index % len(blocks)]
            if index % 20 == 7:  # JDK 5 layout: no state line
                block = "\n".join(text for text in block.split("\n") if "java.lang.Thread.State:" not in text)
            if unique:
                block = unique_header(block, index)
            out.write(block + "\n\n")
        out.write("JNI global refs: 17, weak refs: 0\n")


def in_process(path: Path, repeat: int) -> tuple[list[float], int, int]:
    """Parse times (s) of `repeat` runs, threads parsed, dumps parsed."""
    times = []
    threads = dumps = 0
    for _ in range(repeat):
        gc.collect()
        started = time.perf_counter()
        parsed = list(read_dumps(str(path)))
        times.append(time.perf_counter() - started)
        threads = sum(len(d.threads) for d in parsed)
        dumps = len(parsed)
        del parsed
    return times, threads, dumps


def throughput(size: int, threads: int, times: list[float]) -> str:
    best = min(times)
    return f"{best * 1000:.0f} ms = {size / 1e6 / best:.1f} MB/s, {threads / best:,.0f} threads/s"


def peak_memory(path: Path) -> int:
    gc.collect()
    tracemalloc.start()
    parsed = list(read_dumps(str(path)))
    _, peak = tracemalloc.get_traced_memory()
    tracemalloc.stop()
    del parsed
    return peak


def wall(command: list[str], repeat: int) -> float:
    """Best wall time of `repeat` runs, after one uncounted warm-up run (page cache, CPU clock)."""
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    times = []
    for _ in range(repeat):
        started = time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        times.append(time.perf_counter() - started)
    return min(times)


def wall_and_cpu(command: list[str], repeat: int) -> tuple[float, float]:
    """Best wall time and best CPU time (user + system) of `repeat` runs, after a warm-up run. On
    a shared machine the wall time includes waiting for a core; the CPU time does not."""
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
    walls, cpus = [], []
    for _ in range(repeat):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)
        walls.append(time.perf_counter() - started)
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime)
    return min(walls), min(cpus)


def json_against_table(executable: str, path: Path, repeat: int) -> str:
    """`dump parse` of `path` end to end, as a table and as JSON: wall and CPU time, and ratios."""
    table, table_cpu = wall_and_cpu([executable, "dump", "parse", "-o", os.devnull, str(path)], repeat)
    as_json, json_cpu = wall_and_cpu(
        [executable, "dump", "parse", "--format", "json", "-o", os.devnull, str(path)], repeat
    )
    return (
        f"  kafkadiag dump parse end to end, wall: {table:.3f} s (table), {as_json:.3f} s (json) = "
        f"{as_json / table:.2f}x the table's (target: at most {JSON_TARGET_RATIO}x)\n"
        f"  kafkadiag dump parse end to end, CPU: {table_cpu:.3f} s (table), {json_cpu:.3f} s (json) "
        f"= {json_cpu / table_cpu:.2f}x"
    )


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--threads", type=int, default=10_000)
    parser.add_argument("--repeat", type=int, default=5)
    args = parser.parse_args()
    executable = str(Path(sys.executable).with_name("kafkadiag"))
    with tempfile.TemporaryDirectory() as work:
        large = Path(work) / "large-dump.txt"
        build_large_dump(large, args.threads)
        size = large.stat().st_size
        rounds, threads, _ = in_process(large, args.repeat)
        peak = peak_memory(large)
        json_lines = json_against_table(executable, large, args.repeat)
        rounds += in_process(large, args.repeat)[0]
        unique = Path(work) / "unique-headers.txt"
        build_large_dump(unique, args.threads, unique=True)
        unique_line = (
            f"large dump, every thread's header its own (name, ids, as in a real JVM's dump): "
            f"{unique.stat().st_size / 1e6:.1f} MB\n{json_against_table(executable, unique, args.repeat)}"
        )

        mixed = Path(work) / "with-reproducers.txt"
        build_large_dump(mixed, args.threads, with_reproducers=True)
        mixed_size = mixed.stat().st_size
        mixed_times, mixed_threads, _ = in_process(mixed, args.repeat)

        log_source = next(iter(sorted(CAPTURED.glob("*/kill3-50-dumps.log*"))), None)
        log_line = (
            "real kill -3 log: fixtures/captured/*/kill3-50-dumps.log* not found (run fixtures/capture.py)"
        )
        if log_source is not None:
            log = Path(work) / "kill3.log"
            data = log_source.read_bytes()
            log.write_bytes(gzip.decompress(data) if log_source.suffix == ".gz" else data)
            log_size = log.stat().st_size
            log_times, log_threads, dumps = in_process(log, args.repeat)
            log_peak = peak_memory(log)
            log_line = (
                f"real kill -3 log ({log_source.relative_to(REPO)}): {log_size / 1e6:.1f} MB, "
                f"{dumps} dumps, {log_threads} threads\n"
                f"  parse in-process: {throughput(log_size, log_threads, log_times)}\n"
                f"  peak memory (tracemalloc, all dumps kept): {log_peak / 1e6:.1f} MB"
            )
        rounds += in_process(large, args.repeat)[0]

        print(f"large dump (corpus thread blocks): {size / 1e6:.1f} MB, {threads} threads")
        print(
            f"  parse in-process, best of {len(rounds)} runs in 3 rounds: "
            f"{throughput(size, threads, rounds)}; median {size / 1e6 / statistics.median(rounds):.1f} MB/s"
        )
        print(f"  peak memory (tracemalloc): {peak / 1e6:.1f} MB = {peak / size:.2f}x the input")
        print(json_lines)
        print(unique_line)
        print(f"large dump with the reproducers' blocks: {mixed_size / 1e6:.1f} MB, {mixed_threads} threads")
        print(f"  parse in-process: {throughput(mixed_size, mixed_threads, mixed_times)}")
        print(log_line)
    help_times = [wall([executable, "--help"], 1) for _ in range(args.repeat)]
    print(f"kafkadiag --help: {min(help_times):.3f} s (best), {statistics.median(help_times):.3f} s (median)")
    print(machine.describe())


if __name__ == "__main__":
    main()
