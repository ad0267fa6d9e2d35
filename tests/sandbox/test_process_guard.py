"""A sandbox process is stopped whenever its start is interrupted, even in the instant between
spawning it and guarding it, and a second Ctrl-C while it stops still ends it."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from kafkadiag.sandbox.servers import ServerProcess, spawn, starting, stop_process

# A real child that ignores SIGTERM, as a server busy shutting down may: only SIGKILL ends it.
STUBBORN = (
    "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); "
    "print('up', flush=True); time.sleep(600)"
)


def test_a_ctrl_c_right_after_the_spawn_stops_the_process(tmp_path: Path) -> None:
    spawned: list[ServerProcess] = []

    def spawn_then_interrupted() -> ServerProcess:
        # GIVEN a real process, spawned; the Ctrl-C arrives before the caller could guard it
        server = spawn("sleeper", [sys.executable, "-c", "import time; time.sleep(600)"], tmp_path, 0)
        spawned.append(server)
        os.kill(os.getpid(), signal.SIGINT)
        return server

    # WHEN it is started under the guard
    with pytest.raises(KeyboardInterrupt), starting(spawn_then_interrupted):
        pytest.fail("the interrupt must end the start before its readiness wait")
    # THEN the interrupt still reached the caller, and the process is gone
    (server,) = spawned
    assert server.process.poll() is not None


def test_a_second_ctrl_c_while_stopping_kills_the_process(tmp_path: Path) -> None:
    # GIVEN a real process that ignores SIGTERM, being stopped with a long grace period
    process = subprocess.Popen(
        [sys.executable, "-c", STUBBORN], stdout=subprocess.PIPE, start_new_session=True
    )
    assert process.stdout is not None and process.stdout.readline() == b"up\n"
    previous = signal.signal(signal.SIGALRM, _second_ctrl_c)
    signal.setitimer(signal.ITIMER_REAL, 0.5)
    try:
        # WHEN Ctrl-C is pressed again during the grace period
        with pytest.raises(KeyboardInterrupt):
            stop_process(process, grace_s=60)
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if process.poll() is None:
            process.kill()
    # THEN it was killed, not left running
    assert process.returncode == -signal.SIGKILL


def _second_ctrl_c(signum: int, frame: object) -> None:
    raise KeyboardInterrupt
