"""`kafkadiag dump parse` through the real command line: exit codes, JSON contract, streams."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner

from kafkadiag.cli import cli, main
from kafkadiag.exitcodes import ExitCode

DEADLOCK = "dumpling/jstack/deadlock-and-friends.log"


def run(args: list[str], stdin: bytes | None = None) -> tuple[int, str, str]:
    """Run main() as the console script does, capturing stdout and stderr separately, with the
    report laid out at 200 columns (as tests.infra.cli does): rows are asserted whole."""
    runner = CliRunner(env={"KAFKADIAG_WIDTH": "200"})
    exit_codes: list[int] = []

    def entry() -> None:
        exit_codes.append(main(args))

    import click

    command = click.Command("kafkadiag", callback=entry)
    result = runner.invoke(command, [], input=stdin, catch_exceptions=False)
    return exit_codes[0], result.stdout, result.stderr


def test_json_output_follows_the_documented_schema(corpus: Path) -> None:
    code, out, err = run(["dump", "parse", "--format", "json", str(corpus / DEADLOCK)])
    assert code == ExitCode.OK, err
    document = json.loads(out)
    assert document["schema"] == "kafkadiag.dumps" and document["version"] == 1
    (dump,) = document["dumps"]
    assert dump["thread_count"] == len(dump["threads"]) == 19
    assert dump["timestamp"] == "2015-01-15 03:28:39"
    assert dump["unparsed_count"] == 0
    thread = next(t for t in dump["threads"] if t["name"].endswith("ajp-127.0.0.1-8009-46"))
    assert thread["state"] == "BLOCKED"
    assert thread["waits_for"]["kind"] == "waiting to lock"
    assert thread["waits_for"]["lock_id"].startswith("0x")
    assert set(thread) >= {"name", "state", "status", "java_id", "tid", "nid", "frames", "lock_events"}
    assert thread["frames"][0]["function"] and "text" in thread["frames"][0]
    assert [len(cycle) for cycle in dump["lock_cycles"]] == [2]
    assert document["inputs"] == [{"source": str(corpus / DEADLOCK), "dumps": 1}]


def test_table_output_names_the_deadlock_and_the_locks(corpus: Path) -> None:
    code, out, err = run(["dump", "parse", str(corpus / DEADLOCK)])
    assert code == ExitCode.OK, err
    assert "Threads by status" in out and "BLOCKED" in out
    assert "Deadlocks" in out and "ajp-127.0.0.1-8009-103" in out
    assert "Locks with waiters" in out


def test_stdin_is_read_with_dash(corpus: Path) -> None:
    code, out, err = run(["dump", "parse", "--format", "json", "-"], stdin=(corpus / DEADLOCK).read_bytes())
    assert code == ExitCode.OK, err
    assert json.loads(out)["dumps"][0]["source"] == "<stdin>"


def test_no_dump_exits_3_with_what_to_do(tmp_path: Path) -> None:
    path = tmp_path / "notes.txt"
    path.write_text("just some log text\nwith no thread dump\n")
    code, out, err = run(["dump", "parse", str(path)])
    assert code == ExitCode.INPUT_UNREADABLE, (out, err)
    assert "no thread dump found" in err and "jstack -l PID" in err


def test_one_bad_file_does_not_hide_the_good_one(tmp_path: Path, corpus: Path) -> None:
    code, out, err = run(
        ["dump", "parse", "--format", "json", str(tmp_path / "absent.txt"), str(corpus / DEADLOCK)]
    )
    assert code == ExitCode.INPUT_UNREADABLE
    document = json.loads(out)
    assert len(document["dumps"]) == 1
    assert document["inputs"][1]["error"].endswith("no such file")
    assert "no such file" in err


def test_unknown_option_is_a_usage_error() -> None:
    code, _, err = run(["dump", "parse", "--no-such-option", "x"])
    assert code == ExitCode.USAGE
    assert "no-such-option" in err


def test_output_file_is_written_whole_or_not_at_all(tmp_path: Path, corpus: Path) -> None:
    target = tmp_path / "report.json"
    code, _, err = run(["dump", "parse", "--format", "json", "-o", str(target), str(corpus / DEADLOCK)])
    assert code == ExitCode.OK, err
    assert json.loads(target.read_text())["dumps"][0]["thread_count"] == 19
    assert not list(tmp_path.glob(".kafkadiag-*")), "temporary file left behind"


def test_input_format_override_is_honoured(corpus: Path) -> None:
    code, out, err = run(
        ["dump", "parse", "--format", "json", "--input-format", "py-spy", str(corpus / DEADLOCK)]
    )
    # A jstack dump read as py-spy text holds no py-spy dump: a clear input error, not a crash.
    assert code == ExitCode.INPUT_UNREADABLE, (out, err)


def test_help_does_not_import_heavy_libraries() -> None:
    probe = (
        "import sys\n"
        "from kafkadiag.cli import main\n"
        "code = main(['--help'])\n"
        "heavy = [m for m in ('kafka', 'kazoo', 'pyspark', 'psutil', 'rich') if m in sys.modules]\n"
        "print('HEAVY', heavy, code)\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert "HEAVY [] 0" in result.stdout, result.stdout + result.stderr


def test_every_command_has_help() -> None:
    runner = CliRunner()
    for args in (["--help"], ["dump", "--help"], ["dump", "parse", "--help"]):
        result = runner.invoke(cli, args)
        assert result.exit_code == 0, result.output
        assert "Usage:" in result.output


def test_a_reader_that_stops_early_is_not_an_error(captured: Path) -> None:
    # `kafkadiag dump parse big.log | head -1`
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "kafkadiag",
            "dump",
            "parse",
            str(captured / "real-old-consumer-stall-0.8.2.2/kill3-50-dumps.log.gz"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert process.stdout is not None
    first = process.stdout.readline()
    process.stdout.close()
    stderr = process.stderr.read() if process.stderr else b""
    assert process.wait(timeout=60) == ExitCode.OK, stderr
    assert first.startswith(b"== ")
    assert b"Traceback" not in stderr


def test_control_characters_in_a_thread_name_keep_json_valid_and_the_terminal_safe(
    tmp_path: Path, captured: Path
) -> None:
    # GIVEN a captured deadlock whose thread names hold DEL, a C1 control (NEL) and an escape
    # sequence (a name set by the application, or a hostile one)
    original = (captured / "deadlock" / "jstack-l.txt").read_text(encoding="utf-8")
    hostile = "deadlock-monitor-A\x7f\x85\x1b]0;pwned\x07"
    path = tmp_path / "names.txt"
    path.write_text(original.replace('"deadlock-monitor-A"', f'"{hostile}"'), encoding="utf-8")
    for command in (["dump", "parse"], ["dump", "analyze"]):
        # WHEN it is written as JSON, to stdout and to a file
        out_file = tmp_path / "out.json"
        code, out, _ = run([*command, "--format", "json", str(path)])
        run([*command, "--format", "json", "-o", str(out_file), str(path)])
        for text in (out, out_file.read_text(encoding="utf-8")):
            # THEN the document is valid JSON holding the name exactly, and no control character
            # reaches the terminal or the file raw
            assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", text)
            assert any(hostile in string for string in strings_in(json.loads(text)))
        assert code in (ExitCode.OK, ExitCode.FINDINGS)
    # AND the table shows the name escaped, as before
    _, table, _ = run(["dump", "parse", str(path)])
    assert not re.search(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]", table)


def strings_in(value: object) -> list[str]:
    """Every string of a JSON document, keys included."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for key, item in value.items() for s in (key, *strings_in(item))]
    if isinstance(value, list):
        return [s for item in value for s in strings_in(item)]
    return []


def test_the_jvm_deadlock_row_listed_a_bystander_in_the_cycle(corpus: Path) -> None:
    """dumpling's deadlock.log: the JVM's report lists ajp-...-133 first, waiting for -24; only -24
    and -107 wait for each other. The row used to read "-133 -> -24 -> -107"."""
    # GIVEN the dump WHEN `dump parse` prints its tables
    code, out, err = run(["dump", "parse", str(corpus / "dumpling/jstack/deadlock.log")])
    assert code == ExitCode.OK, err
    # THEN the JVM's row is the cycle alone, and the thread behind it has a row of its own
    rows = [line.strip() for line in out.splitlines() if line.strip().startswith("JVM")]
    t133 = "Handling GET /hudson/job/some_job/ : ajp-127.0.0.1-8009-133"
    t24 = "Handling POST /hudson/job/some_other_job/doRename : ajp-127.0.0.1-8009-24"
    t107 = "Handling POST /hudson/view/some_view/configSubmit : ajp-127.0.0.1-8009-107"
    assert rows == [f"JVM          {t24} -> {t107}", f"JVM, behind  {t133} -> {t24}"], out
