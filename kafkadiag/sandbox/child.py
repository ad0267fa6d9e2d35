"""A sandbox program driven over its stdin: one command per line, one answer line each.

The program prints `READY` when it is in place (lines before that, such as `CONSUMER <id>`,
are kept as its announcements); answers starting with `ERROR` are raised.
"""

from __future__ import annotations

import json
import queue
import subprocess
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafkadiag.errors import SandboxError
from kafkadiag.sandbox.servers import starting, stop_process


@dataclass
class CommandedProcess:
    name: str
    process: subprocess.Popen[str]
    log_path: Path
    announcements: list[str] = field(default_factory=list)
    _lines: queue.Queue[str] = field(default_factory=queue.Queue)

    @property
    def pid(self) -> int:
        return self.process.pid

    def command(self, line: str, timeout_s: float = 10.0) -> str:
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(line + "\n")
            self.process.stdin.flush()
            answer = self._lines.get(timeout=timeout_s)
        except (queue.Empty, BrokenPipeError):
            raise SandboxError(f"the {self.name} did not answer {line!r}:\n{self.log_tail()}") from None
        if answer.startswith("ERROR"):
            raise SandboxError(f"the {self.name} refused {line!r}: {answer}")
        return answer

    def status(self) -> dict[str, Any]:
        return dict(json.loads(self.command("status").removeprefix("STATUS ")))

    def log_tail(self, characters: int = 3000) -> str:
        try:
            return self.log_path.read_text(errors="replace")[-characters:]
        except OSError:
            return ""

    def stop(self) -> None:
        stop_process(self.process, grace_s=5.0)


def start_commanded(
    name: str, argv: list[str], log_path: Path, ready_timeout_s: float = 60.0
) -> CommandedProcess:
    with starting(lambda: _spawn_commanded(name, argv, log_path)) as child:
        process = child.process
        deadline = time.monotonic() + ready_timeout_s
        while time.monotonic() < deadline:
            try:
                line = child._lines.get(timeout=0.5)
            except queue.Empty:
                if process.poll() is not None:
                    raise SandboxError(
                        f"the {name} exited with {process.returncode}:\n{child.log_tail()}"
                    ) from None
                continue
            if line == "READY":
                return child
            child.announcements.append(line)
        raise SandboxError(f"the {name} was not ready within {ready_timeout_s:.0f} s:\n{child.log_tail()}")


def _pump(process: subprocess.Popen[str], lines: queue.Queue[str]) -> None:
    assert process.stdout is not None
    for line in process.stdout:
        lines.put(line.rstrip("\n"))


def _spawn_commanded(name: str, argv: list[str], log_path: Path) -> CommandedProcess:
    log = open(log_path, "w")  # noqa: SIM115 - the child keeps writing to it
    process = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=log,
        text=True,
        # Its own session: a Ctrl-C in the terminal reaches kafkadiag, which stops it by PID.
        start_new_session=True,
    )
    log.close()
    child = CommandedProcess(name, process, log_path)
    threading.Thread(target=_pump, args=(process, child._lines), name=f"{name}-stdout", daemon=True).start()
    return child
