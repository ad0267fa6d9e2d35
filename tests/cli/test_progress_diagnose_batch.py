"""Progress on stderr for `diagnose --from` and `batch`, as `dump analyze` shows it: what is read,
then what is analysed; a live display on a terminal, `kafkadiag: ...` lines elsewhere, none with
KAFKADIAG_PROGRESS=never; stdout holds the same report with or without it."""

from __future__ import annotations

import gzip
import json
import re
from pathlib import Path

import pytest

from kafkadiag.exitcodes import ExitCode
from tests.cli.test_progress import LOG, kafkadiag, with_stderr_on_a_terminal

# The batch's inputs: two captured processes' dump directories, nine files of real dumps.
BATCH_INPUTS = ("deadlock", "healthy")


@pytest.fixture(scope="module")
def large_log(captured: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("diagnose-progress") / "kill3-100-dumps.log"
    text = gzip.decompress((captured / LOG).read_bytes())
    path.write_bytes(text + text)  # 100 dumps of a real stalled consumer, 2.2 MB
    return path


def test_diagnose_from_says_it_reads_then_analyses(large_log: Path) -> None:
    quiet = kafkadiag("diagnose", "--from", str(large_log), "--format", "json", progress="never")
    shown = kafkadiag("diagnose", "--from", str(large_log), "--format", "json", progress="always")
    assert shown.returncode == quiet.returncode == ExitCode.FINDINGS, shown.stderr
    lines = shown.stderr.splitlines()
    assert lines[0].startswith(f"kafkadiag: reading {large_log}: ") and " of 2.2 MB, " in lines[0], lines
    assert any(line.startswith("kafkadiag: analysing 100 dumps, ") for line in lines[1:]), lines
    assert quiet.stderr == ""
    # The report is the same document with progress or without it.
    assert json.loads(shown.stdout)["findings"] and shown.stdout == quiet.stdout


def test_diagnose_from_a_bundle_directory_on_a_terminal_is_live(captured: Path) -> None:
    bundle = captured / "deadlock"
    code, stdout, terminal = with_stderr_on_a_terminal(
        "diagnose", "--from", str(bundle), "--format", "json", progress="always"
    )
    assert code == ExitCode.FINDINGS, terminal
    assert "analysing" in terminal and re.search(r"analysing \d+ dumps?", terminal), terminal
    assert terminal.endswith("\x1b[2K"), terminal[-200:]  # the live display is erased at the end
    assert json.loads(stdout)["schema"] == "kafkadiag.diagnosis" and "\x1b" not in stdout


def test_diagnose_without_dumps_shows_no_progress(tmp_path: Path) -> None:
    # Nothing could be read: no progress line, only the warning that names what was not read
    # (as lag warns of a source it could not read), and the report says why.
    missing = tmp_path / "no-such-bundle"
    result = kafkadiag("diagnose", "--from", str(missing), progress="always")
    assert result.returncode == ExitCode.INPUT_UNREADABLE, result.stderr
    assert "NOT READ bundle" in result.stdout, result.stdout
    warnings = result.stderr.splitlines()
    assert warnings and all(line.startswith("kafkadiag: warning: ") for line in warnings), warnings
    assert not any("reading" in line or "analysing" in line for line in warnings), warnings


def test_batch_says_each_phase_in_a_log(captured: Path, tmp_path: Path) -> None:
    inputs = [str(captured / name) for name in BATCH_INPUTS]
    shown = kafkadiag("batch", *inputs, "--out", str(tmp_path / "shown"), progress="always")
    assert shown.returncode == ExitCode.FINDINGS, shown.stderr[-3000:]
    lines = shown.stderr.splitlines()
    assert all(line.startswith("kafkadiag: ") for line in lines), lines
    phases = [line for line in lines if ", " in line and ": " not in line.removeprefix("kafkadiag: ")]
    assert [re.sub(r", \d+ s so far$", "", line) for line in phases] == [
        "kafkadiag: analysing 9 dump inputs",
        "kafkadiag: reading 0 lag histories",
        "kafkadiag: writing results",
    ], lines
    # stdout is the one summary line, as without progress
    quiet = kafkadiag("batch", *inputs, "--out", str(tmp_path / "quiet"), progress="never")
    assert quiet.returncode == ExitCode.FINDINGS and quiet.stderr == "", quiet.stderr[-3000:]
    assert shown.stdout.replace("shown", "quiet") == quiet.stdout
    assert shown.stdout.startswith("9 inputs, 15 dumps, ")


def test_batch_on_a_terminal_shows_a_live_bar(captured: Path, tmp_path: Path) -> None:
    inputs = [str(captured / name) for name in BATCH_INPUTS]
    code, stdout, terminal = with_stderr_on_a_terminal(
        "batch", *inputs, "--out", str(tmp_path / "out"), progress="auto"
    )
    assert code == ExitCode.FINDINGS, terminal[-3000:]
    assert "analysing 9 dump inputs" in terminal, terminal[-3000:]
    assert "kafkadiag: " not in terminal  # live, not lines
    assert terminal.endswith("\x1b[2K"), terminal[-200:]
    assert stdout.startswith("9 inputs, 15 dumps, ") and "\x1b" not in stdout
