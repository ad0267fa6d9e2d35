"""Progress on stderr while long work runs: `dump analyze` says it reads and then analyses, `lag
--samples` says which sample was taken and when the next follows. On a terminal a live display,
elsewhere plain lines at a low rate; never a byte of it on stdout, where the report goes.

KAFKADIAG_PROGRESS=always shows the progress of small inputs too (and each step as a line off a
terminal), so these cases run in seconds; the default's thresholds are the same code.
"""

from __future__ import annotations

import fcntl
import gzip
import json
import os
import pty
import select
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path

import pytest

from kafkadiag.exitcodes import ExitCode
from tests.infra.servers import ServerProcess
from tests.infra.workload import commit_offsets_without_joining, create_topic, produce, unique

# Apache Kafka 0.8.2.2's real old consumer, stalled: 50 kill -3 dumps in one log.
LOG = Path("real-old-consumer-stall-0.8.2.2") / "kill3-50-dumps.log.gz"


@pytest.fixture(scope="module")
def dump_log(captured: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("progress") / "kill3-100-dumps.log"
    text = gzip.decompress((captured / LOG).read_bytes())
    path.write_bytes(text + text)  # the same JVM's dumps twice over: 100 dumps, 2.2 MB
    return path


def kafkadiag(*args: str, progress: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "KAFKADIAG_PROGRESS": progress}
    return subprocess.run(
        [sys.executable, "-m", "kafkadiag", *args], capture_output=True, text=True, env=env, timeout=300
    )


def with_stderr_on_a_terminal(*args: str, progress: str) -> tuple[int, str, str]:
    """Run with stderr on a pseudo-terminal of 100x40 and stdout on a pipe, as `... | jq` would."""
    controller, terminal = pty.openpty()
    fcntl.ioctl(terminal, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 100, 0, 0))
    env = {**os.environ, "KAFKADIAG_PROGRESS": progress, "TERM": "xterm"}
    for name in ("COLUMNS", "KAFKADIAG_WIDTH", "NO_COLOR"):
        env.pop(name, None)
    process = subprocess.Popen(
        [sys.executable, "-m", "kafkadiag", *args], stdout=subprocess.PIPE, stderr=terminal, env=env
    )
    os.close(terminal)
    # stdout is read beside the terminal, so a report larger than a pipe's buffer cannot block it.
    stdout_pipe = process.stdout
    assert stdout_pipe is not None
    reports: list[bytes] = []
    reader = threading.Thread(target=lambda: reports.append(stdout_pipe.read()), daemon=True)
    reader.start()
    shown = bytearray()
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        ready, _, _ = select.select([controller], [], [], 0.2)
        if ready:
            try:
                chunk = os.read(controller, 65536)
            except OSError:  # the terminal closed with the process
                break
            if not chunk:
                break
            shown += chunk
        elif process.poll() is not None:
            break
    code = process.wait(timeout=60)
    reader.join(timeout=60)
    stdout = b"".join(reports).decode()
    os.close(controller)
    return code, stdout, shown.decode(errors="replace")


def test_analyze_says_it_reads_then_analyses_on_stderr_only(dump_log: Path) -> None:
    # GIVEN a 100-dump log, and a log file for stderr (not a terminal)
    quiet = kafkadiag("dump", "analyze", "--format", "json", str(dump_log), progress="never")
    # WHEN progress is asked for
    shown = kafkadiag("dump", "analyze", "--format", "json", str(dump_log), progress="always")
    # THEN stderr says what is read and what is analysed...
    assert shown.returncode == quiet.returncode == ExitCode.FINDINGS, shown.stderr
    lines = shown.stderr.splitlines()
    assert lines[0].startswith(f"kafkadiag: reading {dump_log}: "), lines
    assert " of 2.2 MB, " in lines[0], lines
    assert any(line.startswith("kafkadiag: analysing 100 dumps, ") for line in lines[1:]), lines
    # ... and stdout is the same report, a JSON document, as without it
    assert json.loads(shown.stdout)["findings"] and shown.stdout == quiet.stdout
    assert quiet.stderr == ""


