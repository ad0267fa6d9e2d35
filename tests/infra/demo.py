"""`kafkadiag demo` run as the installed command would run it, in its own process, with every
process it starts recorded while it is the demo's descendant: the tests then check that none is
left, also the ones whose pid the demo never prints (a broker still starting, Kafka's TopicCommand,
javac, Maven, jstack)."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import threading
import time

import psutil

from tests.conftest import REPO


def alive(pids: list[int]) -> list[int]:
    living = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                living.append(pid)
        except psutil.NoSuchProcess:
            pass
    return living


class Demo:
    """A `kafkadiag demo` process; its stdout (the diagnosis) and stderr (the progress) collected."""

    def __init__(self, *arguments: str, env: dict[str, str] | None = None) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "kafkadiag", "demo", *arguments],
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO, env=env,
        )  # fmt: skip
        self.lines: list[str] = []
        self.output: list[str] = []
        self._readers = [
            threading.Thread(target=self._read, args=(self.process.stderr, self.lines), daemon=True),
            threading.Thread(target=self._read, args=(self.process.stdout, self.output), daemon=True),
        ]
        for reader in self._readers:
            reader.start()
        self.children: set[int] = set()
        self._watcher = threading.Thread(target=self._watch, daemon=True)
        self._watcher.start()

    def _watch(self) -> None:
        try:
            demo = psutil.Process(self.process.pid)
            while self.process.poll() is None:
                self.children.update(child.pid for child in demo.children(recursive=True))
                time.sleep(0.01)
        except psutil.NoSuchProcess:
            pass

    @staticmethod
    def _read(stream: object, lines: list[str]) -> None:
        for line in stream:  # type: ignore[attr-defined]
            lines.append(line.rstrip("\n"))

    @property
    def progress(self) -> str:
        return "\n".join(self.lines)

    @property
    def stdout(self) -> str:
        return "\n".join(self.output)

    def wait_for(self, pattern: str, timeout_s: float = 300) -> None:
        deadline = time.monotonic() + timeout_s
        while not re.search(pattern, self.progress):
            assert self.process.poll() is None, f"the demo ended first:\n{self.progress}"
            assert time.monotonic() < deadline, f"no {pattern!r} within {timeout_s}s:\n{self.progress}"
            time.sleep(0.1)

    def pids(self) -> list[int]:
        """The pids the demo printed: the servers and the consumer it started."""
        return list(dict.fromkeys(int(pid) for pid in re.findall(r"\(pid (\d+)\)", self.progress)))

    def finish(self, timeout_s: float = 300) -> int:
        try:
            code = self.process.wait(timeout=timeout_s)
        finally:
            self.kill_if_running()
        self._join()
        return code

    def interrupt(self, timeout_s: float = 60) -> int:
        """Ctrl-C, as a terminal sends it."""
        self.process.send_signal(signal.SIGINT)
        try:
            code = self.process.wait(timeout=timeout_s)
        finally:
            self.kill_if_running()
        self._join()
        return code

    def kill_if_running(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait()

    def _join(self) -> None:
        for reader in self._readers:
            reader.join(timeout=5)
        self._watcher.join(timeout=5)

    def left_behind(self) -> list[int]:
        """Every process the demo started (printed or seen as its descendant) that still runs."""
        return alive(sorted(set(self.pids()) | self.children))
