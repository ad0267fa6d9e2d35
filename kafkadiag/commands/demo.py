"""`kafkadiag demo`: start the embedded sandbox, show it healthy, trigger its incident, wait until
the stall is visible, diagnose it with `kafkadiag diagnose` exactly as a user would, and stop
every process, also on Ctrl-C, SIGTERM or an error.

The diagnosis goes to stdout; progress, the steps and the connection details go to stderr.
"""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from typing import Any

import click

from kafkadiag.commands.formats import format_option
from kafkadiag.exitcodes import ExitCode


class DemoSteps:
    """Each step on its own stderr line with the time since the start; a spinner on a terminal."""

    def __init__(self) -> None:
        from kafkadiag.console import stderr_console

        self.console = stderr_console()
        self.started = time.monotonic()
        self._status: Any = None

    def elapsed(self) -> float:
        return time.monotonic() - self.started

    def step(self, text: str) -> None:
        self.console.print(f"[{self.elapsed():5.1f}s] {text}", soft_wrap=True)
        if self.console.is_terminal:
            if self._status is None:
                self._status = self.console.status(text)
                self._status.start()
            else:
                self._status.update(text)

    def done(self) -> None:
        if self._status is not None:
            self._status.stop()
            self._status = None


@contextlib.contextmanager
def interrupts_stop_the_sandbox() -> Iterator[None]:
    """SIGINT and SIGTERM raise KeyboardInterrupt once, so the sandbox is torn down by PID; later
    signals are ignored until the teardown is over."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    interrupted = False

    def handler(signum: int, frame: object) -> None:
        nonlocal interrupted
        if not interrupted:
            interrupted = True
            raise KeyboardInterrupt

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def run_diagnose(arguments: list[str], output_format: str) -> subprocess.CompletedProcess[str]:
    from kafkadiag.console import colour_on, width_of

    # The diagnosis is captured through a pipe but printed on this process's stdout: laid out
    # at its width and coloured as it would be.
    colour = "always" if output_format == "table" and colour_on(sys.stdout) else "never"
    options = ["--color", colour, "diagnose", *arguments, "--format", output_format]
    return subprocess.run(
        [sys.executable, "-m", "kafkadiag", *options],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "KAFKADIAG_WIDTH": str(width_of(sys.stdout))},
    )


def healthy_summary(result: subprocess.CompletedProcess[str]) -> str:
    try:
        document = json.loads(result.stdout)
    except json.JSONDecodeError:
        return f"kafkadiag diagnose exited {result.returncode}: {result.stderr.strip()[-500:]}"
    return str(document.get("verdict") or document.get("narrative") or f"exit {result.returncode}")


def run_demo(scenario: str, keep: bool, output_format: str) -> int:
    from kafkadiag.sandbox.scenarios import running_sandbox

    steps = DemoSteps()
    diagnosed = False
    try:
        with interrupts_stop_the_sandbox(), running_sandbox(scenario, steps.step) as sandbox:
            steps.step("Waiting for the consumer to catch up (the healthy state)")
            sandbox.wait_until_consuming()
            steps.step("Diagnosing the healthy state")
            healthy = run_diagnose(sandbox.diagnose_arguments(), "json")
            steps.step(f"Before the incident: {healthy_summary(healthy)}")
            steps.step(f"Triggering the incident: {sandbox.incident}")
            sandbox.trigger_incident()
            steps.step("Waiting until the stall is visible")
            sandbox.wait_until_stalled()
            command = " ".join(["kafkadiag diagnose", *sandbox.diagnose_arguments()])
            steps.step(f"Diagnosing: {command}")
            result = run_diagnose(sandbox.diagnose_arguments(), output_format)
            steps.done()
            sys.stdout.write(result.stdout)
            sys.stdout.flush()
            if result.stderr:
                steps.console.print(result.stderr.rstrip())
            diagnosed = result.returncode in (ExitCode.OK, ExitCode.FINDINGS)
            exit_note = f"kafkadiag diagnose exited {result.returncode}"
            steps.console.print(f"[{steps.elapsed():5.1f}s] Diagnosis printed ({exit_note}).")
            if keep:
                _keep_running(steps, sandbox)
            steps.step("Stopping the sandbox")
    except KeyboardInterrupt:
        steps.done()
        steps.console.print(f"[{steps.elapsed():5.1f}s] Interrupted: every sandbox process was stopped.")
        return int(ExitCode.OK if diagnosed else ExitCode.INTERRUPTED)
    steps.done()
    steps.console.print(f"[{steps.elapsed():5.1f}s] Done: every sandbox process was stopped.")
    return int(ExitCode.OK if diagnosed else ExitCode.INPUT_UNREADABLE)


def _keep_running(steps: DemoSteps, sandbox: Any) -> None:
    console = steps.console
    console.print("\nThe sandbox keeps running (the incident goes on):")
    for line in sandbox.connection_details():
        console.print("  " + line)
    console.print("\nCommands to try in another shell:")
    for line in sandbox.commands_to_try():
        console.print("  " + line, soft_wrap=True)  # a command is copied whole: never wrapped
    console.print("\nPress Ctrl-C to stop it.")
    threading.Event().wait()


@click.command("demo", short_help="Reproduce a consumer stall on real Kafka and diagnose it.")
@click.option(
    "--scenario",
    type=click.Choice(("old-consumer", "python")),
    default="old-consumer",
    show_default=True,
    help="old-consumer: Kafka 0.8.2.2's old consumer, one connector over three topics, one handler "
    "hangs; python: a kafka-python consumer whose workers hang.",
)
@click.option("--keep", is_flag=True, help="Leave the sandbox running after the diagnosis (Ctrl-C stops it).")
@format_option(("table", "json"), "The diagnosis as `kafkadiag diagnose` prints it.")
def demo_command(scenario: str, keep: bool, output_format: str) -> int:
    """Reproduce a consumer stall on real Apache Kafka and diagnose it.

    Starts ZooKeeper, an Apache Kafka broker (0.8.2.2 for the old consumer, 3.9 for Python), live
    producers and a consumer on 127.0.0.1, shows them healthy, makes one handler hang, waits until
    the stall shows, runs `kafkadiag diagnose` against it and stops every process. Kafka's jars
    are fetched from Maven Central on first use. Needs a JDK, Maven and the sandbox extra
    (pip install 'kafkadiag[sandbox]'). The diagnosis goes to stdout, progress to stderr.
    """

    return run_demo(scenario, keep, output_format)
