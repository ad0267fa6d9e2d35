"""KD503 on CPU figures printed with the stacks: busy-thread scripts and Arthas' sampling.

The inputs are laid out from a real capture: the spinning JVM of fixtures/captured/hot-thread
(its `top -H` table and its `jstack -l`, taken one after the other). A busy-thread script prints,
for each of the busiest threads by `ps`/`top`, one line with the figure and then the thread's
block of the dump, found by its nid; the tests do the same with the captured figures and blocks.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from kafkadiag.dumps import read_dumps
from kafkadiag.dumps.threadcpu import ThreadCpuReader, rows_with_threads
from kafkadiag.rules.base import Finding, Severity
from kafkadiag.rules.engine import analyze

REPO = Path(__file__).resolve().parents[2]
# `top -H -b -n 2` and then `jstack -l` of the same spinning JVM, one right after the other.
CAPTURE = (REPO / "fixtures" / "captured" / "hot-thread" / "top-H-then-jstack-l.txt").read_text()
TOP_TEXT, _, DUMP_TEXT = CAPTURE.partition("\n$ jstack -l ")
PID = int(re.search(r"^\$ top -H .* -p (\d+)", TOP_TEXT, re.M)[1])  # type: ignore[index]
ARTHAS_DOC = REPO / "tests" / "dumps" / "public" / "arthas-thread-command-doc.md"
HOT = "orders-handler-1"


def top_rows() -> list[tuple[int, float]]:
    """(thread id, %CPU) of the last frame of the captured top -H, busiest first."""
    rows = []
    for line in TOP_TEXT.split("\ntop - ")[-1].splitlines():
        cells = line.split()
        if len(cells) >= 12 and cells[0].isdigit() and re.fullmatch(r"[\d.]+", cells[8]):
            rows.append((int(cells[0]), float(cells[8])))
    return sorted(rows, key=lambda row: -row[1])


def thread_block(tid: int) -> str | None:
    """What `sed "/nid=0x.. /,/^$/p"` prints: the thread's header to the blank line after it."""
    lines = DUMP_TEXT.split("\n")
    for index, line in enumerate(lines):
        if f"nid=0x{tid:x} " in line:
            end = lines.index("", index)
            return "\n".join(lines[index : end + 1])
    return None


def busy_output(title: str) -> str:
    """The captured busiest threads as a busy-thread script lays them out, `title` per thread."""
    out = []
    for index, (tid, cpu) in enumerate(top_rows()[:5], start=1):
        block = thread_block(tid)
        if block is not None:  # the process's first thread runs no Java code: no block
            out.append(title.format(index=index, cpu=cpu, tid=tid, pid=PID) + "\n" + block)
    return "\n".join(out)


def hot_figure() -> float:
    """The spinning handler's %CPU by the captured top -H."""
    return next(cpu for tid, cpu in top_rows() if (thread_block(tid) or "").startswith(f'"{HOT}"'))


def analysed(tmp_path: Path, text: str) -> list[Finding]:
    path = tmp_path / "busy.txt"
    path.write_text(text, encoding="utf-8")
    return analyze(list(read_dumps(str(path)))).findings


@pytest.mark.parametrize(
    "title",
    [
        "[{index}] Busy({cpu}%) thread({tid}/0x{tid:x}) stack of java process({pid}) under user(root):",
        "The stack of busy({cpu}%) thread({tid}/0x{tid:x}) of java process({pid}) of user(root):",
    ],
    ids=["show-busy-java-threads", "show-busy-java-threads-older"],
)
def test_show_busy_java_threads_names_the_spinning_thread(tmp_path: Path, title: str) -> None:
    text = busy_output(title)
    assert text.count("Busy(") + text.count("busy(") >= 3, text[:500]
    findings = [f for f in analysed(tmp_path, text) if f.rule == "KD503"]
    hot = [f for f in findings if f.threads == (HOT,)]
    assert hot and hot[0].severity is Severity.WARNING, findings
    assert f"{hot_figure():g}% of a CPU" in hot[0].message
    # Every figure is joined to the block below it: none is reported as missing from the dump.
    assert not [f for f in findings if "not in the dump" in f.message]


def test_a_figure_alone_counts_for_the_thread_below_it(tmp_path: Path) -> None:
    text = busy_output(">>>>>>>>高CPU线程({cpu}%):")
    findings = [f for f in analysed(tmp_path, text) if f.rule == "KD503"]
    assert [f.threads for f in findings if f.severity is Severity.WARNING] == [(HOT,)]
    dumps = list(read_dumps(str(tmp_path / "busy.txt")))
    joined = {
        thread.name: row.cpu_percent
        for row, thread in rows_with_threads(dumps[0].os_threads, dumps[0].threads)
        if thread
    }
    assert joined[HOT] >= 50, joined
    # The idle handlers' figures (0%) are joined too, to their own blocks.
    assert len(joined) == text.count("高CPU线程"), joined


