"""Scaling benchmark: time at 1x and 4x of adversarial inputs, per parser and shape, and for the
lock graph with the rules over it.

    python bench/scaling_bench.py [--size 32768] [--threads 1000] [--runs 5]

The inputs are those of tests/dumps/test_linear_time.py and tests/test_lockgraph_linear_time.py
(built by tests/dumps/adversarial.py): each shape around a real dump of each format, parsed as that
format; the same shapes around a HotSpot dump through each repair format detection makes (an HTML
page, JSON log records, a mail quote, a log prefix); dumps of blocked threads in chains, cycles,
stars and trees, analysed whole. Times are the best of `--runs` (time.perf_counter); the ratio is
4x over 1x, the tests' bound is 5 (linear is about 4, quadratic 16). Times under 10 ms are mostly
the timer's and the machine's: their ratio is taken over 10 ms, as the tests take it.
"""

from __future__ import annotations

import argparse
import functools
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import machine  # noqa: E402

from kafkadiag.dumps import read_dumps  # noqa: E402
from kafkadiag.model import DumpFormat, ThreadDump  # noqa: E402
from kafkadiag.rules.engine import analyze  # noqa: E402
from tests.dumps import adversarial  # noqa: E402


def _row(label: str, scaling: adversarial.Scaling) -> str:
    flag = "" if scaling.ratio <= adversarial.RATIO_LIMIT else "  OVER THE BOUND"
    return f"  {label:<44} {scaling.small * 1000:9.1f} {scaling.large * 1000:9.1f} {scaling.ratio:6.1f}{flag}"


def _header(title: str) -> None:
    print(f"\n{title}")
    print(f"  {'':<44} {'1x ms':>9} {'4x ms':>9} {'ratio':>6}")


def _parse(paths: dict[int, Path], fmt: DumpFormat | None, factor: int) -> float:
    return adversarial.parse_time(paths[factor], fmt)


def _analysis(dumps: dict[int, list[ThreadDump]], factor: int) -> float:
    started = time.perf_counter()
    analyze(dumps[factor])
    return time.perf_counter() - started


def parsers(directory: Path, runs: int) -> int:
    _header(f"Every parser, forced (1x = {adversarial.BASE_SIZE:,} characters of the shape, twice)")
    over = 0
    for fmt in DumpFormat:
        for shape in adversarial.SHAPES:
            paths = adversarial.write_inputs(directory, fmt, shape)
            scaling = adversarial.measure(functools.partial(_parse, paths, fmt), runs)
            over += scaling.ratio > adversarial.RATIO_LIMIT
            print(_row(f"{fmt.value} / {shape}", scaling), flush=True)
    return over


def detection(directory: Path, runs: int) -> int:
    _header("Format detection and its repairs (a HotSpot dump, the shape around it)")
    over = 0
    for wrapper in adversarial.WRAPPERS:
        for shape in adversarial.SHAPES:
            paths = {}
            for factor in (1, 4):
                paths[factor] = directory / f"auto-{wrapper}-{shape}-{factor}x.txt"
                text = adversarial.wrapped_input(wrapper, shape, adversarial.BASE_SIZE * factor)
                paths[factor].write_text(text, encoding="utf-8")
            scaling = adversarial.measure(functools.partial(_parse, paths, None), runs)
            over += scaling.ratio > adversarial.RATIO_LIMIT
            print(_row(f"{wrapper} / {shape}", scaling), flush=True)
    return over


def lock_graph(directory: Path, threads: int, runs: int) -> int:
    _header(f"Lock graph and every rule (1x = {threads:,} blocked threads)")
    over = 0
    for shape in adversarial.LOCK_SHAPES:
        dumps = {}
        for factor in (1, 4):
            path = directory / f"locks-{shape}-{factor}x.txt"
            path.write_text(adversarial.lock_dump_text(shape, threads * factor), encoding="utf-8")
            dumps[factor] = list(read_dumps(str(path)))
        scaling = adversarial.measure(functools.partial(_analysis, dumps), runs)
        over += scaling.ratio > adversarial.RATIO_LIMIT
        print(_row(shape, scaling), flush=True)
    return over


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--size", type=int, default=adversarial.BASE_SIZE, help="1x, in characters")
    parser.add_argument("--threads", type=int, default=1000, help="1x of the lock shapes, in threads")
    parser.add_argument("--runs", type=int, default=5, help="rounds of 1x and 4x; the best counts")
    arguments = parser.parse_args()
    adversarial.BASE_SIZE = arguments.size
    print(f"Scaling benchmark {machine.describe()}")
    with tempfile.TemporaryDirectory(prefix="kafkadiag-scaling-") as work:
        directory = Path(work)
        over = parsers(directory, arguments.runs)
        over += detection(directory, arguments.runs)
        over += lock_graph(directory, arguments.threads, arguments.runs)
    print(f"\n{over} case(s) over the bound of {adversarial.RATIO_LIMIT}x")
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
