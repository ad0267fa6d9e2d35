"""`kafkadiag demo` says what it stops: after Ctrl-C a broker's clean shutdown takes seconds, and
each process is named with its pid before it is stopped, so the wait never looks like a hang.
The demo runs as the installed command would, and is signalled as a terminal would (SIGINT)."""

from __future__ import annotations

import re
import signal
import time

from kafkadiag.exitcodes import ExitCode
from tests.infra.demo import Demo


def step_texts(progress: str) -> list[str]:
    """The demo's steps without their `[ 12.3s] ` time."""
    return [re.sub(r"^\[\s*[\d.]+s\] ", "", line) for line in progress.splitlines()]


def test_ctrl_c_on_a_kept_sandbox_names_each_process_as_it_stops() -> None:
    # GIVEN a demo whose sandbox is kept running after its diagnosis
    demo = Demo("--scenario", "python", "--keep", "--format", "json")
    try:
        demo.wait_for(r"Press Ctrl-C to stop it")
        zookeeper, broker, consumer = demo.pids()
        # WHEN Ctrl-C
        demo.process.send_signal(signal.SIGINT)
        interrupted = time.monotonic()
        # THEN it says at once that it stops the sandbox ...
        demo.wait_for(r"Interrupted: stopping every sandbox process", timeout_s=5)
        assert time.monotonic() - interrupted < 5
        code = demo.finish(timeout_s=120)
    finally:
        demo.kill_if_running()
    assert code == ExitCode.OK, demo.progress
    # ... then each process, by name and pid, before it is stopped: last started, first stopped
    steps = step_texts(demo.progress)
    stopping = [step for step in steps if step.startswith("Stopping ")]
    assert stopping == [
        f"Stopping the billing service (pid {consumer})...",
        "Stopping the producers...",
        f"Stopping the broker (pid {broker})...",
        f"Stopping ZooKeeper (pid {zookeeper})...",
    ], demo.progress
    assert steps.index("Interrupted: stopping every sandbox process") < steps.index(stopping[0])
    assert steps[-1] == "Interrupted: every sandbox process was stopped.", demo.progress
    assert demo.left_behind() == []
