"""KD101 against every "Found one Java-level deadlock" report in the real dumps we hold.

HotSpot prints every thread its walk passed on the way to a cycle: a thread that only waits for a
lock a deadlocked thread holds is listed with the cycle, often first. KD101 used to close the list
into one ring, inventing an edge the report does not print ("pool-14-thread-1 waits for
pool-14-thread-6" where the report says pool-14-thread-5) and calling the bystander deadlocked.

The reports are read here independently of kafkadiag's parser, as simply as possible: each
`"name":` line, the lock named by the `waiting ...` line under it, and the thread named by its
`which is held by "..."` line. Every edge KD101 states must be one of those lines, every line must
be stated, and a thread whose edges do not lead back to itself is never called deadlocked.
"""

from __future__ import annotations

import gzip
import html
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from kafkadiag.dumps import read_dumps
from kafkadiag.model import ThreadDump
from kafkadiag.rules.base import Finding
from kafkadiag.rules.engine import analyze

from ..conftest import CAPTURED, CORPUS, REPO

REPORT_START = "Found one Java-level deadlock:"
SOURCES = [CAPTURED, REPO / "tests" / "dumps" / "public", REPO / "tests" / "wild" / "dumps", CORPUS]

_NAMED = re.compile(r'^"(?P<name>.*)":$')
_HELD_BY = re.compile(r'which is held by "(?P<name>.*)"')
# "(object 0x..., a pkg.Class)" of a monitor, "synchronizer 0x..., (a pkg.Class)" of an ownable one.
_LOCK = re.compile(r"(?:object |synchronizer )(?P<address>0x[0-9a-fA-F]+),? \(?(?P<what>an? [^)]+)\)")
# The end of one report: the next one, the stacks it repeats, its count, or the next dump.
_REPORT_END = re.compile(
    r"^(?:Found one Java-level|Java stack information|Found \d+ deadlocks?|Full thread dump)"
)
_NID = r"(?: \(nid 0x[0-9a-f]+\))?"  # a label tells threads of one name apart by their nid


@dataclass(frozen=True)
class Edge:
    """One thread of a report: `"thread":`, the lock it waits for, `which is held by "holder"`."""

    thread: str
    address: str
    what: str
    holder: str


def report_text(path: Path) -> str:
    raw = gzip.decompress(path.read_bytes()) if path.suffix == ".gz" else path.read_bytes()
    text = raw.decode("utf-8", errors="replace").replace("\r\n", "\n")
    if "<br>" in text and "&quot;" in text:
        # A web page's source (a blog's highlighted code block): its lines as the browser shows them.
        text = html.unescape(re.sub(r"<[^>]+>", "", text.replace("<br>", "\n")))
    return text


def read_reports(text: str) -> list[list[Edge]]:
    """Each report's edges, in the order printed."""
    reports: list[list[Edge]] = []
    thread = lock = None
    for line in (line.strip() for line in text.split("\n")):
        named, held = _NAMED.match(line), _HELD_BY.search(line)
        if line.startswith(REPORT_START):
            reports.append([])
            thread = lock = None
        elif not reports:
            continue  # before the first report
        elif _REPORT_END.match(line):
            thread = None  # past this report's edges: its stacks repeat the names, without edges
        elif named:
            thread, lock = named["name"], None
        elif line.startswith("waiting"):
            lock = _LOCK.search(line)
        elif held and thread is not None and lock is not None:
            reports[-1].append(Edge(thread, lock["address"], lock["what"], held["name"]))
    return [report for report in reports if report]


def waiting_into_the_cycle(report: list[Edge]) -> set[str]:
    """Threads whose waits, followed by name, never come back to them."""
    holder_of = {edge.thread: edge.holder for edge in report}
    if len(holder_of) < len(report):
        return set()  # names repeat: by name alone every one of them would look like a ring
    bystanders = set()
    for start in holder_of:
        current = holder_of.get(start)
        for _ in range(len(holder_of)):
            if current is None or current == start:
                break
            current = holder_of.get(current)
        if current != start:
            bystanders.add(start)
    return bystanders