def test_figures_that_are_not_a_stack_title_are_not_read() -> None:
    reader = ThreadCpuReader()
    lines = [
        "%Cpu(s):  0.0 us,  0.0 sy,  0.0 ni,100.0 id,  0.0 wa,  0.0 hi,  0.0 si,  0.0 st",
        "- `Thread CPU usage ratio` = `Thread increment CPU time` / `Sampling interval time` * 100%",
        "CPU went from 40% to 95% after the deploy:",  # two figures: prose, not one thread's
        "The consumer used 99% CPU for hours",  # no colon: a sentence, not a title
        "Disk usage at 91%:",  # not CPU
    ]
    for number, line in enumerate(lines, start=1):
        assert not reader.feed(line, number), line
    assert reader.take() == []


def test_a_figure_alone_without_a_thread_below_is_blamed_on_nothing(tmp_path: Path) -> None:
    text = "Busiest thread at 99.9% CPU:\n(the stack was lost)\n\n" + DUMP_TEXT.partition("\n")[2]
    findings = [f for f in analysed(tmp_path, text) if f.rule == "KD503"]
    assert findings == []


def test_arthas_cpu_usage_is_joined_to_its_own_header() -> None:
    dumps = list(read_dumps(str(ARTHAS_DOC)))
    joined = [
        (row.cpu_percent, thread.name if thread else None)
        for dump in dumps
        for row, thread in rows_with_threads(dump.os_threads, dump.threads)
    ]
    # `thread -n 3` and `thread -n 3 -i 1000` of the documentation (the [Internal] JVM threads
    # have no stack, and no figure is taken from the prose around them).
    assert (0.11, "arthas-command-execute") in joined
    assert (23.0, "as-command-execute-daemon") in joined
    assert all(name is not None for _, name in joined), joined


def test_arthas_busy_thread_is_named(tmp_path: Path) -> None:
    """The documentation's `thread -n` block with the captured spinning thread's stack under an
    Arthas header of its own figure."""
    block = next(
        block for tid, _ in top_rows() if (block := thread_block(tid)) and block.startswith(f'"{HOT}"')
    )
    frames = [line.replace("\t", "    ") for line in block.split("\n") if line.startswith("\tat ")]
    header = f'"{HOT}" Id=15 cpuUsage={hot_figure()}% deltaTime=201ms time=1850ms RUNNABLE'
    findings = [f for f in analysed(tmp_path, header + "\n" + "\n".join(frames) + "\n") if f.rule == "KD503"]
    assert [f.threads for f in findings] == [(HOT,)], findings


def test_json_lists_the_figures_with_their_threads(tmp_path: Path) -> None:
    path = tmp_path / "busy.txt"
    path.write_text(
        busy_output(
            "[{index}] Busy({cpu}%) thread({tid}/0x{tid:x}) stack of java process({pid}) under user(root):"
        )
    )
    run = subprocess.run(
        [sys.executable, "-m", "kafkadiag", "dump", "parse", "--format", "json", str(path)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert run.returncode == 0, run.stderr
    rows = json.loads(run.stdout)["dumps"][0]["os_threads"]
    assert rows and all(row["thread"] and row["tid"] for row in rows), rows
    assert max(rows, key=lambda row: row["cpu_percent"])["thread"] == HOT


@pytest.mark.parametrize("name", ["useful-scripts-java.md", "useful-scripts-java-2013.md"])
def test_show_busy_java_threads_as_its_documentation_prints_it(name: str) -> None:
    """The script's own published example, current and older wording (tests/dumps/public)."""
    dumps = list(read_dumps(str(REPO / "tests" / "dumps" / "public" / name)))
    joined = {
        thread.name: row.cpu_percent
        for dump in dumps
        for row, thread in rows_with_threads(dump.os_threads, dump.threads)
        if thread is not None
    }
    assert joined == {"pool-1-thread-1": 57.0, "pool-1-thread-2": 26.1}
    findings = [f for f in analyze(dumps).findings if f.rule == "KD503"]
    # Half a CPU is hot, not saturated: named, as information.
    assert [(f.threads, f.severity) for f in findings] == [(("pool-1-thread-1",), Severity.INFO)]
