"""Progress of a Spark job on stderr: one rich bar per phase, fed from Spark's status tracker."""

from __future__ import annotations

import threading
from types import TracebackType
from typing import Any


class SparkProgress:
    """A bar per phase ("analysing 2,000 units") whose completion is the tasks Spark finished."""

    def __init__(self, context: Any, enabled: bool) -> None:
        self._context = context
        self._enabled = enabled
        self._progress: Any = None
        self._task: Any = None
        self._stop = threading.Event()
        self._poller: threading.Thread | None = None

    def __enter__(self) -> SparkProgress:
        if self._enabled:
            from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

            from kafkadiag.console import stderr_console

            self._progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=stderr_console(),
                transient=True,
            )
            self._progress.start()
            self._poller = threading.Thread(target=self._poll, name="kafkadiag-spark-progress", daemon=True)
            self._poller.start()
        return self

    def phase(self, description: str) -> None:
        if self._progress is None:
            return
        if self._task is not None:
            self._progress.remove_task(self._task)
        self._task = self._progress.add_task(description, total=None)

    def _poll(self) -> None:
        tracker = self._context.statusTracker()
        while not self._stop.wait(0.25):
            done = total = 0
            for stage_id in tracker.getActiveStageIds():
                stage = tracker.getStageInfo(stage_id)
                if stage is not None:
                    done += stage.numCompletedTasks
                    total += stage.numTasks
            if self._task is not None and total:
                self._progress.update(self._task, completed=done, total=total)

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, traceback: TracebackType | None
    ) -> None:
        self._stop.set()
        if self._poller is not None:
            self._poller.join(timeout=2)
        if self._progress is not None:
            self._progress.stop()
