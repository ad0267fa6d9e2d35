"""`kafkadiag lag --serve HOST:PORT`: options checked, then serve until SIGTERM or Ctrl-C."""

from __future__ import annotations

from typing import TYPE_CHECKING

from kafkadiag.errors import UsageError
from kafkadiag.exporter.scrapes import Scrapes, ServeOptions

if TYPE_CHECKING:
    from kafkadiag.app.lag import FetcherRequest
    from kafkadiag.collect.gather import LagTarget


def run_serve(
    target: LagTarget, address: str, options: ServeOptions, fetcher_request: FetcherRequest | None = None
) -> int:
    from kafkadiag.exporter.server import parse_address, serve

    target.validate()
    parse_address(address)  # a bad address is a usage error before any connection is made
    if options.min_interval_s < 0:
        raise UsageError("--min-interval must not be negative")
    if fetcher_request is not None:
        fetcher_request.validate()
    return serve(Scrapes(target, options, fetcher_request), address)
