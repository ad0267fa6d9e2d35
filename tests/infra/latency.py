"""A TCP relay that adds a fixed one-way delay to every byte, both ways: a long link (another
region, a VPN) in front of a real server, so that a TLS handshake and each request take whole
round trips. Each chunk read is delivered `delay_s` after it arrived, in order; bandwidth is not
limited."""

from __future__ import annotations

import queue
import socket
import threading
import time


class LatencyRelay:
    def __init__(self, upstream: tuple[str, int], delay_s: float) -> None:
        self.upstream = upstream
        self.delay_s = delay_s
        self.connections = 0
        self._listener = socket.create_server(("127.0.0.1", 0))
        self.port = self._listener.getsockname()[1]
        self._closing = threading.Event()
        self._sockets: list[socket.socket] = []
        threading.Thread(target=self._accept, name="latency-accept", daemon=True).start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _accept(self) -> None:
        while not self._closing.is_set():
            try:
                client, _ = self._listener.accept()
            except OSError:
                return
            self.connections += 1
            try:
                server = socket.create_connection(self.upstream, timeout=5)
            except OSError:
                client.close()
                continue
            self._sockets += [client, server]
            for source, target in ((client, server), (server, client)):
                self._pipe(source, target)

    def _pipe(self, source: socket.socket, target: socket.socket) -> None:
        """Read from source, deliver each chunk to target delay_s after it was read."""
        due: queue.Queue[tuple[float, bytes]] = queue.Queue()

        def read() -> None:
            while True:
                try:
                    data = source.recv(65536)
                except OSError:
                    data = b""
                due.put((time.monotonic() + self.delay_s, data))
                if not data:
                    return

        def deliver() -> None:
            while True:
                at, data = due.get()
                wait = at - time.monotonic()
                if wait > 0 and self._closing.wait(wait):
                    return
                try:
                    if not data:
                        target.shutdown(socket.SHUT_WR)
                        return
                    target.sendall(data)
                except OSError:
                    return

        threading.Thread(target=read, name="latency-read", daemon=True).start()
        threading.Thread(target=deliver, name="latency-deliver", daemon=True).start()

    def close(self) -> None:
        self._closing.set()
        self._listener.close()
        for sock in self._sockets:
            try:
                sock.close()
            except OSError:
                pass

    def __enter__(self) -> LatencyRelay:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
