"""Progress on stderr while long work runs: reading and analysing large dump files, the wait
between `lag --samples`. Never on stdout, where the report goes.

On a terminal it is a live rich display that disappears when the work ends. Elsewhere (a log, a
CI job) it is plain lines at a low rate: nothing for work that ends within LINE_EVERY_S, then at
most one line that often, so a 20-second analysis in cron says what it is doing without
filling the log.

KAFKADIAG_PROGRESS steers it: `auto` (the default) as above, with the live display only for
inputs of PROGRESS_MIN_BYTES or more; `always` shows progress for every input and, off a
terminal, a line for each step (a file begun, the analysis begun, each sample) and at most one
a second in between; `never` shows none.
"""

from __future__ import annotations

import os
import sys
import threading
import time
from types import TracebackType
from typing import Any

from kafkadiag.console import say, shown

PROGRESS_MODES = ("auto", "always", "never")
# Off a terminal, the least time between two progress lines (and before the first).
LINE_EVERY_S = 10.0
# Inputs at least this large get the live display on a terminal (in the `auto` mode).
PROGRESS_MIN_BYTES = 32 * 1024 * 1024


def progress_mode() -> str:
    mode = os.environ.get("KAFKADIAG_PROGRESS", "auto").strip().lower()
    return mode if mode in PROGRESS_MODES else "auto"


def stderr_is_terminal() -> bool:
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError, OSError):
        return False


def _file_size(path: str) -> int | None:
    """A regular file's size; None for stdin, a FIFO or a file gone since it was named."""
    try:
        return os.path.getsize(path) if path != "-" and os.path.isfile(path) else None
    except OSError:
        return None


GZIP_MAGIC = b"\x1f\x8b"


def _is_gzip(path: str) -> bool:
    """Whether `path` is a gzip file (read as such by kafkadiag.dumps.lines, whatever its name)."""
    try:
        with open(path, "rb") as file:
            return file.read(2) == GZIP_MAGIC
    except OSError:
        return False


def _reading_total(path: str) -> int | None:
    """The bytes reading `path` will count up to: its size; None for stdin and for a gzip file,
    whose expanded bytes are counted, not the file's (6 MB read of a 1 MB file would say nothing)."""
    size = _file_size(path)
    return None if size is None or _is_gzip(path) else size


def _shown(path: str) -> str:
    return "<stdin>" if path == "-" else path


def _tree_bytes(path: str) -> int:
    """A file's size, or the files' under a directory (a `capture` bundle `diagnose --from` reads)."""
    if not os.path.isdir(path):
        return _file_size(path) or 0
    total = 0
    for folder, _, names in os.walk(path):
        total += sum(_file_size(os.path.join(folder, name)) or 0 for name in names)
    return total


def _input_bytes(paths: tuple[str, ...]) -> int:
    return sum(_tree_bytes(path) for path in paths)


def _amount(done: int, total: int | None) -> str:
    if total:
        return f"{done / 1e6:,.1f} of {total / 1e6:,.1f} MB"
    return f"{done / 1e6:,.1f} MB"


class StatusLines:
    """Progress as `kafkadiag: ...` lines on stderr, at most one every `every_s` seconds. In the
    `auto` mode the first waits `every_s` too (short work stays silent); with `always` a step
    (`say(..., step=True)`) is always said."""

    def __init__(self, every_s: float, every_step: bool) -> None:
        self.every_s = every_s
        self.every_step = every_step
        self._last = -every_s if every_step else time.monotonic()
        self._lock = threading.Lock()

    def say(self, text: str, step: bool = False) -> None:
        with self._lock:
            now = time.monotonic()
            if now - self._last < self.every_s and not (step and self.every_step):
                return
            self._last = now
        say(f"kafkadiag: {text}")


def status_lines() -> StatusLines | None:
    """Where progress goes off a terminal, or None when it is not shown at all."""
    mode = progress_mode()
    if mode == "never":
        return None
    if mode == "always":
        return StatusLines(1.0, every_step=True)
    return StatusLines(LINE_EVERY_S, every_step=False)


def description_column() -> Any:
    """The column of a task's description, which may name a file: shown as text, never read as
    rich markup (a path holding "[/b]" raised MarkupError, exit 4), control characters escaped."""
    from rich.progress import TextColumn
    from rich.text import Text

    class Description(TextColumn):
        def render(self, task: Any) -> Text:
            return Text(shown(task.description), style=self.style, justify=self.justify)

    return Description("{task.description}", markup=False)


def _live_display(*columns: Any) -> Any:
    """A started rich Progress on the stderr console, erased when stopped."""
    from rich.progress import Progress

    from kafkadiag.console import stderr_console

    display = Progress(*columns, console=stderr_console(), transient=True)
    display.start()
    return display


class _Heartbeat:
    """Says `text()` through `lines` every LINE_EVERY_S while one long call runs (an analysis
    reports nothing while it runs, and a log must still show that it is alive)."""

    def __init__(self, lines: StatusLines, text: Any) -> None:
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(lines, text), daemon=True)
        self._thread.start()

    def _run(self, lines: StatusLines, text: Any) -> None:
        while not self._stop.wait(min(LINE_EVERY_S, max(lines.every_s, 1.0))):
            lines.say(text())

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=1.0)


