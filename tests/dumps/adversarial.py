"""Inputs of every shape that made a parser slower than linear, at any size, for every format.

Each shape is text of about `size` characters built to hit one weakness: a pattern that is tried
from every position of a long run (quotes, spaces, digits, a name without its `@`), a line that
hard-wrap rejoining keeps joining, brackets nested deep, a dump of thousands of threads. Each
format's input is the shape around a real dump of that format (before it, where format detection
reads it; after a thread's first lines, where the parser is inside a stack), so that each parser
meets it in the state where it does the most work.

Used by tests/dumps/test_linear_time.py (1x against 4x, a bound on the ratio) and by
bench/scaling_bench.py (the figures).
"""

from __future__ import annotations

import gzip
import json
import math
import os
import time
from collections.abc import Callable
from pathlib import Path

from kafkadiag.dumps import read_dumps
from kafkadiag.errors import KafkadiagError
from kafkadiag.model import DumpFormat

REPO = Path(__file__).resolve().parents[2]

# A small real dump of each format: its first lines open the input, the rest closes it.
_REAL_CONSUMER = "fixtures/captured/real-new-consumer-coordinator-unavailable-3.9.1"
SAMPLES = {
    DumpFormat.HOTSPOT: "fixtures/captured/deadlock/jstack-l.txt",
    DumpFormat.NETBEANS: "tests/dumps/public/samurai-apple-1.5.0_13-jstack-agent.dmp",
    DumpFormat.PYSPY: "fixtures/captured/py-poll-queue-full/py-spy-dump.txt",
    DumpFormat.PYSPY_JSON: "fixtures/captured/py-poll-queue-full/py-spy-dump.json",
    DumpFormat.JCMD_TEXT: "fixtures/captured/virtual-threads/thread-dump.txt",
    DumpFormat.JCMD_JSON: "fixtures/captured/virtual-threads/thread-dump.json",
    DumpFormat.INTELLIJ: "tests/wild/dumps/metrics-getthreadinfo-jvm-stall-kafka-timeouts-blog.txt",
    DumpFormat.JAVACORE: "tests/wild/dumps/kafka-rest-97-consumer-worker-lock-order.txt",
    DumpFormat.ANDROID_ANR: "tests/dumps/public/chkbugreport-bugreport_deadlock.txt.gz",
    DumpFormat.ACTUATOR_JSON: f"{_REAL_CONSUMER}/actuator-threaddump.json",
    DumpFormat.STACK_TRACES: f"{_REAL_CONSUMER}/stacktraces.log",
    DumpFormat.JCONSOLE: "fixtures/captured/real-producer-callback-waits-reply-4.1.1/jconsole-threads.txt",
    DumpFormat.FAULTHANDLER: "fixtures/captured/pyfmt-poll-queue-full/faulthandler-sigusr1.txt",
    DumpFormat.PY_TRACEBACK: "fixtures/captured/pyfmt-poll-queue-full/print-stack.txt",
    DumpFormat.GDB_PY_BT: "fixtures/captured/pyfmt-poll-queue-full/gdb-py-bt.txt",
    DumpFormat.GEVENT: "fixtures/captured/pyfmt-gevent-poll-queue-full/gevent-run-info.txt",
    DumpFormat.ASYNCIO: "fixtures/captured/pyfmt-asyncio-poll-queue-full/asyncio-task-stacks.txt",
    DumpFormat.GURU_MEDITATION: "fixtures/captured/pyfmt-eventlet-poll-queue-full/guru-meditation-report.txt",
    DumpFormat.GOCD_SUPPORT: "tests/dumps/public/binaryfoo-jstack-gosupport.txt.gz",
}
SAMPLE_LINES = 60
# The android bugreport and GoCD's report hold their threads far in: start there.
_SAMPLE_FROM = {DumpFormat.ANDROID_ANR: "----- pid ", DumpFormat.GOCD_SUPPORT: "All thread stacktraces"}

