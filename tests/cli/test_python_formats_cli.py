"""`dump parse` and `dump analyze` on Python dumps taken without py-spy, through the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafkadiag.exitcodes import ExitCode

from .test_dump_parse_cli import run

POLL = "pyfmt-poll-queue-full"


@pytest.mark.parametrize(
    ("name", "input_format"),
    [
        ("faulthandler-sigusr1.txt", "faulthandler"),
        ("current-frames-recipe.txt", "py-traceback"),
        ("print-stack.txt", "py-traceback"),
        ("current-frames-threadid.txt", "py-traceback"),
        ("format-list.txt", "py-traceback"),
        ("gdb-py-bt.txt", "gdb-py-bt"),
    ],
)
def test_input_format_names_each_python_format(captured: Path, name: str, input_format: str) -> None:
    path = str(captured / POLL / name)
    for chosen in ("auto", input_format):
        code, out, err = run(["dump", "parse", "--format", "json", "--input-format", chosen, path])
        assert code == ExitCode.OK, err
        (dump,) = json.loads(out)["dumps"]
        assert dump["format"] == input_format and dump["thread_count"] == 5


@pytest.mark.parametrize(
    ("scenario", "name", "input_format"),
    [
        ("pyfmt-gevent-poll-queue-full", "gevent-run-info.txt", "gevent"),
        ("pyfmt-asyncio-poll-queue-full", "asyncio-task-stacks.txt", "asyncio"),
    ],
)
def test_gevent_and_asyncio_reports_parse_with_their_names(
    captured: Path, scenario: str, name: str, input_format: str
) -> None:
    code, out, err = run(["dump", "parse", "--format", "json", "--input-format", input_format,
                          str(captured / scenario / name)])  # fmt: skip
    assert code == ExitCode.OK, err
    (dump,) = json.loads(out)["dumps"]
    assert dump["format"] == input_format
    assert {"kafka-poll-loop", "worker-0", "worker-1", "group1-heartbeat"} <= {
        t["name"] for t in dump["threads"]
    }


def test_a_python_dump_read_as_another_python_format_is_refused_clearly(captured: Path) -> None:
    code, _, err = run(
        ["dump", "parse", "--input-format", "gdb-py-bt", str(captured / POLL / "faulthandler-sigusr1.txt")]
    )
    assert code == ExitCode.INPUT_UNREADABLE, err
    assert "no thread dump found" in err and "as gdb-py-bt" in err and "faulthandler" in err


def test_analyze_of_a_faulthandler_dump_quotes_the_blocked_put_by_line(captured: Path) -> None:
    path = captured / POLL / "faulthandler-sigusr1.txt"
    code, out, err = run(["dump", "analyze", "--format", "json", str(path)])
    assert code == ExitCode.FINDINGS, err
    report = json.loads(out)
    (finding,) = [f for f in report["findings"] if f["rule"] == "KD401"]
    lines = path.read_text().splitlines()
    quoted = [item for item in finding["evidence"] if "queue.py" in item["text"]]
    assert quoted and quoted[0]["line"] is not None
    assert quoted[0]["text"].strip() in lines[quoted[0]["line"] - 1]
    assert finding["threads"][0] in lines[finding["evidence"][0]["line"] - 1]  # the poll loop's ident


def test_analyze_table_of_the_recipe_names_the_poll_loop_and_its_workers(captured: Path) -> None:
    code, out, err = run(["dump", "analyze", str(captured / POLL / "current-frames-recipe.txt")])
    assert code == ExitCode.FINDINGS, err
    assert "KD401" in out and "kafka-poll-loop" in out and "worker-0" in out and "worker-1" in out


def test_healthy_python_dumps_give_no_finding(captured: Path) -> None:
    for name in ("faulthandler-sigusr1.txt", "current-frames-recipe.txt", "print-stack.txt", "gdb-py-bt.txt"):
        code, out, err = run(["dump", "analyze", "--format", "json", str(captured / "pyfmt-healthy" / name)])
        assert code == ExitCode.OK, (name, out, err)
        assert json.loads(out)["findings"] == [], name
