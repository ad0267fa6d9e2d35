"""Linear time as a tested property: every parser, and format detection, on inputs of every shape.

Each case parses 1x and 4x of one adversarial shape (tests/dumps/adversarial.py) around a real
dump of one format and fails when 4x takes more than RATIO_LIMIT (5) times as long as 1x: a
linear parser takes about 4 times as long, a quadratic one 16. Times are this process's CPU time
(time.process_time), the best of a few runs: the work of other processes on a busy shared machine
is not counted, where wall time counted every moment the parser waited for a core (at a load
average of 13 on two cores, nine linear cases measured 5 to 10 times).

The named cases below the matrix are the inputs issue 32 reported, each at the size that showed
it; `bench/scaling_bench.py` prints the matrix's figures.
"""

from __future__ import annotations

import gzip
import re
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from kafkadiag.dumps import read_dumps
from kafkadiag.dumps.detect import PYTHON_HEADER_ANYWHERE, detect_format
from kafkadiag.dumps.gocdsupport import _held_locks
from kafkadiag.dumps.htmltext import PageText
from kafkadiag.errors import KafkadiagError
from kafkadiag.model import DumpFormat

from .adversarial import (
    RATIO_LIMIT,
    REPO,
    SHAPES,
    WRAPPERS,
    Scaling,
    measure,
    parse_time,
    size_of,
    wrapped_input,
    write_inputs,
)

PUBLIC = REPO / "tests" / "dumps" / "public"


@pytest.fixture(scope="module")
def inputs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("adversarial")


def _explained(scaling: Scaling, what: str) -> str:
    return (
        f"{what}: 1x took {scaling.small * 1000:.1f} ms, 4x {scaling.large * 1000:.1f} ms "
        f"({scaling.ratio:.1f} times; linear is about 4, the bound {RATIO_LIMIT})"
    )


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("fmt", list(DumpFormat), ids=lambda fmt: fmt.value)
def test_every_parser_takes_linear_time_on_every_shape(inputs: Path, fmt: DumpFormat, shape: str) -> None:
    # GIVEN 1x and 4x of the shape around a real dump of the format
    paths = write_inputs(inputs, fmt, shape)
    # WHEN each is parsed as that format
    scaling = measure(lambda factor: parse_time(paths[factor], fmt))
    # THEN 4x takes about 4 times as long, not 16
    sizes = size_of(paths)
    assert scaling.ratio <= RATIO_LIMIT, _explained(
        scaling, f"{fmt.value}, {shape} ({sizes[0]:,} bytes at 1x)"
    )


@pytest.mark.parametrize("shape", list(SHAPES))
@pytest.mark.parametrize("wrapper", list(WRAPPERS))
def test_format_detection_and_its_repairs_take_linear_time(inputs: Path, wrapper: str, shape: str) -> None:
    # GIVEN 1x and 4x of the shape around a HotSpot dump, as a page, log records, a mail reply or a
    # prefixed log hands it over
    paths = {}
    for factor in (1, 4):
        paths[factor] = inputs / f"auto-{wrapper}-{shape}-{factor}x.txt"
        paths[factor].write_text(wrapped_input(wrapper, shape, 32 * 1024 * factor), encoding="utf-8")
    # WHEN each is read with its format detected
    scaling = measure(lambda factor: parse_time(paths[factor], None))
    # THEN 4x takes about 4 times as long
    assert scaling.ratio <= RATIO_LIMIT, _explained(scaling, f"detected, {wrapper}, {shape}")


# -- the inputs issue 32 reported ------------------------------------------------------------------


def _scaling_of_text(tmp_path: Path, build: Callable[[int], str], fmt: DumpFormat | None) -> Scaling:
    """1x and 4x of `build(size)` parsed as `fmt` (None: detected)."""
    paths = {}
    for factor in (1, 4):
        paths[factor] = tmp_path / f"input-{factor}x.txt"
        paths[factor].write_text(build(factor), encoding="utf-8")
    return measure(lambda factor: parse_time(paths[factor], fmt))


def _wrapped_at_72(text: str) -> str:
    return "\n".join(text[start : start + 72] for start in range(0, len(text), 72))


