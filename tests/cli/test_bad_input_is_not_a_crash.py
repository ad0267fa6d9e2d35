"""Inputs that once ended in exit 4 (the code for a bug) with a traceback, each made from a real
captured dump: GIVEN the mutated dump, WHEN kafkadiag reads it, THEN it exits 3 with an error
naming the problem, or reads the rest and says what it could not read, never a traceback."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from kafkadiag.exitcodes import ExitCode
from tests.conftest import CAPTURED
from tests.infra.cli import run

DEEP = "[" * 100_000 + "]" * 100_000
PYSPY_JSON = CAPTURED / "py-healthy" / "py-spy-dump.json"
JCMD_JSON = CAPTURED / "virtual-threads" / "thread-dump.json"
ACTUATOR_JSON = CAPTURED / "real-new-consumer-coordinator-unavailable-3.9.1" / "actuator-threaddump.json"
JSTACK = CAPTURED / "deadlock" / "jstack-l.txt"
# Each JSON dump reader, with the words its error names the format by.
JSON_READERS = pytest.mark.parametrize(
    ("fixture", "reader"),
    [(PYSPY_JSON, "py-spy"), (JCMD_JSON, "jcmd Thread.dump_to_file"), (ACTUATOR_JSON, "Actuator")],
)


def with_member(document: Path, value: str) -> str:
    """The real JSON document with one more member, `"extra": value`, at its end."""
    text = document.read_text(encoding="utf-8").rstrip()
    closing = "}" if text.endswith("}") else "]"  # py-spy's is a list of thread objects
    last = text.rindex("}", 0, len(text) - 1) if closing == "]" else len(text) - 1
    return text[:last] + f', "extra": {value}' + text[last:]


def assert_clean_error(code: int, err: str, *named: str) -> None:
    assert code == ExitCode.INPUT_UNREADABLE, err
    assert "Traceback" not in err and "internal error" not in err, err
    for words in named:
        assert words in err, err


@JSON_READERS
def test_json_nested_100000_levels_is_an_input_error_not_a_recursion_error(
    tmp_path: Path, fixture: Path, reader: str
) -> None:
    path = tmp_path / fixture.name
    path.write_text(with_member(fixture, DEEP), encoding="utf-8")
    code, _, err = run(["dump", "analyze", str(path)])
    assert_clean_error(code, err, reader, "nested deeper than 64 levels")


@JSON_READERS
def test_json_number_of_5000_digits_is_an_input_error_not_the_int_size_limit(
    tmp_path: Path, fixture: Path, reader: str
) -> None:
    path = tmp_path / fixture.name
    path.write_text(with_member(fixture, "7" * 5000), encoding="utf-8")
    code, _, err = run(["dump", "parse", str(path), "--format", "json"])
    assert_clean_error(code, err, reader, "a JSON number of 5,000 characters")


def test_docker_log_record_nested_100000_levels_is_a_line_not_a_recursion_error(tmp_path: Path) -> None:
    # GIVEN a real jstack as Docker's json-file driver stores it, one record deep beyond reason
    records = [
        json.dumps({"log": line + "\n", "stream": "stdout"}) for line in JSTACK.read_text().split("\n")
    ]
    records.insert(5, '{"log": ' + DEEP + "}")
    path = tmp_path / "container.log"
    path.write_text("\n".join(records) + "\n", encoding="utf-8")
    # WHEN analysed
    code, out, err = run(["dump", "analyze", str(path), "--format", "json"])
    # THEN the dump in the other records is read and its deadlock found
    assert code == ExitCode.FINDINGS, err
    assert "KD101" in {finding["rule"] for finding in json.loads(out)["findings"]}


def test_lone_surrogate_in_pyspy_json_is_escaped_not_a_unicode_encode_error(tmp_path: Path) -> None:
    text = PYSPY_JSON.read_text(encoding="utf-8")
    name_at = text.index('"thread_name": "') + len('"thread_name": "')
    path = tmp_path / "surrogate.json"
    path.write_text(text[:name_at] + "\\ud800" + text[name_at:], encoding="utf-8")
    for output_format in ("json", "table"):
        code, out, err = run(["dump", "parse", str(path), "--format", output_format])
        assert code == ExitCode.OK, err
    code, out, err = run(["dump", "parse", str(path), "--format", "json"])
    names = [thread["name"] for dump in json.loads(out)["dumps"] for thread in dump["threads"]]
    assert any(name.startswith("\ud800") for name in names)  # the same string, JSON-escaped


def test_frame_line_number_in_superscript_digits_is_no_line_number(tmp_path: Path) -> None:
    # `isdigit()` accepted "1313²", `int()` refused it
    text = JSTACK.read_text(encoding="utf-8")
    assert "(java.base@17.0.15/Thread.java:1313)" in text
    path = tmp_path / "superscript.txt"
    path.write_text(text.replace("Thread.java:1313)", "Thread.java:1313\u00b2)"), encoding="utf-8")
    code, out, err = run(["dump", "analyze", str(path), "--format", "json"])
    assert code == ExitCode.FINDINGS, err
    assert "KD101" in {finding["rule"] for finding in json.loads(out)["findings"]}


@pytest.mark.parametrize(
    ("field", "broken"),
    [("prio=5", "prio=M9"), ("cpu=83.69ms", "cpu=0..4ms"), ("elapsed=1.81s", "elapsed=2..05s")],
)
def test_header_field_that_is_not_a_number_reads_as_absent(tmp_path: Path, field: str, broken: str) -> None:
    text = JSTACK.read_text(encoding="utf-8")
    header = next(line for line in text.split("\n") if line.startswith('"main" #1'))
    assert field in header
    path = tmp_path / "header.txt"
    path.write_text(text.replace(header, header.replace(field, broken)), encoding="utf-8")
    for command in (["dump", "parse"], ["dump", "analyze"]):
        code, out, err = run([*command, str(path), "--format", "json"])
        assert code in (ExitCode.OK, ExitCode.FINDINGS), err
    code, out, err = run(["dump", "parse", str(path), "--format", "json"])
    main = next(t for t in json.loads(out)["dumps"][0]["threads"] if t["name"] == "main")
    assert main["frames"], main  # the thread is read whole, only the field is unknown


@pytest.mark.parametrize(
    "fixture", ["faulthandler-sigusr1.txt", "print-stack.txt", "gdb-py-bt.txt", "current-frames-recipe.txt"]
)
def test_python_frame_line_number_of_5000_digits_is_no_line_number(tmp_path: Path, fixture: str) -> None:
    # `\d+` matched it and `int()` refused it past the interpreter's 4,300 digits
    text = (CAPTURED / "pyfmt-healthy" / fixture).read_text(encoding="utf-8")
    number = re.search(r"line (\d+)", text)
    assert number is not None
    path = tmp_path / fixture
    path.write_text(text[: number.start(1)] + "9" * 5000 + text[number.end(1) :], encoding="utf-8")
    code, out, err = run(["dump", "parse", str(path), "--format", "json"])
    assert code == ExitCode.OK, err
    frames = [frame for dump in json.loads(out)["dumps"] for t in dump["threads"] for frame in t["frames"]]
    assert any("9" * 5000 in frame["text"] and frame["line"] is None for frame in frames)