def files_with_reports() -> list[Path]:
    found = []
    for folder in SOURCES:
        for path in sorted(folder.rglob("*")):
            if path.is_file() and path.suffix not in (".py", ".md", ".toml", ".json"):
                if read_reports(report_text(path)):
                    found.append(path)
    return found


FILES = files_with_reports() if CORPUS.is_dir() else []


def relative(path: Path) -> str:
    return str(path.relative_to(CORPUS.parent if path.is_relative_to(CORPUS) else REPO))


def kd101_per_dump(path: Path) -> list[tuple[ThreadDump, list[Finding]]]:
    """Each dump with KD101's findings on it alone (a series would fold repeats into one finding)."""
    dumps = list(read_dumps(str(path)))
    return [
        (dump, [f for f in analyze([dump], select=["KD101"]).findings if f.rule == "KD101"]) for dump in dumps
    ]


def stated(edge: Edge) -> re.Pattern[str]:
    """The edge as KD101 words it: `A waits for <0x...> (a pkg.Class) held by B`."""
    return re.compile(
        re.escape(edge.thread)
        + _NID
        + re.escape(f" waits for <{edge.address}> ({edge.what}) held by {edge.holder}")
        + _NID
        + r"(?:[;.]|$)"
    )


def test_the_sources_hold_deadlock_reports() -> None:
    # GIVEN the captured fixtures, the public and wild dumps and the shared corpus
    # THEN they hold the reports the tests below go over, bystanders among them
    assert len(FILES) >= 40, [relative(path) for path in FILES]
    reports = [report for path in FILES for report in read_reports(report_text(path))]
    assert sum(1 for report in reports if waiting_into_the_cycle(report)) >= 2


def detail(finding: Finding, key: str) -> list[Any]:
    """One of KD101's details: a list (of names, or of edges as dicts)."""
    value = finding.details[key]
    assert isinstance(value, list), value
    return value


def reports_and_findings(path: Path) -> list[tuple[list[Edge], Finding]]:
    """Each report read here, with the KD101 finding that states all its edges."""
    reports = read_reports(report_text(path))
    findings = [finding for _, found in kd101_per_dump(path) for finding in found]
    assert len(findings) == len(reports), [finding.message for finding in findings]
    pairs = []
    for finding in findings:
        report = next((r for r in reports if all(stated(edge).search(finding.message) for edge in r)), None)
        assert report is not None, f"{finding.message}\nstates no report of {[r for r in reports]}"
        reports.remove(report)
        pairs.append((report, finding))
    return pairs


@pytest.mark.parametrize("path", FILES, ids=relative)
def test_kd101_states_exactly_the_reports_edges(path: Path) -> None:
    # GIVEN a file holding the JVM's deadlock reports, read line by line here
    # WHEN KD101 runs on each of its dumps
    # THEN each report has a finding that states every one of its edges, with its lock ...
    for report, finding in reports_and_findings(path):
        # ... and no other: an invented edge would be one "waits for" more
        assert finding.message.count(" waits for ") == len(report), finding.message
        stated_edges = detail(finding, "edges")
        assert [(edge["thread"], edge["held_by"]) for edge in stated_edges] == [
            (edge.thread, edge.holder) for edge in report
        ]


@pytest.mark.parametrize("path", FILES, ids=relative)
def test_threads_waiting_into_the_cycle_are_not_called_deadlocked(path: Path) -> None:
    # GIVEN each report's threads whose waits, followed by name, do not lead back to them
    # WHEN KD101 runs
    for report, finding in reports_and_findings(path):
        bystanders = waiting_into_the_cycle(report)
        # THEN none of them is in the cycle, among the finding's threads, in the deadlock its first
        # sentence and its story state; each is named apart, after "Also blocked behind the deadlock"
        cycle = detail(finding, "cycle")
        assert not bystanders & set(cycle), (bystanders, cycle)
        assert not bystanders & {re.sub(_NID + "$", "", name) for name in finding.threads}
        deadlock, _, behind = finding.message.partition(" Also blocked behind the deadlock")
        story_deadlock = finding.story.partition(";")[0]
        for name in bystanders:
            assert not re.search(rf"(?:: |; ){re.escape(name)}{_NID} waits for ", deadlock), deadlock
            assert re.search(rf"(?:: |; ){re.escape(name)}{_NID} waits for ", behind), finding.message
            assert name in detail(finding, "blocked_behind")
            assert not re.search(rf"(?:between |, ){re.escape(name)}{_NID}(?:, |$)", story_deadlock)