class AnalysisProgress:
    """Reading FILE... (bytes, per file), then analysing the dumps read (elapsed time): a live
    display on a terminal, status lines elsewhere, nothing with KAFKADIAG_PROGRESS=never."""

    def __init__(self, paths: tuple[str, ...]) -> None:
        self._paths = paths
        self._started = time.monotonic()
        self._display: Any = None
        self._lines: StatusLines | None = None
        self._heartbeat: _Heartbeat | None = None
        self._tasks: dict[str, Any] = {}
        self._sizes: dict[str, int | None] = {}
        self._doing = "reading"
        mode = progress_mode()
        if stderr_is_terminal():
            if mode == "always" or (mode == "auto" and _input_bytes(paths) >= PROGRESS_MIN_BYTES):
                self._display = self._reading_display()
        else:
            self._lines = status_lines()

    @staticmethod
    def _reading_display() -> Any:
        from rich.progress import BarColumn, DownloadColumn, SpinnerColumn, TimeElapsedColumn

        return _live_display(
            SpinnerColumn(),
            description_column(),
            BarColumn(),
            DownloadColumn(),
            TimeElapsedColumn(),
        )

    def __enter__(self) -> AnalysisProgress:
        return self

    def update(self, path: str, bytes_read: int) -> None:
        """`bytes_read` of `path` have been read (and parsed)."""
        first = path not in self._sizes
        if first:
            self._sizes[path] = _reading_total(path)
        if self._lines is not None:
            amount = _amount(bytes_read, self._sizes[path])
            self._lines.say(f"reading {_shown(path)}: {amount}, {self._elapsed()}", first)
        if self._display is None:
            return
        if first:
            self._tasks[path] = self._display.add_task(f"reading {_shown(path)}", total=self._sizes[path])
        self._display.update(self._tasks[path], completed=bytes_read)

    def analysing(self, dumps: int) -> None:
        """Reading is over; the rules now run over `dumps` dumps (one long call)."""
        if dumps == 0:  # nothing to analyse: the error saying why follows
            return
        self._doing = f"analysing {dumps:,} dump{'s' if dumps != 1 else ''}"
        if self._lines is not None:
            self._lines.say(f"{self._doing}, {self._elapsed()}", step=True)
            self._heartbeat = _Heartbeat(self._lines, lambda: f"still {self._doing}, {self._elapsed()}")
        if self._display is not None:
            from rich.progress import SpinnerColumn, TimeElapsedColumn

            # A display of its own: the analysis has no byte count, only the time it takes.
            self._display.stop()
            self._display = _live_display(SpinnerColumn(), description_column(), TimeElapsedColumn())
            self._display.add_task(self._doing, total=None)

    def _elapsed(self) -> str:
        return f"{time.monotonic() - self._started:.0f} s so far"

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        if self._heartbeat is not None:
            self._heartbeat.stop()
        if self._display is not None:
            self._display.stop()


class SampleProgress:
    """Between `lag --samples`: "sample k of N, next in Ns" (counting down on a terminal)."""

    def __init__(self, samples: int, interval_s: float) -> None:
        self.samples = samples
        self.interval_s = interval_s
        self._next_at: float | None = None
        self._display: Any = None
        self._task: Any = None
        self._lines: StatusLines | None = None
        if samples < 2 or progress_mode() == "never":
            return
        if stderr_is_terminal():
            self._display = self._sampling_display()
            self._task = self._display.add_task("taking sample 1", total=samples)
        else:
            self._lines = status_lines()

    def _sampling_display(self) -> Any:
        from rich.progress import BarColumn, MofNCompleteColumn, ProgressColumn
        from rich.text import Text

        progress = self

        class NextSample(ProgressColumn):
            def render(self, task: Any) -> Text:
                return Text(progress.next_in())

        return _live_display(description_column(), BarColumn(), MofNCompleteColumn(), NextSample())

    def next_in(self) -> str:
        if self._next_at is None:
            return ""
        return f"next in {max(self._next_at - time.monotonic(), 0.0):.0f}s"

    def __enter__(self) -> SampleProgress:
        return self

    def update(self, index: int, snapshot: Any) -> None:
        """Sample `index` (from 0) was taken; the next one follows after the rest of the interval."""
        taken = index + 1
        if taken >= self.samples:
            self._next_at = None
            text = f"sample {taken} of {self.samples} taken, evaluating"
        else:
            # The time a snapshot takes counts in the interval (kafkadiag.collect.lagread).
            self._next_at = time.monotonic() + max(self.interval_s - snapshot.duration_ms / 1000, 0.0)
            text = f"sample {taken} of {self.samples} taken, {self.next_in()}"
        if self._lines is not None:
            self._lines.say(text, step=True)
        if self._display is not None:
            description = "evaluating" if self._next_at is None else f"sample {taken} of {self.samples} taken"
            self._display.update(self._task, completed=taken, description=description)

    def __exit__(self, *exc: object) -> None:
        if self._display is not None:
            self._display.stop()
