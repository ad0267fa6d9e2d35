"""kafkadiag's thread dump through HotSpot's attach listener: the same text as `jstack -l` on a
real JVM, and bounded, named failures against listeners that misbehave and JVMs that refuse."""

from __future__ import annotations

import contextlib
import os
import re
import shutil
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from kafkadiag.collect.hotspot_attach import AttachError, request, thread_dump
from kafkadiag.exitcodes import ExitCode
from tests.infra.cli import run


def java(tmp_path: Path, *options: str) -> subprocess.Popen[str]:
    source = tmp_path / "Parked.java"
    source.write_text(
        "public class Parked { public static void main(String[] a) throws Exception {"
        ' Object lock = new Object(); synchronized (lock) { System.out.println("READY"); lock.wait(); } } }'
    )
    process = subprocess.Popen(["java", "-Xmx32m", *options, str(source)], stdout=subprocess.PIPE, text=True)
    assert process.stdout is not None and process.stdout.readline().strip() == "READY"
    return process


def shape(dump: str) -> list[str]:
    """A dump without what changes from one dump to the next: time, cpu, elapsed, JNI reference
    counts, and the threads the JVM starts and stops on its own (attach listener, compiler)."""
    kept = []
    for block in dump.split("\n\n"):
        first = block.strip().splitlines()[0] if block.strip() else ""
        if "Attach Listener" in first or "CompilerThread" in first:
            continue
        kept += block.splitlines()
    lines = [line for line in kept if not re.match(r"^(\d{4}-\d\d-\d\d |JNI global refs)", line)]
    return [re.sub(r"(cpu|elapsed)=[\d.]+m?s", "", line) for line in lines]


def test_the_dump_is_jstacks(tmp_path: Path) -> None:
    process = java(tmp_path)
    try:
        ours = thread_dump(process.pid)
        jstack = [shutil.which("jstack") or "jstack", "-l", str(process.pid)]
        theirs = subprocess.run(jstack, capture_output=True, text=True, check=True).stdout
        assert ours.splitlines()[1].startswith("Full thread dump")
        assert (
            len(shape(ours)) == len(shape(theirs))
            and '"main"' in ours
            and "Locked ownable synchronizers" in ours
        )
        assert [line.split(" tid=")[0] for line in shape(ours)] == [
            line.split(" tid=")[0] for line in shape(theirs)
        ]
    finally:
        process.kill()
        process.wait()


def test_a_jvm_that_refuses_attach_is_named_with_what_to_do(tmp_path: Path) -> None:
    process = java(tmp_path, "-XX:+DisableAttachMechanism")
    try:
        started = time.monotonic()
        code, _, err = run(
            ["capture", "--pid", str(process.pid), "--count", "1", "--out", str(tmp_path / "x")]
        )
        assert code == ExitCode.INPUT_UNREADABLE and "did not answer the attach request" in err
        assert "kill -3" in err and time.monotonic() - started < 20
        assert not (tmp_path / "x").exists()
    finally:
        process.kill()
        process.wait()


@contextmanager
def fake_listener(answer: bytes | None) -> Iterator[int]:
    """A process whose /tmp holds a listener socket at the path the attach looks for: it answers
    `answer`, or never answers (None)."""
    sleeper = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    path = f"/tmp/.java_pid{sleeper.pid}"
    # A JVM killed earlier under the same pid leaves its socket file behind; the pid is ours now.
    with contextlib.suppress(FileNotFoundError):
        os.unlink(path)
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)

    def serve() -> None:
        connection, _ = server.accept()
        connection.recv(1024)
        if answer is not None:
            connection.sendall(answer)
            connection.close()
        else:
            time.sleep(5)

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield sleeper.pid
    finally:
        sleeper.kill()
        sleeper.wait()
        server.close()
        os.unlink(path)


def test_a_listener_that_never_answers_is_bounded() -> None:
    with fake_listener(None) as pid:
        started = time.monotonic()
        with pytest.raises(AttachError, match="timed out"):
            request(pid, "threaddump", ("-l", "", ""), timeout_s=1.0)
        assert time.monotonic() - started < 2.0


def test_an_error_code_from_the_listener_is_an_error() -> None:
    with fake_listener(b"101\nNo such operation\n") as pid, pytest.raises(AttachError, match="101"):
        request(pid, "threaddump", ("-l", "", ""), timeout_s=2.0)


def test_a_socket_file_left_by_a_dead_jvm_under_the_same_pid_is_replaced(tmp_path: Path) -> None:
    process = java(tmp_path)
    path = f"/tmp/.java_pid{process.pid}"
    left_behind = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        left_behind.bind(path)  # bound, never listening: what a killed JVM leaves
        left_behind.close()
        dump = thread_dump(process.pid, timeout_s=10.0)
        assert "Full thread dump" in dump and '"main"' in dump
    finally:
        process.kill()
        process.wait()
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)
