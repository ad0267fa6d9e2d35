"""Thread dumps that nobody here wrote: does `kafkadiag dump analyze` name what their authors found?

Every file in tests/wild/dumps was published with a bug report; tests/wild/catalogue.toml says what
the public discussion established and what kafkadiag makes of it today. The real CLI runs in a
subprocess on each file, exactly as a user would run it.
"""

from __future__ import annotations

import functools
import json
import re
import subprocess
import sys
from typing import Any

import pytest

from tests.wild.catalogue import CLASSES, DUMPS, REPO, WildDump, load

WILD_DUMPS = load()
UNREADABLE = 3  # kafkadiag's exit code for input that holds no dump


@functools.cache  # each file is analyzed once, whatever number of tests read the result
def analyze(dump: WildDump) -> tuple[int, dict[str, Any] | None, str]:
    completed = subprocess.run(
        [sys.executable, "-m", "kafkadiag", "dump", "analyze", "--format", "json", str(dump.path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
    )
    report = json.loads(completed.stdout) if completed.stdout.strip() else None
    return completed.returncode, report, completed.stderr


def threads_read(report: dict[str, Any] | None) -> int:
    if report is None:
        return 0
    return sum(series["threads"] for series in report["series"])


# Threads that share a name are labelled with their OS thread id: "CDP Connection (nid 0xeb03)".
_NID_LABEL = re.compile(r" \(nid 0x[0-9a-f]+\)$")


def names_every_culprit(finding: dict[str, Any], culprits: tuple[str, ...]) -> bool:
    named = {_NID_LABEL.sub("", thread) for thread in finding["threads"]}
    return all(culprit in named for culprit in culprits)


def by_slug(dump: WildDump) -> str:
    return dump.slug


@pytest.mark.parametrize("dump", WILD_DUMPS, ids=by_slug)
def test_the_file_is_read_as_recorded(dump: WildDump) -> None:
    # GIVEN a dump as it was published WHEN kafkadiag analyzes it
    exit_code, report, stderr = analyze(dump)
    # THEN it exits and reads as many threads as the catalogue records
    assert exit_code == dump.exit, f"exit {exit_code}, catalogue says {dump.exit}\n{stderr}"
    assert threads_read(report) == dump.threads, stderr
    if exit_code == UNREADABLE:
        assert "error:" in stderr and "what to do:" in stderr, stderr  # refused with a reason


@pytest.mark.parametrize("dump", [dump for dump in WILD_DUMPS if dump.named], ids=by_slug)
def test_kafkadiag_names_the_culprit(dump: WildDump) -> None:
    # GIVEN a dump whose culprit kafkadiag is expected to name
    assert dump.rules, "an expectation needs the rule codes that should name the culprit"
    # WHEN it is analyzed
    _, report, stderr = analyze(dump)
    assert report is not None, stderr
    # THEN a finding of one of those rules names every culprit thread
    naming = [
        finding
        for finding in report["findings"]
        if finding["rule"] in dump.rules and names_every_culprit(finding, dump.culprit_threads)
    ]
    found = [(finding["rule"], finding["threads"]) for finding in report["findings"]]
    assert naming, f"no {'/'.join(dump.rules)} finding names {list(dump.culprit_threads)}; found {found}"


@pytest.mark.parametrize("dump", [dump for dump in WILD_DUMPS if dump.healthy], ids=by_slug)
def test_a_healthy_dump_stays_silent(dump: WildDump) -> None:
    # GIVEN a healthy dump of the shape of a class of incident WHEN it is analyzed
    _, report, stderr = analyze(dump)
    assert report is not None, stderr
    # THEN no rule reports anything in it
    found = [(finding["rule"], finding["threads"]) for finding in report["findings"]]
    assert not found, f"a healthy dump drew findings: {found}"


@pytest.mark.parametrize("dump", [d for d in WILD_DUMPS if not d.named and not d.healthy], ids=by_slug)
def test_a_miss_says_why_and_is_still_a_miss(dump: WildDump) -> None:
    # GIVEN a dump whose culprit kafkadiag does not name
    assert dump.miss and len(dump.miss) > 20, "a miss needs its reason"
    assert not dump.rules, "a miss has no expected rules"
    _, report, _ = analyze(dump)
    if report is None or not dump.culprit_threads:
        return
    # THEN no finding names the culprits: when one does, the catalogue and the table must say so
    naming = [
        finding["rule"]
        for finding in report["findings"]
        if names_every_culprit(finding, dump.culprit_threads)
    ]
    assert not naming, f"{naming} now name {list(dump.culprit_threads)}: record it in the catalogue"


def test_every_dump_file_has_a_catalogue_entry_and_back() -> None:
    files = {path.stem for path in DUMPS.glob("*") if path.is_file()}
    entries = {dump.slug for dump in WILD_DUMPS}
    assert not files - entries, f"dumps without a catalogue entry: {sorted(files - entries)}"
    assert not entries - files, f"catalogue entries without a dump: {sorted(entries - files)}"
    assert all(path.suffix == ".txt" for path in DUMPS.glob("*")), "dumps are kept as .txt files"


def test_catalogue_entries_are_complete() -> None:
    for dump in WILD_DUMPS:
        assert not dump.unknown_keys, f"{dump.slug}: unknown keys {dump.unknown_keys}"
        assert dump.source.startswith("https://"), f"{dump.slug}: the source must be a public address"
        assert dump.cause, f"{dump.slug}: the established cause is missing"
        assert dump.named or dump.miss or dump.healthy, f"{dump.slug}: needs rules, a miss or healthy"
        assert not (dump.rules and dump.miss), f"{dump.slug}: either expected rules or a miss, not both"
        assert not (dump.healthy and (dump.rules or dump.miss or dump.culprit_threads)), (
            f"{dump.slug}: a healthy dump has no culprit, rules or miss"
        )
        assert set(dump.classes) <= set(CLASSES), f"{dump.slug}: unknown classes {dump.classes}"


def test_every_class_has_dumps_of_several_reports_and_a_healthy_one_where_found() -> None:
    # The wild set is widened toward classes of incident: each class holds at least two reports.
    for name in CLASSES:
        members = [dump for dump in WILD_DUMPS if name in dump.classes and not dump.healthy]
        assert len(members) >= 1, f"class {name} has no dump"
        if name != "self-wait":  # one published dump of it so far (see the table's figures)
            assert len(members) >= 2, f"class {name} holds {len(members)} dump(s)"