# 1x: large enough that a linear parser's time is measured above the timer's noise, small enough
# that a quadratic one still finishes (a 64 KB quote-rich line took 25 s to detect).
BASE_SIZE = 32 * 1024
# 4x may take at most this many times as long as 1x: linear is 4, quadratic 16.
RATIO_LIMIT = 5.0
# Below this, a time is mostly the timer's and a shared machine's noise, not the parser's work (a
# quadratic 1x of 5 ms is still caught: its 4x takes 80).
NOISE_FLOOR_S = 0.010
# 1x taking longer than this is slow enough to fail on its own (and 4x is not run).
BASE_LIMIT_S = 2.0


def sample_lines(fmt: DumpFormat) -> list[str]:
    path = REPO / SAMPLES[fmt]
    raw = path.read_bytes()
    text = (gzip.decompress(raw) if path.suffix == ".gz" else raw).decode("utf-8", "replace")
    lines = text.splitlines()
    marker = _SAMPLE_FROM.get(fmt)
    if marker is not None:
        start = next(index for index, line in enumerate(lines) if line.startswith(marker))
        lines = lines[start:]
    if fmt in (DumpFormat.PYSPY_JSON, DumpFormat.JCMD_JSON, DumpFormat.ACTUATOR_JSON):
        return lines  # a JSON document is only itself whole
    return lines[:SAMPLE_LINES]


def _header(sample: list[str]) -> str:
    """The sample's first line that looks like a thread header (its longest line, else)."""
    for line in sample:
        if line.startswith(('"', "Thread ", "3XMTHREADINFO", "Name:", "---", "#")) or " t@" in line:
            return line
    return max(sample, key=len)