def test_a_gzip_file_counts_its_expanded_bytes_without_the_file_size(dump_log: Path, tmp_path: Path) -> None:
    # GIVEN the 2.2 MB log gzipped (to far less than that), under a name that does not say so
    packed = tmp_path / "dumps.log"
    packed.write_bytes(gzip.compress(dump_log.read_bytes()))
    # WHEN it is analysed with progress
    shown = kafkadiag("dump", "analyze", str(packed), progress="always")
    # THEN reading counts the text read with no total: the file's size is not the text's
    assert shown.returncode == ExitCode.FINDINGS, shown.stderr
    said = f"kafkadiag: reading {packed}: "
    reading = [line for line in shown.stderr.splitlines() if line.startswith(said)]
    assert reading, shown.stderr
    assert not [line for line in reading if " of " in line], reading


def test_short_work_in_a_log_stays_silent_by_default(dump_log: Path) -> None:
    # The default off a terminal: a line only once work has run LINE_EVERY_S (10 s).
    result = kafkadiag("dump", "analyze", str(dump_log), progress="auto")
    assert result.returncode == ExitCode.FINDINGS, result.stderr
    assert result.stderr == ""


def test_on_a_terminal_the_analysis_is_shown_live_and_stdout_stays_clean(dump_log: Path) -> None:
    code, stdout, terminal = with_stderr_on_a_terminal(
        "dump", "analyze", "--format", "json", str(dump_log), progress="always"
    )
    assert code == ExitCode.FINDINGS, terminal
    assert f"reading {dump_log}" in terminal and "2.2 MB" in terminal, terminal
    assert "analysing 100 dumps" in terminal, terminal
    # The live display is erased at the end (rich's transient display: cursor up, erase line).
    assert terminal.endswith("\x1b[2K"), terminal[-200:]
    assert json.loads(stdout)["schema"] == "kafkadiag.analysis" and "\x1b" not in stdout


def test_never_shows_nothing_even_on_a_terminal(dump_log: Path) -> None:
    code, stdout, terminal = with_stderr_on_a_terminal(
        "dump", "analyze", "--format", "json", str(dump_log), progress="never"
    )
    assert code == ExitCode.FINDINGS, terminal
    assert "reading" not in terminal and "analysing" not in terminal, terminal
    assert json.loads(stdout)["findings"]


def test_parse_shows_its_reading_too(dump_log: Path) -> None:
    result = kafkadiag("dump", "parse", "--format", "json", str(dump_log), progress="always")
    assert result.returncode == ExitCode.OK, result.stderr
    assert result.stderr.startswith(f"kafkadiag: reading {dump_log}: "), result.stderr
    json.loads(result.stdout)


def test_lag_says_each_sample_and_when_the_next_follows(broker: ServerProcess) -> None:
    # GIVEN a group with lag on the real broker
    topic, group = unique("progress"), unique("progress-group")
    create_topic(broker.address, topic, 1)
    produce(broker.address, topic, {0: 3})
    commit_offsets_without_joining(broker.address, group, {(topic, 0): 1})
    # WHEN three samples are taken a second apart, with stderr in a log
    result = kafkadiag(
        "lag", "--bootstrap-server", broker.address, "--group", group,
        "--samples", "3", "--interval", "1s", "--format", "json", progress="always",
    )  # fmt: skip
    # THEN stderr says each sample and the wait for the next; stdout is the report alone
    assert result.returncode == ExitCode.OK, result.stderr
    lines = result.stderr.splitlines()
    assert lines[0].startswith("kafkadiag: sample 1 of 3 taken, next in "), lines
    assert lines[1].startswith("kafkadiag: sample 2 of 3 taken, next in "), lines
    assert lines[2] == "kafkadiag: sample 3 of 3 taken, evaluating", lines
    report = json.loads(result.stdout)
    assert [partition["lag"] for group_ in report["groups"] for partition in group_["partitions"]] == [2]


