"""`kafkadiag demo`'s life cycle as a user drives it: `--keep` leaves the sandbox running with its
connection details until Ctrl-C, Ctrl-C while it starts stops what was started, and a machine
without Java gets a message saying what to install. Every case: no sandbox process left behind.
The demo runs as the installed command would, in its own process, and is signalled as a terminal
would signal it (SIGINT)."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import psutil

from kafkadiag.exitcodes import ExitCode
from tests.conftest import REPO


def alive(pids: list[int]) -> list[int]:
    return [
        pid for pid in pids if psutil.pid_exists(pid) and psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    ]


class Demo:
    """A `kafkadiag demo` process whose stderr (the progress) is collected line by line."""

    def __init__(self, *arguments: str, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "kafkadiag", "demo", *arguments],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, env=env,
        )  # fmt: skip
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        # Every process the demo starts, seen while it is its child: a server interrupted before it
        # was ready never prints its pid, and must be stopped all the same.
        self.children: set[int] = set()
        self._watcher = threading.Thread(target=self._watch, daemon=True)
        self._watcher.start()

    def _watch(self) -> None:
        try:
            demo = psutil.Process(self.process.pid)
            while self.process.poll() is None:
                self.children.update(child.pid for child in demo.children(recursive=True))
                time.sleep(0.01)
        except psutil.NoSuchProcess:
            pass

    def _read(self) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.lines.append(line.rstrip("\n"))

    @property
    def progress(self) -> str:
        return "\n".join(self.lines)

    def wait_for(self, pattern: str, timeout_s: float = 180) -> None:
        deadline = time.monotonic() + timeout_s
        while not re.search(pattern, self.progress):
            assert self.process.poll() is None, f"the demo ended first:\n{self.progress}"
            assert time.monotonic() < deadline, f"no {pattern!r} within {timeout_s}s:\n{self.progress}"
            time.sleep(0.1)

    def pids(self) -> list[int]:
        return list(dict.fromkeys(int(pid) for pid in re.findall(r"\(pid (\d+)\)", self.progress)))

    def interrupt(self, timeout_s: float = 60) -> int:
        self.process.send_signal(signal.SIGINT)
        code = self.process.wait(timeout=timeout_s)
        self._reader.join(timeout=5)
        self._watcher.join(timeout=5)
        return code


def test_keep_leaves_the_sandbox_running_until_ctrl_c() -> None:
    demo = Demo("--scenario", "python", "--keep", "--format", "json")
    try:
        demo.wait_for(r"Press Ctrl-C to stop it")
        started = demo.pids()
        # THEN after the diagnosis the sandbox still runs, and says how to reach it
        assert len(started) == 3 and alive(started) == started
        assert "The sandbox keeps running" in demo.progress
        assert "Commands to try in another shell:" in demo.progress and "kafkadiag " in demo.progress
        assert re.search(r"127\.0\.0\.1:\d+", demo.progress)
        time.sleep(1)
        assert alive(started) == started
        # WHEN Ctrl-C THEN everything stops
        code = demo.interrupt()
    finally:
        if demo.process.poll() is None:
            demo.process.kill()
    assert code == ExitCode.OK, demo.progress
    assert "every sandbox process was stopped" in demo.progress
    assert alive(started) == [] and alive(sorted(demo.children)) == []


def test_ctrl_c_while_starting_stops_what_was_started() -> None:
    demo = Demo("--scenario", "old-consumer")
    try:
        demo.wait_for(r"\(pid \d+\)")  # the first server is up, the rest is still starting
        code = demo.interrupt()
    finally:
        if demo.process.poll() is None:
            demo.process.kill()
    started = demo.pids()
    assert started and alive(started) == []
    # nor any process it had started whose pid it never printed (the broker still starting)
    assert alive(sorted(demo.children)) == []
    assert "Interrupted: every sandbox process was stopped" in demo.progress
    assert code == ExitCode.INTERRUPTED  # nothing was diagnosed
    assert "Traceback" not in demo.progress


def test_without_java_the_demo_says_what_to_install(tmp_path: Path) -> None:
    # A PATH holding the Python environment only: no java, javac, jstack
    env = {key: value for key, value in os.environ.items() if key != "JAVA_HOME"}
    env["PATH"] = str(Path(sys.executable).parent)
    done = subprocess.run(
        [sys.executable, "-m", "kafkadiag", "demo", "--scenario", "python"],
        capture_output=True, text=True, timeout=120, cwd=REPO, env=env,
    )  # fmt: skip
    assert done.returncode == ExitCode.INPUT_UNREADABLE, done.stderr
    assert "java is not on PATH" in done.stderr and "Install a JDK" in done.stderr
    assert "Traceback" not in done.stderr
    assert alive([int(pid) for pid in re.findall(r"\(pid (\d+)\)", done.stderr)]) == []
