"""The HTTP side of `lag --serve`: GET /metrics (collect or reuse, then the exposition) and a
small page at /. Stops cleanly on SIGTERM and Ctrl-C: the listening socket and the cluster
connections are closed before the process exits 0."""

from __future__ import annotations

import html
import signal
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from types import FrameType

from kafkadiag.console import say
from kafkadiag.errors import KafkadiagError, UsageError
from kafkadiag.exporter.scrapes import Scrapes
from kafkadiag.report.prometheus_text import CONTENT_TYPE


def parse_address(address: str) -> tuple[str, int]:
    """HOST:PORT (an empty host is 127.0.0.1: serving beyond this machine is asked for by name;
    port 0 takes a free one, printed on stderr)."""
    host, colon, port_text = address.rpartition(":")
    if not colon or not port_text.isascii() or not port_text.isdecimal() or int(port_text) > 65535:
        raise UsageError(
            f"--serve takes HOST:PORT, not {address!r}", help_text="For example --serve 127.0.0.1:9308."
        )
    return host.strip("[]") or "127.0.0.1", int(port_text)


class _Stop(Exception):
    """Raised in the main thread by SIGTERM, to leave serve_forever as Ctrl-C does."""


def _handler_for(scrapes: Scrapes) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        def do_GET(self) -> None:  # noqa: N802 (http.server's name)
            path = self.path.split("?", 1)[0]
            if path == "/metrics":
                self._metrics()
            elif path == "/":
                self._send(200, "text/html; charset=utf-8", _index_page().encode("utf-8"))
            else:
                self._send(404, "text/plain; charset=utf-8", b"not found: try /metrics\n")

        def _metrics(self) -> None:
            try:
                body = scrapes.exposition()
            except KafkadiagError as error:
                # Prometheus records the failed scrape as up 0; the reason goes to the log.
                say(f"kafkadiag: scrape failed: {error.message}")
                self._send(503, "text/plain; charset=utf-8", f"{error.message}\n".encode())
                return
            self._send(200, CONTENT_TYPE, body)

        def _send(self, status: int, content_type: str, body: bytes) -> None:
            self.send_response(status)
            self.send_header("Content-Type", content_type)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: object) -> None:  # noqa: A002
            pass  # one line per scrape would drown the log; failures are reported above

    return Handler


def _index_page() -> str:
    title = html.escape("kafkadiag lag exporter")
    return (
        f"<!doctype html><html><head><title>{title}</title></head><body><h1>{title}</h1>"
        '<p><a href="/metrics">/metrics</a>: consumer group lag, collected when scraped. '
        "Metric names: docs/prometheus.md.</p></body></html>\n"
    )


def serve(scrapes: Scrapes, address: str) -> int:
    host, port = parse_address(address)
    try:
        server = ThreadingHTTPServer((host, port), _handler_for(scrapes))
    except OSError as error:
        scrapes.close()
        raise UsageError(
            f"cannot listen on {address}: {error.strerror or error}",
            help_text="Choose a free port, or an address of this machine.",
        ) from None
    server.daemon_threads = True
    bound_host, bound_port = str(server.server_address[0]), server.server_address[1]
    print(f"kafkadiag: serving http://{bound_host}:{bound_port}/metrics", file=sys.stderr, flush=True)

    def stop(signum: int, frame: FrameType | None) -> None:
        raise _Stop

    previous = (
        signal.signal(signal.SIGTERM, stop) if threading.current_thread() is threading.main_thread() else None
    )
    try:
        server.serve_forever(poll_interval=0.2)
    except (KeyboardInterrupt, _Stop):
        print("kafkadiag: stopping", file=sys.stderr, flush=True)
    finally:
        server.server_close()
        scrapes.close()
        if previous is not None:
            signal.signal(signal.SIGTERM, previous)
    return 0
