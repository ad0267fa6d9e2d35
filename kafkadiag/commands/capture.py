"""`kafkadiag capture`: N thread dumps of a process at an interval, per-thread CPU, the fetcher
metrics and a manifest, as one bundle directory (kafkadiag.collect.capture)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kafkadiag.collect.capture import capture
from kafkadiag.console import warn
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
