"""A HotSpot JVM's thread dump through its attach listener, as jstack obtains it, without
starting a second JVM to run jstack.

Measured reason (bench/diagnose_bench.py): `jstack -l` spends about 100 ms of its 130 ms starting
its own JVM; the dump itself is one request on a Unix socket. The protocol is HotSpot's dynamic
attach (version 1), the one jstack's VirtualMachine.attach speaks on Linux:
  - the listener's socket is <tmpdir>/.java_pid<pid> (tmpdir as the target sees it, so
    /proc/<pid>/root/tmp from here, which also covers containers);
  - if it is not there, creating .attach_pid<pid> in the target's working directory and sending
    SIGQUIT makes the JVM start the listener (exactly what jstack does); a socket file nothing
    listens on, left by a JVM killed under the same pid, is replaced by the JVM the same way;
  - a request is "1\\0<command>\\0<arg1>\\0<arg2>\\0<arg3>\\0"; the answer is the result code on the
    first line ("0" is success), then the command's output until the socket closes.
The output is byte for byte what `jstack -l` prints. Any failure raises AttachError, and the caller
falls back to running jstack.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import time

PROTOCOL = b"1"
# A thread dump of a 10,000-thread JVM is tens of MB; nothing legitimate is larger.
MAX_ANSWER_BYTES = 1 << 30


class AttachError(Exception):
    """The attach did not work; `listener_absent`: the JVM did not start its listener at all
    (attach disabled, or the JVM hangs), so jstack would fail the same way."""

    def __init__(self, message: str, listener_absent: bool = False) -> None:
        super().__init__(message)
        self.listener_absent = listener_absent


def _namespace_pid(pid: int) -> int:
    """The pid the target sees itself as (different inside a container's pid namespace)."""
    try:
        with open(f"/proc/{pid}/status", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("NSpid:"):
                    return int(line.split()[-1])
    except (OSError, ValueError):
        pass
    return pid


def _socket_path(pid: int) -> str:
    return f"/proc/{pid}/root/tmp/.java_pid{_namespace_pid(pid)}"


def _start_listener(pid: int, deadline: float, stale: bool = False) -> str:
    """The listener's socket path, asking the JVM to start its listener if there is none. `stale`:
    the socket file there refused the connection (left by a JVM that died under the same pid);
    the JVM replaces it when it starts its own listener, so wait for a different file."""
    path = _socket_path(pid)
    old_file = _file_identity(path) if stale else None
    if os.path.exists(path) and not stale:
        return path
    trigger = f"/proc/{pid}/cwd/.attach_pid{_namespace_pid(pid)}"
    try:
        with open(trigger, "w"):
            pass
    except OSError:
        trigger = f"/proc/{pid}/root/tmp/.attach_pid{_namespace_pid(pid)}"
        try:
            with open(trigger, "w"):
                pass
        except OSError as error:
            raise AttachError(f"cannot create the attach trigger file: {error}") from None
    try:
        os.kill(pid, signal.SIGQUIT)
        while time.monotonic() < deadline:
            current = _file_identity(path)
            if current is not None and current != old_file:
                return path
            time.sleep(0.01)
        raise AttachError("the JVM did not start its attach listener", listener_absent=True)
    finally:
        with contextlib.suppress(OSError):
            os.unlink(trigger)


def _file_identity(path: str) -> tuple[int, int] | None:
    try:
        status = os.stat(path)
    except OSError:
        return None
    return status.st_dev, status.st_ino


def _connect_once(path: str, deadline: float) -> socket.socket:
    connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        connection.settimeout(max(deadline - time.monotonic(), 0.05))
        connection.connect(path)
    except BaseException:
        connection.close()
        raise
    return connection


def _connect(pid: int, deadline: float) -> tuple[socket.socket, str]:
    path = _start_listener(pid, deadline)
    try:
        try:
            return _connect_once(path, deadline), path
        except ConnectionRefusedError:
            # Nothing listens: a socket file left behind by a JVM killed under the same pid.
            path = _start_listener(pid, deadline, stale=True)
            return _connect_once(path, deadline), path
    except ConnectionRefusedError:
        raise AttachError(f"attach socket {path}: nothing listens on it") from None
    except OSError as error:  # permission (another user's JVM), timed out
        raise AttachError(f"attach socket {path}: {error}") from None


def request(pid: int, command: str, arguments: tuple[str, str, str], timeout_s: float) -> str:
    deadline = time.monotonic() + timeout_s
    payload = b"\0".join([PROTOCOL, command.encode(), *(argument.encode() for argument in arguments)]) + b"\0"
    connection, path = _connect(pid, deadline)
    with connection:
        try:
            connection.sendall(payload)
            chunks: list[bytes] = []
            size = 0
            while True:
                connection.settimeout(max(deadline - time.monotonic(), 0.05))
                chunk = connection.recv(1 << 16)
                if not chunk:
                    break
                size += len(chunk)
                if size > MAX_ANSWER_BYTES:
                    raise AttachError(f"the answer exceeds {MAX_ANSWER_BYTES} bytes")
                chunks.append(chunk)
        except OSError as error:  # reset, timed out
            raise AttachError(f"attach socket {path}: {error}") from None
    answer = b"".join(chunks)
    code, _, output = answer.partition(b"\n")
    if code.strip() != b"0":
        raise AttachError(f"the JVM answered {code.strip()[:40]!r}: {output[:200]!r}")
    return output.decode("utf-8", errors="replace")


def thread_dump(pid: int, timeout_s: float = 30.0) -> str:
    """`jstack -l PID`'s output, read from the JVM's attach listener."""
    return request(pid, "threaddump", ("-l", "", ""), timeout_s)
