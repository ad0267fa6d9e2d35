"""Progress of a Spark job on stderr, as kafkadiag.progress shows a local analysis: on a terminal
a rich bar per phase fed from Spark's status tracker; elsewhere (a log, a CI job) `kafkadiag: ...`
lines at a low rate; none with KAFKADIAG_PROGRESS=never. Never on stdout."""

from __future__ import annotations

import threading
import time
from types import TracebackType
from typing import Any

from kafkadiag.progress import (
    StatusLines,
    description_column,
    progress_mode,
    status_lines,
    stderr_is_terminal,
)


class SparkProgress:
    """A phase ("analysing 2,000 dump inputs") whose completion is the tasks Spark finished.
    `enabled` False shows nothing whatever KAFKADIAG_PROGRESS says (the library's default)."""

    def __init__(self, context: Any, enabled: bool) -> None:
        self._context = context
        self._enabled = enabled and progress_mode() != "never"
        self._progress: Any = None
        self._lines: StatusLines | None = None
        self._task: Any = None
        self._phase = ""
        self._started = time.monotonic()
        self._stop = threading.Event()
        self._poller: threading.Thread | None = None

    def __enter__(self) -> SparkProgress:
        if not self._enabled:
            return self
        if stderr_is_terminal():
            self._progress = self._live_bar()
        else:
            self._lines = status_lines()
        self._poller = threading.Thread(target=self._poll, name="kafkadiag-spark-progress", daemon=True)
        self._poller.start()
        return self

    @staticmethod
    def _live_bar() -> Any:
        from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

        from kafkadiag.console import stderr_console

        bar = Progress(
            description_column(),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=stderr_console(),
            transient=True,
        )
        bar.start()
        return bar

    def phase(self, description: str) -> None:
        self._phase = description
        if self._lines is not None:
            self._lines.say(f"{description}, {self._elapsed()}", step=True)
        if self._progress is None:
            return
        if self._task is not None:
            self._progress.remove_task(self._task)
        self._task = self._progress.add_task(description, total=None)

    def _elapsed(self) -> str:
        return f"{time.monotonic() - self._started:.0f} s so far"

    def _poll(self) -> None:
        tracker = self._context.statusTracker()
        while not self._stop.wait(0.25):
            done = total = 0
            for stage_id in tracker.getActiveStageIds():
                stage = tracker.getStageInfo(stage_id)
                if stage is not None:
                    done += stage.numCompletedTasks
                    total += stage.numTasks
            if not (total and self._phase):
                continue
            if self._lines is not None:  # rate-limited by the lines themselves
                self._lines.say(f"{self._phase}: {done:,} of {total:,} tasks done, {self._elapsed()}")
            if self._progress is not None and self._task is not None:
                self._progress.update(self._task, completed=done, total=total)

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self._stop.set()
        if self._poller is not None:
            self._poller.join(timeout=2)
        if self._progress is not None:
            self._progress.stop()
