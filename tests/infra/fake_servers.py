"""Misbehaving servers for fault tests: each listens on 127.0.0.1 on a free port in a thread and
does one wrong thing with every connection (never answer, answer bytes that are not a valid reply,
close at once). They stand in for hung, broken or wrong services that a real server cannot be
made to imitate."""

from __future__ import annotations

import socket
import threading


class FakeServer:
    """`behaviour` is "silent" (read and never answer), "close" (close each connection at once),
    or "reply" (answer the first bytes received with `reply`, then hold the connection open),
    "slow" (answer `reply` one byte per `byte_delay_s`)."""

    def __init__(self, behaviour: str, reply: bytes = b"", byte_delay_s: float = 0.5) -> None:
        self.behaviour = behaviour
        self.reply = reply
        self.byte_delay_s = byte_delay_s
        self.connections = 0
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self._listener.bind(("127.0.0.1", 0))
        self._listener.listen(64)
        self.port = self._listener.getsockname()[1]
        self._stopped = threading.Event()
        self._held: list[socket.socket] = []
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def address(self) -> str:
        return f"127.0.0.1:{self.port}"

    def _serve(self) -> None:
        self._listener.settimeout(0.1)
        while not self._stopped.is_set():
            try:
                connection, _ = self._listener.accept()
            except OSError:
                continue
            self.connections += 1
            threading.Thread(target=self._handle, args=(connection,), daemon=True).start()

    def _handle(self, connection: socket.socket) -> None:
        if self.behaviour == "close":
            connection.close()
            return
        self._held.append(connection)
        connection.settimeout(0.2)
        answered = False
        while not self._stopped.is_set():
            try:
                data = connection.recv(65536)
            except TimeoutError:
                continue
            except OSError:
                return
            if not data:
                return
            if answered or self.behaviour == "silent":
                continue
            answered = True
            try:
                if self.behaviour == "slow":
                    for index in range(len(self.reply)):
                        if self._stopped.wait(self.byte_delay_s):
                            return
                        connection.sendall(self.reply[index : index + 1])
                else:
                    connection.sendall(self.reply)
            except OSError:
                return

    def stop(self) -> None:
        self._stopped.set()
        self._listener.close()
        for connection in self._held:
            try:
                connection.close()
            except OSError:
                pass
        self._thread.join(timeout=2)

    def __enter__(self) -> FakeServer:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def length_prefixed(size_field: int, body: bytes = b"") -> bytes:
    """A frame as Kafka and ZooKeeper both write them: a signed 32-bit size, then the body."""
    return size_field.to_bytes(4, "big", signed=True) + body