@pytest.mark.parametrize("path", FILES, ids=relative)
def test_the_reports_stacks_are_not_counted_as_threads(path: Path) -> None:
    # GIVEN a file whose dumps end with the JVM's report and the stacks it repeats
    lines = report_text(path).split("\n")
    # WHEN it is read
    for dump, _ in kd101_per_dump(path):
        if any("only the JVM's deadlock report" in note for note in dump.notes):
            continue  # the report given alone: its stacks are the only threads there are
        # THEN no thread of the dump starts inside its report
        report_from = next(
            (n for n in range(dump.line_no, dump.end_line_no + 1) if lines[n - 1].startswith(REPORT_START)),
            None,
        )
        if report_from is None:
            continue  # one of a log's dumps taken before the deadlock formed
        inside = [(t.name, t.line_no) for t in dump.threads if t.line_no >= report_from]
        assert not inside, inside


def test_a_bystander_listed_first_was_closed_into_the_cycle() -> None:
    """dumpling's deadlock.log: the JVM lists ajp-...-133 first; it waits for a lock ajp-...-24
    holds, and only -24 and -107 wait for each other (dumpling's own blocking tree: -24 -> -133)."""
    # GIVEN the dump WHEN KD101 runs
    ((_, (finding,)),) = kd101_per_dump(CORPUS / "dumpling" / "jstack" / "deadlock.log")
    t133 = "Handling GET /hudson/job/some_job/ : ajp-127.0.0.1-8009-133"
    t24 = "Handling POST /hudson/job/some_other_job/doRename : ajp-127.0.0.1-8009-24"
    t107 = "Handling POST /hudson/view/some_view/configSubmit : ajp-127.0.0.1-8009-107"
    # THEN the cycle is -24 and -107, -133 is blocked behind it, and no edge is invented
    assert finding.threads == (t24, t107)
    assert finding.details["cycle"] == [t24, t107]
    assert finding.details["blocked_behind"] == [t133]
    assert f"{t107} waits for <0x0000000404325338> (a hudson.model.Hudson) held by {t24}" in finding.message
    assert f"held by {t133}" not in finding.message
    assert finding.message.startswith("The JVM found a deadlock of 2 threads: ")
    # and the evidence quotes the report's own lines, with their line numbers
    assert (312 + 2, f'"{t133}":') in [(e.line_no, e.text) for e in finding.evidence]
    assert (312 + 4, f'which is held by "{t24}"') in [(e.line_no, e.text) for e in finding.evidence]


def test_a_deadlock_summary_without_its_stacks_was_refused(tmp_path: Path) -> None:
    # GIVEN dumpling's deadlock.log cut, here, to its report's summary: the lines from "Found one
    # Java-level deadlock:" to the blank line before "Java stack information ..."
    lines = (CORPUS / "dumpling" / "jstack" / "deadlock.log").read_text(encoding="utf-8").split("\n")
    start = lines.index(REPORT_START)
    summary = lines[start : lines.index("", start)]
    assert len(summary) == 11 and not any("Java stack information" in line for line in summary)
    path = tmp_path / "summary.txt"
    path.write_text("\n".join(summary) + "\n", encoding="utf-8")
    # WHEN it is read and KD101 runs (it was "a thread dump starts at line 1 but holds no threads")
    ((dump, (finding,)),) = kd101_per_dump(path)
    # THEN the dump holds no threads, says why, and KD101 states the report's edges from its lines,
    # with the caveat that the stacks are not in the input
    assert dump.threads == ()
    assert any("without the stacks of its threads" in note for note in dump.notes)
    assert [name.rsplit("-", 1)[-1] for name in detail(finding, "cycle")] == ["24", "107"]
    assert [name.rsplit("-", 1)[-1] for name in detail(finding, "blocked_behind")] == ["133"]
    assert "without the threads' stacks" in finding.message
    assert sorted(e.line_no for e in finding.evidence) == list(range(3, 12))  # every line of it, quoted
