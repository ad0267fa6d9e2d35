"""`dump analyze --junit-xml`: one test case per rule and one for the input, parsed as XML."""

from __future__ import annotations

import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

from ..conftest import CAPTURED


def analyze_to_junit(tmp_path: Path, *inputs: str) -> tuple[int, ET.Element]:
    report = tmp_path / "reports" / "kafkadiag.xml"
    report.parent.mkdir()
    done = subprocess.run(
        [sys.executable, "-m", "kafkadiag", "dump", "analyze", "--junit-xml", str(report), *inputs],
        capture_output=True,
        text=True,
        check=False,
    )
    return done.returncode, ET.parse(report).getroot()


def case(root: ET.Element, name: str) -> ET.Element:
    found = [element for element in root.iter("testcase") if element.get("name", "").startswith(name)]
    assert len(found) == 1, [element.get("name") for element in root.iter("testcase")]
    return found[0]


def test_a_deadlock_fails_its_rules_and_the_rest_pass(tmp_path: Path) -> None:
    code, root = analyze_to_junit(tmp_path, str(CAPTURED / "deadlock" / "jstack-l.txt"))
    assert code == 1
    suite = root.find("testsuite")
    assert suite is not None
    reported = case(root, "KD101 ")
    failures = reported.findall("failure")
    assert len(failures) == 2  # the JVM reported two deadlocks
    assert all("deadlock" in (failure.get("message") or "") for failure in failures)
    assert case(root, "KD201 ").find("failure") is None
    assert case(root, "KD104 ").find("skipped") is not None  # needs a py-spy dump
    assert case(root, "(input)").find("error") is None and case(root, "(input)").find("skipped") is None
    tests = len(list(root.iter("testcase")))
    assert suite.get("tests") == str(tests)
    failed = sum(1 for element in root.iter("testcase") if element.find("failure") is not None)
    assert suite.get("failures") == str(failed)


def test_an_excerpt_skips_the_input_case_with_its_caveats(tmp_path: Path) -> None:
    lines = (CAPTURED / "lock-contention" / "jstack-l.txt").read_text(encoding="utf-8").split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith('"request-1"'))
    excerpt = tmp_path / "excerpt.txt"
    excerpt.write_text("\n".join(lines[start : start + 11]) + "\n")
    code, root = analyze_to_junit(tmp_path, str(excerpt))
    assert code == 0
    input_case = case(root, "(input)")
    skipped = input_case.find("skipped")
    assert skipped is not None and "not a whole dump" in (skipped.get("message") or "")
    assert "owner not in the dump" in (input_case.findtext("system-out") or "")


def test_an_unreadable_input_is_an_error_and_the_report_is_still_written(tmp_path: Path) -> None:
    missing = tmp_path / "no-such-dump.txt"
    code, root = analyze_to_junit(tmp_path, str(CAPTURED / "healthy" / "jstack-l.txt"), str(missing))
    assert code == 3
    error = case(root, "(input)").find("error")
    assert error is not None and "no-such-dump.txt" in (error.text or "")