def test_lag_on_a_terminal_counts_down_to_the_next_sample(broker: ServerProcess) -> None:
    topic, group = unique("progress"), unique("progress-group")
    create_topic(broker.address, topic, 1)
    commit_offsets_without_joining(broker.address, group, {(topic, 0): 0})
    code, stdout, terminal = with_stderr_on_a_terminal(
        "lag", "--bootstrap-server", broker.address, "--group", group,
        "--samples", "2", "--interval", "3s", "--format", "json", progress="auto",
    )  # fmt: skip
    assert code == ExitCode.OK, terminal
    assert "sample 1 of 2 taken" in terminal and "next in 2s" in terminal, terminal
    assert json.loads(stdout)["schema"] == "kafkadiag.lag" and "\x1b" not in stdout


def test_check_says_each_sample_too(broker: ServerProcess) -> None:
    topic, group = unique("progress"), unique("progress-group")
    create_topic(broker.address, topic, 1)
    commit_offsets_without_joining(broker.address, group, {(topic, 0): 0})
    result = kafkadiag(
        "check", "--bootstrap-server", broker.address, "--group", group,
        "--samples", "2", "--interval", "1s", "--format", "json", progress="always",
    )  # fmt: skip
    assert result.returncode == ExitCode.OK, result.stderr
    lines = result.stderr.splitlines()
    assert lines[0].startswith("kafkadiag: sample 1 of 2 taken, next in "), lines
    assert lines[1] == "kafkadiag: sample 2 of 2 taken, evaluating", lines
    assert json.loads(result.stdout)["schema"] == "kafkadiag.check"


def test_stdin_is_named_and_an_empty_input_is_not_analysed(dump_log: Path) -> None:
    env = {**os.environ, "KAFKADIAG_PROGRESS": "always"}
    command = [sys.executable, "-m", "kafkadiag", "dump", "analyze", "-"]
    piped = subprocess.run(command, input=dump_log.read_text(), capture_output=True, text=True, env=env)
    assert piped.returncode == ExitCode.FINDINGS, piped.stderr
    assert piped.stderr.startswith("kafkadiag: reading <stdin>: "), piped.stderr
    empty = subprocess.run(command, input="", capture_output=True, text=True, env=env)
    assert empty.returncode == ExitCode.INPUT_UNREADABLE, empty.stderr
    assert "analysing" not in empty.stderr and "<stdin> is empty" in empty.stderr, empty.stderr


def _dump_under_a_hostile_path(captured: Path, tmp_path: Path) -> Path:
    """A real dump under a path holding rich markup ("[/b]", a closing tag nothing opened) and a
    terminal's set-title sequence."""
    directory = tmp_path / "a[" / "b]\x1b]0;pwned\x07"
    directory.mkdir(parents=True)
    path = directory / "jstack.txt"
    path.write_bytes((captured / "deadlock" / "jstack-l.txt").read_bytes())
    return path


def test_a_path_with_markup_and_escapes_is_shown_as_text_on_a_terminal(
    captured: Path, tmp_path: Path
) -> None:
    # GIVEN the dump under the hostile path WHEN analysed with the live display on a terminal
    path = _dump_under_a_hostile_path(captured, tmp_path)
    code, stdout, terminal = with_stderr_on_a_terminal("dump", "analyze", str(path), progress="always")
    # THEN the analysis is reported (the path was a MarkupError, exit 4) and the terminal never
    # receives the path's sequence itself
    assert code == ExitCode.FINDINGS, terminal
    assert "Traceback" not in terminal and "\x1b]0;pwned" not in terminal, terminal
    assert "\x1b]0;pwned" not in stdout and "\\x1b]0;pwned" in stdout, stdout


def test_a_path_with_escapes_is_shown_escaped_in_progress_lines(captured: Path, tmp_path: Path) -> None:
    path = _dump_under_a_hostile_path(captured, tmp_path)
    shown = kafkadiag("dump", "analyze", str(path), progress="always")
    assert shown.returncode == ExitCode.FINDINGS, shown.stderr
    escaped = str(path).replace("\x1b", "\\x1b").replace("\x07", "\\x07")
    assert f"kafkadiag: reading {escaped}: " in shown.stderr, shown.stderr
    assert "\x1b" not in shown.stderr and "\x07" not in shown.stderr, shown.stderr