def test_a_hard_wrapped_header_of_a_megabyte_is_not_rejoined_into_one_line(tmp_path: Path) -> None:
    # GIVEN a thread header with a 256 KB (1x) or 1 MB (4x) name, hard-wrapped at 72 columns
    # (a 1 MB one took 19 s: every piece was joined to all the ones before)
    def build(factor: int) -> str:
        header = '"' + "pool-1-thread-" * (256 * 1024 * factor // 14) + '" #1 prio=5 tid=0x1 nid=0x2 runnable'
        return "Full thread dump OpenJDK:\n\n" + _wrapped_at_72(header) + "\n\tat a.B.c(B.java:1)\n"

    # WHEN parsed THEN the time grows linearly
    scaling = _scaling_of_text(tmp_path, build, DumpFormat.HOTSPOT)
    assert scaling.ratio <= RATIO_LIMIT, _explained(scaling, "a wrapped header")
    assert scaling.large < 5, _explained(scaling, "a wrapped header")


def test_a_hard_wrapped_lock_line_that_never_closes_is_not_rejoined_into_one_line(tmp_path: Path) -> None:
    # GIVEN a lock line whose class name never closes, then 256 KB (1x) or 1 MB (4x) of its
    # "rest" at 72 columns (took 32 s)
    def build(factor: int) -> str:
        return (
            'Full thread dump OpenJDK:\n\n"t" #1 prio=5 tid=0x1 nid=0x2 waiting for monitor entry [0x1]\n'
            "   java.lang.Thread.State: BLOCKED (on object monitor)\n\tat a.B.c(B.java:1)\n"
            "\t- waiting to lock <0x1> (a pkg." + _wrapped_at_72("Abcdefgh" * (32 * 1024 * factor)) + "\n"
        )

    scaling = _scaling_of_text(tmp_path, build, DumpFormat.HOTSPOT)
    assert scaling.ratio <= RATIO_LIMIT, _explained(scaling, "a wrapped lock line")
    assert scaling.large < 5, _explained(scaling, "a wrapped lock line")


def test_1000_character_header_lines_without_nid_are_not_joined_to_each_other(tmp_path: Path) -> None:
    # GIVEN 1 MB (1x) or 4 MB (4x) of 1,000-character headers without nid=, each of which looked
    # like the wrapped rest of the one before (4 MB took 50 s)
    def build(factor: int) -> str:
        line = '"' + "x" * 1000 + '" prio=5 tid=0x1\n'
        return "Full thread dump OpenJDK:\n\n" + line * (1024 * factor)

    scaling = _scaling_of_text(tmp_path, build, DumpFormat.HOTSPOT)
    assert scaling.ratio <= RATIO_LIMIT, _explained(scaling, "unfinished header lines")
    assert scaling.large < 10, _explained(scaling, "unfinished header lines")


def test_a_quote_rich_line_is_detected_in_linear_time() -> None:
    # GIVEN a line of 64 KB (1x) or 256 KB (4x) of `" ` (64 KB took 25 s to detect; 1 MB did not
    # finish in 120 s)
    lines = {factor: ['" ' * (32 * 1024 * factor)] for factor in (1, 4)}

    def detect(factor: int) -> float:
        started = time.process_time()
        detect_format(lines[factor])
        return time.process_time() - started

    scaling = measure(detect)
    assert scaling.ratio <= RATIO_LIMIT, _explained(scaling, "detection of a quote-rich line")


def test_a_log_prefix_is_looked_for_in_linear_time() -> None:
    # GIVEN lines that repeat the start of a Python thread header and never finish it
    units = ("# Thread: ", "Thread 1 (idle", "Thread 0x1 [", "Traceback for thread 1 (")
    texts = {factor: [unit * (64 * 1024 * factor // len(unit)) for unit in units] for factor in (1, 4)}

    def search(factor: int) -> float:
        started = time.process_time()
        for text in texts[factor]:
            PYTHON_HEADER_ANYWHERE.search(text)
        return time.process_time() - started

    scaling = measure(search)
    assert scaling.ratio <= RATIO_LIMIT, _explained(scaling, "a header searched anywhere in a line")


def test_gocds_monitor_list_is_read_in_linear_time() -> None:
    # GIVEN a monitor list of 64 KB (1x) or 256 KB (4x) of class names and no "@hash"
    texts = {factor: "java.lang.Object" * (4 * 1024 * factor) for factor in (1, 4)}

    def read(factor: int) -> float:
        started = time.process_time()
        list(_held_locks(texts[factor]))
        return time.process_time() - started

    scaling = measure(read)
    assert scaling.ratio <= RATIO_LIMIT, _explained(scaling, "GoCD's monitor list")


def test_gocds_monitor_list_is_read_as_before() -> None:
    # GIVEN every line of GoCD's real support report
    text = gzip.decompress((PUBLIC / "binaryfoo-jstack-gosupport.txt.gz").read_bytes()).decode("utf-8")
    finditer = re.compile(r"(?P<class>[\w.$\[\];]+)@(?P<hash>[0-9a-f]+)(?: at (?P<frame>[^()]*\([^()]*\)))?")
    # THEN the linear reader finds exactly what the pattern's finditer found (a frame held no "@")
    for line in text.splitlines():
        assert [held.groupdict() for held in _held_locks(line)] == [
            held.groupdict() for held in finditer.finditer(line)
        ], line


def test_html_line_boundaries_are_found_in_linear_time() -> None:
    # GIVEN page lines of 64 KB (1x) or 256 KB (4x): spaces before a tag, unclosed tags, unclosed
    # comments
    units = (" ", "<div ", "<!--", "<br ", "<span ")
    texts = {
        factor: ["x" + unit * (64 * 1024 * factor // len(unit)) + "<p>" for unit in units]
        for factor in (1, 4)
    }

    def show(factor: int) -> float:
        started = time.process_time()
        PageText()(texts[factor])
        return time.process_time() - started

    scaling = measure(show)
    assert scaling.ratio <= RATIO_LIMIT, _explained(scaling, "an HTML page's lines")


def test_a_dump_read_through_read_dumps_is_total_on_every_shape(inputs: Path) -> None:
    # GIVEN every shape around a HotSpot dump WHEN read THEN it parses or is a clear input error
    for shape in SHAPES:
        paths = write_inputs(inputs, DumpFormat.HOTSPOT, shape)
        try:
            dumps = list(read_dumps(str(paths[1])))
        except KafkadiagError:
            continue
        assert dumps, shape
