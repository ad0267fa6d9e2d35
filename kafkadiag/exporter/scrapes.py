"""What a scrape returns: a lag report over the last collections, collected on demand.

A scrape collects a new snapshot only when the last one is older than the minimum interval;
otherwise it serves the exposition already rendered, so several Prometheus servers (or a
dashboard's refreshes) scraping at once cost the cluster one read. Statuses and rates are
evaluated over a sliding window of the last collections, as `lag --watch` does. Reading is the
same read-only path as `kafkadiag lag`.
"""

from __future__ import annotations

import io
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from kafkadiag.collect.gather import Collector, LagTarget
from kafkadiag.collect.retention import Keep
from kafkadiag.lag.snapshot import Snapshot
from kafkadiag.lag.window import evaluate_window

if TYPE_CHECKING:
    from kafkadiag.app.lag import FetcherRequest


@dataclass(frozen=True)
class ServeOptions:
    min_interval_s: float = 10.0
    window: int = 10  # Burrow's default window
    allowed_lag: int = 0
    cluster_name: str | None = None
    record_dir: str | None = None
    keep: Keep | None = None  # --record retention (--keep)


class Scrapes:
    """Collections on demand, one at a time (a lock: the collector's connections are not
    shared between threads), the last exposition kept for `min_interval_s`."""

    def __init__(
        self,
        target: LagTarget,
        options: ServeOptions,
        fetcher_request: FetcherRequest | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.options = options
        self.fetcher_request = fetcher_request
        self.collections = 0
        self._collector = Collector(target)
        self._window: deque[Snapshot] = deque(maxlen=max(options.window, 1))
        self._clock = clock
        self._lock = threading.Lock()
        self._rendered: bytes | None = None
        self._rendered_at = 0.0

    def exposition(self) -> bytes:
        with self._lock:
            now = self._clock()
            if self._rendered is None or now - self._rendered_at >= self.options.min_interval_s:
                self._rendered = self._collect()
                self._rendered_at = self._clock()
            return self._rendered

    def close(self) -> None:
        with self._lock:
            self._collector.close()

    def _collect(self) -> bytes:
        from kafkadiag.app.lag import with_fetcher
        from kafkadiag.collect.lagrecord import record_snapshot
        from kafkadiag.report.lag_prometheus import write_prometheus

        snapshot = self._collector.snapshot()
        self.collections += 1
        self._window.append(snapshot)
        if self.options.record_dir is not None:
            record_snapshot(self.options.record_dir, snapshot, self.options.keep)
        report = evaluate_window(list(self._window), self.options.allowed_lag)
        report, fetcher = with_fetcher(report, self.fetcher_request)
        text = io.StringIO()
        write_prometheus(text, report, fetcher, self.options.cluster_name)
        return text.getvalue().encode("utf-8")