def _repeat(unit: str, size: int) -> str:
    return (unit * (size // len(unit) + 1))[:size]


def _wrapped(text: str, width: int = 72) -> str:
    return "\n".join(text[start : start + width] for start in range(0, len(text), width))


# Each shape: (sample lines, size) -> the adversarial text of about `size` characters.
Shape = Callable[[list[str], int], str]


def _long_header(sample: list[str], size: int) -> str:
    header = _header(sample)
    cut = header.find('"') + 1 or len(header) // 2
    return header[:cut] + _repeat("pool-1-thread-", size) + header[cut:]


SHAPES: dict[str, Shape] = {
    # One thread header of `size` characters: its name grown long.
    "long_header": _long_header,
    # Lines of 1,000 characters: the sample's own lines, padded with their own text.
    "long_lines": lambda sample, size: "\n".join(
        _repeat(line + " ", 1000) for line in _repeat_lines([s for s in sample if s.strip()], size // 1000)
    ),
    # The long header, hard-wrapped at 72 columns: every piece looks like the rest of the one before.
    "wrapped_header": lambda sample, size: _wrapped(_long_header(sample, size)),
    # A lock line whose class never closes, then its "rest" at 72 columns (HotSpot's and py-spy's
    # rejoining); a header without nid= followed by lines that each hold prio=.
    "wrapped_lines": lambda sample, size: (
        "\t- waiting to lock <0x1> (a pkg.Lock"
        + _wrapped(_repeat("Abcdefgh", size // 2))
        + '\n"t" #1 prio=5 tid=0x1\n'
        + "\n".join(["prio=5 prio=5 prio=5 prio=5 prio=5 prio=5 prio=5 prio=5 prio=5 xx"] * (size // 140))
    ),
    # Quotes: one line of `" ` and lines of quoted words (format detection's header patterns).
    "quotes": lambda sample, size: (
        _repeat('" ', size // 2) + "\n" + "\n".join([_repeat('"a" ', 1000)] * (size // 2000))
    ),
    # Brackets nested deep, each kind on a line of its own (frames, lock lines, reprs, JSON).
    "nesting": lambda sample, size: "\n".join(
        "\tat " + opening * (size // 5) for opening in ("(", "[", "{", "<", "<0x")
    ),
    # Long runs: spaces, digits, a class name without its `@hash`, `# Thread: ` over and over.
    "runs": lambda sample, size: "\n".join(
        (
            " " * (size // 5) + "x",
            "9" * (size // 5) + "x",
            "Locked Monitors: " + _repeat("java.lang.Object", size // 5),
            _repeat("# Thread: ", size // 5),
            _repeat("<div ", size // 5),
        )
    ),
    # Many threads: the sample itself, repeated (the shape every real dump has).
    "many_threads": lambda sample, size: "\n".join(_repeat_lines(sample, max(1, size // 60))),
}


def _repeat_lines(lines: list[str], count: int) -> list[str]:
    lines = lines or ["x"]
    return [lines[index % len(lines)] for index in range(count)]


def adversarial_text(fmt: DumpFormat, shape: str, size: int) -> str:
    """The shape around a real dump of `fmt`: before it (format detection reads it first) and
    after the sample's first lines (the parser is inside a thread)."""
    sample = sample_lines(fmt)
    body = SHAPES[shape](sample, size)
    if fmt in (DumpFormat.PYSPY_JSON, DumpFormat.JCMD_JSON, DumpFormat.ACTUATOR_JSON):
        return _json_shape(sample, body)
    split = min(len(sample), 8)
    return "\n".join([body, *sample[:split], body, *sample[split:]]) + "\n"


def _json_shape(sample: list[str], body: str) -> str:
    """The shape as a JSON string value inside the document, where the reader meets it whole."""
    document = "\n".join(sample)
    escaped = body.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\t", "\\t")
    opening = document.index("{") + 1
    return document[:opening] + f'"kafkadiag-filler": "{escaped}",' + document[opening:]


# How the input reaches the parser when its format is detected: as written, or through one of the
# repairs read_dumps makes first (each reads every line of the shape too).
WRAPPERS: dict[str, Callable[[str], str]] = {
    "plain": lambda text: text,
    # A page's source saved from the browser: the dump in a <pre> block, lines ending in <br>.
    "html_page": lambda text: "<html><body><pre>\n" + text.replace("\n", "<br>\n") + "</pre></body></html>\n",
    # Docker's json-file: every line a record, its text in "log".
    "json_log_records": lambda text: "".join(
        json.dumps({"log": line + "\n", "stream": "stdout"}) + "\n" for line in text.split("\n")
    ),
    # Quoted in an e-mail reply.
    "mail_quoted": lambda text: "".join("> " + line + "\n" for line in text.split("\n")),
    # Behind a container runtime's prefix on every line.
    "log_prefixed": lambda text: "".join(
        f"2024-05-01T10:11:{index % 60:02d}.123456789Z stdout F {line}\n"
        for index, line in enumerate(text.split("\n"))
    ),
}


def wrapped_input(wrapper: str, shape: str, size: int) -> str:
    """A HotSpot dump with the shape around it, as one of WRAPPERS hands it over."""
    return WRAPPERS[wrapper](adversarial_text(DumpFormat.HOTSPOT, shape, size))


# -- the lock graph ----------------------------------------------------------------------------

# 1x of the lock shapes, in threads: a blocking chain of 12,000 took 17 s before chains were
# measured once, 2,000 already takes a second the old way.
BASE_THREADS = 2000


def _blocked_thread(index: int, waits: int | None, holds: tuple[int, ...], parked: bool = False) -> str:
    state = "WAITING (parking)" if parked else "BLOCKED (on object monitor)"
    lines = [
        f'"worker-{index}" #{index + 10} prio=5 os_prio=0 tid=0x{index + 0x1000:x} nid=0x{index + 0x100:x} '
        "waiting for monitor entry [0x00007f0000000000]",
        f"   java.lang.Thread.State: {state}",
        "\tat com.example.Work.step(Work.java:42)",
    ]
    if waits is not None and parked:
        lines.append(
            f"\t- parking to wait for  <0x{waits:x}> (a java.util.concurrent.locks.ReentrantLock$NonfairSync)"
        )
    elif waits is not None:
        lines.append(f"\t- waiting to lock <0x{waits:x}> (a java.lang.Object)")
    lines.append("\tat com.example.Work.run(Work.java:30)")
    lines.extend(f"\t- locked <0x{lock:x}> (a java.lang.Object)" for lock in holds if not parked)
    lines.append("\tat java.lang.Thread.run(Thread.java:750)")
    lines.append("")
    if parked:
        lines += ["   Locked ownable synchronizers:"]
        lines += [
            f"\t- <0x{lock:x}> (a java.util.concurrent.locks.ReentrantLock$NonfairSync)" for lock in holds
        ]
        lines += ["\t- None"] if not holds else []
        lines.append("")
    return "\n".join(lines) + "\n"


# Each: thread count -> the threads' text. Lock `i + 1` is worker-i's own.
LOCK_SHAPES: dict[str, Callable[[int], str]] = {
    # worker-0 waits for worker-1's lock, worker-1 for worker-2's ... the last waits for nobody.
    "chain": lambda count: "".join(
        _blocked_thread(i, i + 2 if i < count - 1 else None, (i + 1,)) for i in range(count)
    ),
    # The same, closed: every worker waits for the next one's lock, the last for the first's.
    "cycle": lambda count: "".join(_blocked_thread(i, (i + 1) % count + 1, (i + 1,)) for i in range(count)),
    # Pairs deadlocked on each other, count / 2 of them.
    "many_cycles": lambda count: "".join(_blocked_thread(i, (i ^ 1) + 1, (i + 1,)) for i in range(count)),
    # Everybody behind one lock held by worker-0.
    "star": lambda count: "".join(
        _blocked_thread(i, 1 if i else None, (1,) if i == 0 else ()) for i in range(count)
    ),
    # A binary tree: worker-i waits for the lock of worker-(i-1)/2.
    "tree": lambda count: "".join(
        _blocked_thread(i, (i - 1) // 2 + 1 if i else None, (i + 1,)) for i in range(count)
    ),
    # A chain over java.util.concurrent locks (parked, ownable synchronizers held).
    "parked_chain": lambda count: "".join(
        _blocked_thread(i, i + 2 if i < count - 1 else None, (i + 1,), parked=True) for i in range(count)
    ),
}


def lock_dump_text(shape: str, threads: int) -> str:
    return (
        "2024-01-01 00:00:00\nFull thread dump OpenJDK 64-Bit Server VM (17.0.15+6 mixed mode, sharing):\n\n"
        + LOCK_SHAPES[shape](threads)
        + "JNI global references: 12\n"
    )


def parse_time(path: Path, fmt: DumpFormat | None) -> float:
    """Seconds to read every dump of `path` (an input holding none is read to its end too)."""
    started = time.process_time()
    try:
        for _ in read_dumps(str(path), fmt):
            pass
    except KafkadiagError:
        pass
    return time.process_time() - started


class Scaling:
    """Time at 1x and 4x, best of a few runs (a shared machine's other tenants only ever add)."""

    def __init__(self, small: float, large: float) -> None:
        self.small = small
        self.large = large

    @property
    def ratio(self) -> float:
        return self.large / max(self.small, NOISE_FLOOR_S)


def measure(run: Callable[[int], float], runs: int = 9) -> Scaling:
    """`run(k)` times the work on input k (1: 1x, 4: 4x). The best of up to `runs` rounds; stops
    early once the ratio is within RATIO_LIMIT (two rounds, on a quiet machine), and does not run
    4x when 1x alone is too slow. Up to nine rounds: on a shared machine, a burst of other work
    fails a linear parser only if it lasts through all of them."""
    run(1)  # warm-up: imports, compiled patterns, the file cache
    small = large = math.inf
    for round_number in range(runs):
        small = min(small, run(1))
        if small > BASE_LIMIT_S:
            return Scaling(small, math.inf)
        large = min(large, run(4))
        if round_number >= 1 and Scaling(small, large).ratio <= RATIO_LIMIT:
            break
    return Scaling(small, large)


def write_inputs(directory: Path, fmt: DumpFormat, shape: str) -> dict[int, Path]:
    """The 1x and 4x inputs of a shape, written once."""
    paths = {}
    for factor in (1, 4):
        path = directory / f"{fmt.value}-{shape}-{factor}x.txt"
        if not path.exists():
            path.write_text(adversarial_text(fmt, shape, BASE_SIZE * factor), encoding="utf-8")
        paths[factor] = path
    return paths


def size_of(paths: dict[int, Path]) -> tuple[int, int]:
    return os.path.getsize(paths[1]), os.path.getsize(paths[4])
