"""`dump parse` / `dump analyze` on jcmd Thread.dump_to_file, javacores, ANR traces, IntelliJ exports."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from kafkadiag.exitcodes import ExitCode

from ..conftest import REPO
from .test_dump_parse_cli import run

PUBLIC = REPO / "tests" / "dumps" / "public"
JAVACORE = PUBLIC / "javacore.20220606.114458.32888.0001.txt.gz"
BUGREPORT = PUBLIC / "chkbugreport-bugreport_deadlock.txt.gz"
INTELLIJ = PUBLIC / "intellij-helloworld-kafka-livelock-README.md"


def analyze(*args: str) -> tuple[int, dict, str]:
    code, out, err = run(["dump", "analyze", "--format", "json", *args])
    return code, json.loads(out), err


def test_anr_deadlock_is_a_lock_cycle_naming_both_threads() -> None:
    code, report, err = analyze(str(BUGREPORT))
    assert code == ExitCode.FINDINGS, err
    (cycle,) = [finding for finding in report["findings"] if finding["rule"] == "KD102"]
    assert cycle["threads"] == ["main", "Thread-10"]
    quoted = [item["text"] for item in cycle["evidence"]]
    assert "- waiting to lock <0x4064b388> (a java.lang.Object) held by threadid=9 (Thread-10)" in quoted
    assert "main" in report["verdict"] and "Thread-10" in report["verdict"]


def test_javacore_deadlock_reported_by_the_vm_is_kd101() -> None:
    code, report, err = analyze(str(JAVACORE))
    assert code == ExitCode.FINDINGS, err
    (reported,) = [finding for finding in report["findings"] if finding["rule"] == "KD101"]
    assert reported["threads"][1] == "JTS Status check"
    assert reported["threads"][0].startswith("Default Executor-thread-51 @@ 11:44")


@pytest.mark.parametrize("name", ["thread-dump.txt", "thread-dump.json"])
def test_dump_to_file_analysis_names_the_deadlock_and_says_what_it_could_not_see(
    captured: Path, name: str
) -> None:
    code, report, err = analyze(str(captured / "virtual-threads" / name))
    assert code == ExitCode.FINDINGS, err
    by_rule = {finding["rule"]: finding for finding in report["findings"]}
    assert by_rule["KD102"]["threads"] == ["deadlock-monitor-A", "deadlock-monitor-B"]
    # (The old consumer's blocked fetcher in this layout, KD201, is Kafka's own: the capture
    # real-old-consumer-stall-0.8.2.2-jdk25, tested in tests/rules/test_real_kafka_captures.py.)
    caveats = " ".join(str(caveat) for caveat in report["caveats"])
    assert "does not say who owns a java.util.concurrent lock" in caveats


def test_dump_to_file_caveat_is_in_the_table_too(captured: Path) -> None:
    code, out, err = run(["dump", "analyze", str(captured / "virtual-threads/thread-dump.txt")])
    assert code == ExitCode.FINDINGS, err
    caveats = out.split("Caveats", 1)[1].split("Findings", 1)[0]
    assert "does not say who owns a java.util.concurrent lock" in " ".join(caveats.split())


@pytest.mark.parametrize(
    ("path", "input_format", "threads"),
    [
        (JAVACORE, "javacore", 201),  # 194 Java threads and 7 anonymous native threads
        (INTELLIJ, "intellij", 2),
        (BUGREPORT, "android-anr", 424),
    ],
    ids=["javacore", "intellij", "android-anr"],
)
def test_input_format_option_takes_each_format(path: Path, input_format: str, threads: int) -> None:
    code, out, err = run(["dump", "parse", "--format", "json", "--input-format", input_format, str(path)])
    assert code == ExitCode.OK, err
    document = json.loads(out)
    assert {dump["format"] for dump in document["dumps"]} == {input_format}
    assert sum(dump["thread_count"] for dump in document["dumps"]) == threads


@pytest.mark.parametrize("input_format", ["jcmd-text", "jcmd-json"])
def test_input_format_option_takes_jcmd_forms(captured: Path, input_format: str) -> None:
    name = "thread-dump.txt" if input_format == "jcmd-text" else "thread-dump.json"
    code, out, err = run(
        [
            "dump",
            "parse",
            "--format",
            "json",
            "--input-format",
            input_format,
            str(captured / "virtual-threads" / name),
        ]
    )
    assert code == ExitCode.OK, err
    (dump,) = json.loads(out)["dumps"]
    assert (dump["format"], dump["thread_count"]) == (input_format, 25)


def test_json_read_as_text_is_not_a_dump(captured: Path) -> None:
    code, out, err = run(
        ["dump", "parse", "--input-format", "jcmd-json", str(captured / "virtual-threads/thread-dump.txt")]
    )
    assert code == ExitCode.INPUT_UNREADABLE, (out, err)
    assert "not a jcmd Thread.dump_to_file JSON document" in err


def test_a_markdown_page_is_named_and_said_unsupported(tmp_path: Path) -> None:
    page = tmp_path / "incident.md"
    page.write_text("# Consumer stuck\n\nThe dump is attached to the ticket.\n\n```\n$ jstack -l 4242\n```\n")
    code, out, err = run(["dump", "analyze", str(page)])
    assert code == ExitCode.INPUT_UNREADABLE, (out, err)
    assert "looks like a Markdown page, which kafkadiag does not read" in " ".join(err.split())


def test_a_go_goroutine_dump_is_named_even_inside_a_markdown_fence() -> None:
    # GIVEN Sarama's goroutine dump as its commit message fenced it (tests/wild)
    wild = Path(__file__).resolve().parents[1] / "wild" / "dumps"
    dump = wild / "sarama-1442-broker-producer-goroutine-leak.txt"
    # WHEN it is analyzed
    code, out, err = run(["dump", "analyze", str(dump)])
    # THEN it is refused as what it is: the Go dump, not the Markdown around it
    assert code == ExitCode.INPUT_UNREADABLE, (out, err)
    assert "looks like a Go goroutine dump, which kafkadiag does not read" in " ".join(err.split())


def _with_schedulers_ids(text: str) -> str:
    """The goroutine header as Go 1.23 and later print it (gp=, m=, mp=)."""
    return text.replace("goroutine 6982 [select", "goroutine 6982 gp=0xc000682380 m=nil [select")


def _copied_out_of_a_log(text: str) -> str:
    """A logger's timestamp in front of every line, as a service's log holds a dump its runtime
    printed on SIGQUIT."""
    return "".join(f"2024/05/02 10:00:01 {line}\n" for line in text.splitlines())


@pytest.mark.parametrize("rewrite", [_with_schedulers_ids, _copied_out_of_a_log], ids=lambda f: f.__name__)
def test_other_renderings_of_a_go_dump_are_named_too(tmp_path: Path, rewrite: Callable[[str], str]) -> None:
    # GIVEN the Sarama dump as another Go version or a log renders it
    wild = Path(__file__).resolve().parents[1] / "wild" / "dumps"
    text = (wild / "sarama-1442-broker-producer-goroutine-leak.txt").read_text(encoding="utf-8")
    rendered = tmp_path / "goroutines.txt"
    rendered.write_text(rewrite(text), encoding="utf-8")
    # WHEN it is analyzed THEN it is refused as a Go dump, not as a file without any dump
    code, out, err = run(["dump", "analyze", str(rendered)])
    assert code == ExitCode.INPUT_UNREADABLE, (out, err)
    assert "looks like a Go goroutine dump" in " ".join(err.split())


# The first lines of each export as its tool lays it out (YourKit's, as IntelliJ's thread-dump
# parser tests quote it; support-core's ThreadDumps.printThreadInfo format), not captured here:
# kafkadiag reads neither, and must say which one it was given.
UNREAD_EXPORTS = {
    "a YourKit thread export": (
        "Stacks at 2017-05-03 01:07:25 PM (uptime 4h 21m 28s) Threads shown: 38 of 46\n\n"
        "ApplicationImpl pooled thread 228 [WAITING]\njava.lang.Thread.run() Thread.java:745\n"
    ),
    "a Jenkins support-bundle thread dump": (
        '"main" id=1 (0x1) state=WAITING cpu=0%\n    - waiting on <0x0a0b0c0d> (a java.lang.Object)\n'
        "    at java.lang.Object.wait(Native Method)\n"
    ),
}


@pytest.mark.parametrize(("named", "text"), UNREAD_EXPORTS.items(), ids=list(UNREAD_EXPORTS))
def test_an_export_kafkadiag_does_not_read_is_named(tmp_path: Path, named: str, text: str) -> None:
    export = tmp_path / "threads.txt"
    export.write_text(text, encoding="utf-8")
    code, out, err = run(["dump", "analyze", str(export)])
    assert code == ExitCode.INPUT_UNREADABLE, (out, err)
    assert f"looks like {named}, which kafkadiag does not read" in " ".join(err.split())
