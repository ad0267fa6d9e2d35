"""Where `--output` and stdout may point, and what happens there: GIVEN a destination that is
not a plain new file (a directory, a socket, a FIFO, a device, a /proc/self/fd link, a full disk,
stdout on /dev/full) or a run stopped by SIGTERM, WHEN a report is written, THEN it arrives
where a shell's `>` would put it, or the run stops with an error naming the destination; nothing
that is not a regular file is replaced, and no temporary file is left behind."""

from __future__ import annotations

import os
import resource
import signal
import socket
import stat
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from kafkadiag.exitcodes import ExitCode
from tests.conftest import CAPTURED, REPO
from tests.infra.cli import run

DUMP = CAPTURED / "deadlock" / "jstack-l.txt"


def leftovers(directory: Path) -> list[str]:
    return sorted(name for name in os.listdir(directory) if name.startswith(".kafkadiag-"))


def kafkadiag_process(args: list[str], **options: object) -> subprocess.Popen[bytes]:
    """The installed entry point's code path (console_main), in its own process."""
    return subprocess.Popen([sys.executable, "-m", "kafkadiag", *args], cwd=REPO, **options)  # type: ignore[call-overload]


def read_in_background(path: str) -> tuple[threading.Thread, list[bytes]]:
    received: list[bytes] = []

    def read() -> None:
        with open(path, "rb") as handle:
            received.append(handle.read())

    reader = threading.Thread(target=read, daemon=True)
    reader.start()
    return reader, received


def test_output_to_a_directory_is_a_usage_error_not_a_crash(tmp_path: Path) -> None:
    code, _, err = run(["dump", "parse", str(DUMP), "--output", str(tmp_path)])
    assert code == ExitCode.USAGE, err
    assert f"cannot write the report to {tmp_path}: it is a directory" in err
    assert leftovers(tmp_path) == []


def test_output_to_a_socket_is_refused_not_replaced(tmp_path: Path) -> None:
    path = tmp_path / "agent.sock"
    with socket.socket(socket.AF_UNIX) as listening:
        listening.bind(str(path))
        code, _, err = run(["dump", "parse", str(DUMP), "--output", str(path)])
    assert code == ExitCode.USAGE and "it is a socket, not a file" in err, err
    assert stat.S_ISSOCK(os.lstat(path).st_mode)


def test_output_to_a_fifo_is_written_into_not_replaced_by_a_file(tmp_path: Path) -> None:
    fifo = tmp_path / "report.fifo"
    os.mkfifo(fifo)
    reader, received = read_in_background(str(fifo))
    code, _, err = run(["dump", "parse", str(DUMP), "--output", str(fifo)])
    reader.join(timeout=30)
    assert code == ExitCode.OK, err
    assert stat.S_ISFIFO(os.lstat(fifo).st_mode)
    assert b"Deadlocks" in received[0] or b"deadlock" in received[0].lower()
    assert leftovers(tmp_path) == []


