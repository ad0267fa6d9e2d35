"""`kafkadiag capture`: N thread dumps of a process at an interval, per-thread CPU, the fetcher
metrics and a manifest, as one bundle directory (kafkadiag.collect.capture)."""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

import click

from kafkadiag.commands.completion import complete_directories
from kafkadiag.console import warn
from kafkadiag.durations import DURATION
from kafkadiag.exitcodes import ExitCode


def run_capture(
    pid: int,
    out_dir: str,
    count: int,
    interval_s: float,
    jstack: str | None,
    py_spy: str | None,
    progress: bool,
    with_metrics: bool = True,
) -> int:
    from kafkadiag.collect.capture import capture

    def take(on_dump: Callable[[int], None] = lambda _: None) -> dict[str, Any]:
        return capture(pid, out_dir, count, interval_s, jstack, py_spy, with_metrics, on_dump)

    if not progress:
        manifest = take()
    else:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn

        from kafkadiag.console import stderr_console

        columns = (TextColumn(f"capturing pid {pid}"), BarColumn(), MofNCompleteColumn())
        with Progress(*columns, console=stderr_console(), transient=True) as bar:
            task = bar.add_task("dumps", total=count)
            manifest = take(lambda done: bar.update(task, completed=done))
    failures = "".join(f"; {entry['what']} not read: {entry['error']}" for entry in manifest["failures"])
    print(
        f"{out_dir}: {len(manifest['dumps'])} dump(s) of pid {pid} ({manifest['runtime']}){failures}. "
        f"Analyse it with: kafkadiag dump analyze {out_dir}"
    )
    if failures:
        warn(failures[2:])
    return int(ExitCode.OK)


@click.command("capture", short_help="Capture a consumer process into a bundle.")
@click.option("--pid", type=int, required=True, help="The consumer process (a JVM or a Python interpreter).")
@click.option("--count", type=int, default=3, show_default=True, help="How many thread dumps.")
@click.option(
    "--interval",
    type=DURATION,
    default="2s",
    show_default=True,
    help="Time between dumps (500ms, 2s, 1m; a bare number is seconds).",
)
@click.option(
    "--out",
    "out_dir",
    required=True,
    shell_complete=complete_directories,
    help="A new directory for the bundle.",
)
@click.option("--jstack", default=None, help="jstack to use (default: the target JVM's own, then PATH's).")
@click.option("--py-spy", "py_spy", default=None, help="py-spy to use (default: beside python, then PATH's).")
@click.option("--no-metrics", is_flag=True, help="Skip the JVM's fetcher metrics (no JMX agent started).")
def capture_command(
    pid: int,
    count: int,
    interval: float,
    out_dir: str,
    jstack: str | None,
    py_spy: str | None,
    no_metrics: bool,
) -> int:
    """Capture a consumer process for offline analysis: COUNT thread dumps (jstack -l for a JVM,
    py-spy for Python) INTERVAL seconds apart, each thread's CPU time at every dump, the fetcher
    metrics over the JVM's local JMX, and a manifest, into the bundle directory OUT.

    `kafkadiag dump analyze OUT`, `kafkadiag diagnose --from OUT` and `kafkadiag batch` read it.
    An existing non-empty OUT is refused (exit 2); a failure leaves no bundle (exit 3).
    """

    return run_capture(pid, out_dir, count, interval, jstack, py_spy, sys.stderr.isatty(), not no_metrics)
