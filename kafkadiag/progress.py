"""Progress bars on stderr for long reads; silent when disabled or not on a terminal."""

from __future__ import annotations

import os
from types import TracebackType
from typing import Any


class FileProgress:
    """One rich progress bar per input file, sized by the file's byte count."""

    def __init__(self, paths: tuple[str, ...], enabled: bool) -> None:
        self.enabled = enabled
        self._progress: Any = None
        self._tasks: dict[str, Any] = {}
        self._paths = paths

    def __enter__(self) -> FileProgress:
        if self.enabled:
            from rich.progress import BarColumn, DownloadColumn, Progress, TextColumn, TimeRemainingColumn

            from kafkadiag.console import stderr_console

            self._progress = Progress(
                TextColumn("{task.description}"),
                BarColumn(),
                DownloadColumn(),
                TimeRemainingColumn(),
                console=stderr_console(),
                transient=True,
            )
            self._progress.start()
        return self

    def update(self, path: str, bytes_read: int) -> None:
        if self._progress is None:
            return
        task = self._tasks.get(path)
        if task is None:
            try:
                total = os.path.getsize(path) if path != "-" else None
            except OSError:
                total = None
            task = self._tasks[path] = self._progress.add_task(f"reading {path}", total=total)
        self._progress.update(task, completed=bytes_read)

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._progress is not None:
            self._progress.stop()