def test_output_to_a_proc_self_fd_link_of_a_pipe_is_written_into(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    try:
        with os.fdopen(read_end, "rb") as pipe_reader:
            received: list[bytes] = []
            reader = threading.Thread(target=lambda: received.append(pipe_reader.read()), daemon=True)
            reader.start()
            code, _, err = run(["dump", "parse", str(DUMP), "--output", f"/proc/self/fd/{write_end}"])
            os.close(write_end)
            write_end = -1
            reader.join(timeout=30)
    finally:
        if write_end >= 0:
            os.close(write_end)
    assert code == ExitCode.OK, err
    assert received and b"main" in received[0]


def test_output_to_a_character_device_is_written_into_not_replaced(tmp_path: Path) -> None:
    # A device node of /dev/null's numbers in tmp_path: as root, the old rename replaced the
    # system's /dev/null with a regular file; a test must not risk the real one.
    device = tmp_path / "null"
    try:
        os.mknod(device, stat.S_IFCHR | 0o666, os.makedev(1, 3))
    except PermissionError:
        pytest.skip("creating a device node needs root (CAP_MKNOD)")
    code, _, err = run(["dump", "parse", str(DUMP), "--output", str(device)])
    assert code == ExitCode.OK, err
    assert stat.S_ISCHR(os.lstat(device).st_mode)
    assert leftovers(tmp_path) == []


def test_output_to_dev_full_is_an_error_naming_the_full_device() -> None:
    code, _, err = run(["dump", "parse", str(DUMP), "--output", "/dev/full"])
    assert code == ExitCode.INPUT_UNREADABLE, err
    assert "cannot write the report to /dev/full: No space left on device" in err
    assert stat.S_ISCHR(os.stat("/dev/full").st_mode)


@pytest.mark.parametrize("command", [["dump", "analyze"], ["dump", "parse", "--format", "json"], ["rules"]])
def test_stdout_on_dev_full_is_an_error_not_a_traceback(command: list[str]) -> None:
    with open("/dev/full", "wb") as full:
        done = kafkadiag_process([*command, *([str(DUMP)] if command != ["rules"] else [])], stdout=full,
                                 stderr=subprocess.PIPE)  # fmt: skip
        _, err = done.communicate(timeout=60)
    text = err.decode()
    assert done.returncode == ExitCode.INPUT_UNREADABLE, text
    assert "No space left on device" in text and "Traceback" not in text


def test_output_file_over_the_size_limit_is_an_error_and_leaves_no_temporary_file(tmp_path: Path) -> None:
    # RLIMIT_FSIZE makes write() fail as a full disk does (EFBIG instead of ENOSPC), on the
    # temporary file the report is written to before its rename.
    def limit_file_size() -> None:
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # else the kernel kills the writer
        resource.setrlimit(resource.RLIMIT_FSIZE, (1024, 1024))

    target = tmp_path / "report.json"
    done = kafkadiag_process(["dump", "parse", str(DUMP), "--format", "json", "--output", str(target)],
                             stderr=subprocess.PIPE, preexec_fn=limit_file_size)  # fmt: skip
    _, err = done.communicate(timeout=60)
    assert done.returncode == ExitCode.INPUT_UNREADABLE, err.decode()
    assert f"cannot write the report to {target}: File too large" in err.decode()
    assert not target.exists() and leftovers(tmp_path) == []


def test_output_through_a_symlink_replaces_its_target_and_keeps_the_link(tmp_path: Path) -> None:
    target = tmp_path / "reports" / "latest.txt"
    target.parent.mkdir()
    target.write_text("old report\n")
    link = tmp_path / "latest"
    link.symlink_to(target)
    code, _, err = run(["dump", "parse", str(DUMP), "--output", str(link)])
    assert code == ExitCode.OK, err
    assert link.is_symlink() and "main" in target.read_text()
    assert leftovers(target.parent) == [] and leftovers(tmp_path) == []


def test_sigterm_while_writing_leaves_no_temporary_file(tmp_path: Path) -> None:
    # GIVEN a report being written while its input (a FIFO) has sent only half a dump
    source = tmp_path / "input.fifo"
    os.mkfifo(source)
    target = tmp_path / "report.txt"
    process = kafkadiag_process(["dump", "parse", str(source), "--output", str(target)],
                                stderr=subprocess.PIPE)  # fmt: skip
    try:
        with open(source, "wb") as feeding:
            feeding.write(DUMP.read_bytes()[:3000])
            feeding.flush()
            deadline = time.monotonic() + 30
            while not leftovers(tmp_path) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert leftovers(tmp_path), "the report's temporary file never appeared"
            # WHEN the process is told to stop
            process.send_signal(signal.SIGTERM)
            _, err = process.communicate(timeout=30)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    # THEN it says so, exits 128 + 15, and leaves neither a report nor its temporary file
    assert process.returncode == ExitCode.TERMINATED, err.decode()
    assert "stopped by SIGTERM" in err.decode()
    assert not target.exists() and leftovers(tmp_path) == []


def test_a_junit_report_into_a_missing_directory_names_it_without_speaking_of_output(tmp_path: Path) -> None:
    # The help said "or leave out --output" for --junit-xml's path, which --output does not steer
    target = tmp_path / "missing" / "report.xml"
    code, _, err = run(["dump", "analyze", str(DUMP), "--junit-xml", str(target)])
    assert code == ExitCode.INPUT_UNREADABLE, err
    assert f"cannot write {target}: No such file or directory" in err and "--output" not in err, err
