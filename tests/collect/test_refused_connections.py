"""A refused connection is reported at once, not after --timeout.

Nothing listening on a port is known from the first connection attempt (the kernel answers
with a reset). kafkadiag asks again for about a second, in case a server is being restarted,
and then names the address and what to check, exit 3, on every command that reads ZooKeeper
or the brokers; before, each waited out the whole --timeout (10 s by default).
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from kafkadiag.exitcodes import ExitCode
from tests.infra.servers import ServerProcess, free_port

TIMEOUT_S = 30
# Interpreter start-up and imports on a loaded 2-core machine, plus the second of retries: far
# below the 30 s a run that waits out --timeout takes.
PROMPT_S = 8.0
# One MaxLag series, so that maxlag goes on to read the lag it compares against.
EXPOSITION = 'kafka_consumer_ConsumerFetcherManager_Value{name="MaxLag",clientId="c1",} 5.0\n'
WHAT_TO_CHECK = {
    "--zookeeper": "check that ZooKeeper runs and that this is its client port",
    "--bootstrap-server": "check that the broker runs and that this is its listener's host and port",
}


def _command(name: str, tmp_path: Path) -> list[str]:
    if name != "maxlag":
        return [name]
    exposition = tmp_path / "metrics.txt"
    exposition.write_text(EXPOSITION, encoding="utf-8")
    return ["maxlag", "--prometheus", str(exposition)]


@pytest.mark.parametrize("option", sorted(WHAT_TO_CHECK))
@pytest.mark.parametrize("command", ["lag", "check", "maxlag", "diagnose"])
def test_a_closed_port_is_named_within_seconds_not_after_the_timeout(
    command: str, option: str, tmp_path: Path
) -> None:
    # GIVEN a port on this host that nothing listens on
    address = f"127.0.0.1:{free_port()}"
    # WHEN a command is pointed at it with a long --timeout
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "kafkadiag", *_command(command, tmp_path), option, address,
         "--group", "g", "--timeout", str(TIMEOUT_S)],
        capture_output=True, text=True, timeout=TIMEOUT_S + 30,
    )  # fmt: skip
    seconds = time.monotonic() - started
    # THEN it says at once that the connection was refused there, and what to check: exit 3
    output = done.stdout + done.stderr
    assert done.returncode == ExitCode.INPUT_UNREADABLE, output
    assert seconds < PROMPT_S, f"{seconds:.1f}s\n{output}"
    told = " ".join(output.split())  # the report may wrap it at the terminal's width
    assert f"{address}: connection refused for 1s" in told, output
    assert WHAT_TO_CHECK[option] in told, output
    assert "Traceback" not in output


def test_a_closed_port_before_a_live_zookeeper_does_not_stop_the_read(zookeeper: ServerProcess) -> None:
    # GIVEN --zookeeper naming a closed port first and the live ZooKeeper second
    hosts = f"127.0.0.1:{free_port()},{zookeeper.address}"
    # WHEN lag reads an old-consumer group there
    done = subprocess.run(
        [sys.executable, "-m", "kafkadiag", "lag", "--zookeeper", hosts, "--group", "absent-group",
         "--timeout", "10", "--format", "json"],
        capture_output=True, text=True, timeout=60,
    )  # fmt: skip
    # THEN the live one is read (the group is reported absent, not unreachable)
    assert "connection refused" not in done.stderr, done.stderr
    assert '"unreachable":[]' in done.stdout.replace(" ", ""), done.stdout + done.stderr
