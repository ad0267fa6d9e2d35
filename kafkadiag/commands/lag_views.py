"""What the terminal shows while `kafkadiag lag --watch` re-evaluates every interval until Ctrl-C
(the progress between `--samples` is kafkadiag.progress.SampleProgress)."""

from __future__ import annotations

import time
from collections import deque
from typing import TYPE_CHECKING, Any

from kafkadiag.commands.lag import exit_code_of, write_report

if TYPE_CHECKING:
    from kafkadiag.app.lag import FetcherRequest
    from kafkadiag.collect.gather import Collector
    from kafkadiag.collect.retention import Keep
    from kafkadiag.lag.model import LagReport
    from kafkadiag.lag.snapshot import Snapshot


class _WatchView:
    """Where --watch shows each refresh: redrawn in place on a terminal; appended, one whole
    view after another, when standard output is a pipe or a file (a log keeps every refresh,
    where a live display would show only the last one, at the end)."""

    def __init__(self, console: Any) -> None:
        self.console = console
        self._live: Any = None

    def __enter__(self) -> _WatchView:
        if self.console.is_terminal:
            from rich.live import Live

            self._live = Live(console=self.console, auto_refresh=False, screen=False)
            self._live.start()
        return self

    def show(self, text: str) -> None:
        """Show one refresh: a report rendered into a buffer (not a report stream), whose outside
        text (an owner znode's value) is escaped here, where it reaches the terminal."""
        from rich.text import Text

        from kafkadiag.report.safe_text import printable

        text = printable(text)
        if self._live is not None:
            self._live.update(Text(text), refresh=True)
        else:
            self.console.print(Text(text), end="")
            self.console.file.flush()

    def __exit__(self, *exc: object) -> None:
        if self._live is not None:
            self._live.stop()


def watch_lag(
    collector: Collector,
    output_format: str,
    window: int,
    interval_s: float,
    record_dir: str | None,
    fetcher_request: FetcherRequest | None = None,
    allowed_lag: int = 0,
    keep: Keep | None = None,
) -> int:
    """Re-evaluate every interval over a sliding window of snapshots until interrupted."""
    import io

    from kafkadiag.app.lag import with_fetcher
    from kafkadiag.collect.lagread import take_samples
    from kafkadiag.console import stdout_console
    from kafkadiag.lag.window import evaluate_window

    snapshots: deque[Snapshot] = deque(maxlen=window)
    report: LagReport | None = None
    console = stdout_console()
    try:
        with _WatchView(console) as view:
            while True:
                started = time.monotonic()
                (snapshot,) = take_samples(collector, 1, interval_s, record_dir, keep=keep)
                snapshots.append(snapshot)
                report, fetcher = with_fetcher(evaluate_window(list(snapshots), allowed_lag), fetcher_request)
                buffer = io.StringIO()
                shown = "table" if output_format != "prometheus" else output_format
                write_report(buffer, report, shown, fetcher)
                stamp = time.strftime("%H:%M:%S", time.localtime(snapshot.taken_at_ms / 1000))
                header = f"kafkadiag lag --watch: {stamp}, every {interval_s:g}s, Ctrl-C to stop\n\n"
                view.show(header + buffer.getvalue())
                time.sleep(max(interval_s - (time.monotonic() - started), 0.0))
    except KeyboardInterrupt:
        if report is None:  # stopped before anything was shown: an interrupt, not a clean report
            raise
    return exit_code_of(report)
