"""The maxlag reproducer (fixtures/java/com/example/MaxLagConsumerApp.java), run for real.

It is compiled from its own sources only (the replica classes under com/example/maxlag), so other
reproducers being edited cannot break these tests, against Yammer Metrics 2.2's own jar
(metrics-core-2.2.0 and slf4j-api, taken from Apache Kafka 0.8.2.2's release), whose JmxReporter
publishes the MBeans as it does in a real old consumer. Each process is driven through stdin
commands and stopped by its PID.
"""

from __future__ import annotations

import contextlib
import json
import os
import queue
import shutil
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

FIXTURES_JAVA = Path(__file__).resolve().parents[2] / "fixtures" / "java"
SOURCES = (
    "com/example/MaxLagConsumerApp.java",
    "com/example/maxlag/MetricNames.java",
    "com/example/maxlag/OldConsumerReplica.java",
    "com/example/maxlag/YammerMetrics.java",
)
MAIN_CLASS = "com.example.MaxLagConsumerApp"
# Beside the classes, so that a reproducer run as another user (`nobody`) can read them too.
JARS = "lib"


def metrics_jars() -> list[Path]:
    """metrics-core and its slf4j-api, from Apache Kafka 0.8.2.2's release (fetched once)."""
    from kafkadiag.sandbox import kafka_release

    jars = [
        jar
        for jar in kafka_release.release_jars("0.8.2.2")
        if jar.name.startswith(("metrics-core-", "slf4j-api-"))
    ]
    assert len(jars) == 2, jars
    return jars


def classpath(classes: Path) -> str:
    return os.pathsep.join([str(classes), *sorted(str(jar) for jar in (classes / JARS).glob("*.jar"))])


def compile_reproducer(classes: Path) -> Path:
    javac = shutil.which("javac")
    assert javac, "javac is not on PATH: the maxlag tests need a JDK"
    classes.mkdir(parents=True, exist_ok=True)
    (classes / JARS).mkdir(exist_ok=True)
    for jar in metrics_jars():
        shutil.copyfile(jar, classes / JARS / jar.name)
    subprocess.run(
        [
            javac, "--release", "17", "-cp", classpath(classes), "-d", str(classes),
            *(str(FIXTURES_JAVA / source) for source in SOURCES),
        ],
        check=True,
        capture_output=True,
        timeout=180,
    )  # fmt: skip
    # Readable by every user: one test runs the reproducer as `nobody`.
    for path in [classes, *classes.rglob("*")]:
        path.chmod(0o755 if path.is_dir() else 0o644)
    return classes


@dataclass
class Reproducer:
    """A running MaxLagConsumerApp: send commands, read its status, stop it by PID."""

    process: subprocess.Popen[str]
    consumer_id: str
    argv: list[str]
    lines: queue.Queue[str] = field(default_factory=queue.Queue)
    output: list[str] = field(default_factory=list)

    @property
    def pid(self) -> int:
        return self.process.pid

    def _reader(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.output.append(line.rstrip("\n"))
            self.lines.put(line.rstrip("\n"))

    def command(self, text: str, timeout_s: float = 20.0) -> str:
        assert self.process.stdin is not None
        self.process.stdin.write(text + "\n")
        self.process.stdin.flush()
        deadline = time.monotonic() + timeout_s
        while True:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise AssertionError(f"no answer to {text!r}; output so far: {self.output[-20:]}")
            line = self.lines.get(timeout=remaining)
            if line.startswith(("OK", "STATUS", "ERROR")):
                if line.startswith("ERROR"):
                    raise AssertionError(f"{text!r} -> {line}")
                return line

    def status(self) -> dict[str, Any]:
        document: dict[str, Any] = json.loads(self.command("status")[len("STATUS ") :])
        return document

    def partition(self, topic: str, partition: int) -> dict[str, Any]:
        (found,) = [
            entry
            for entry in self.status()["partitions"]
            if entry["topic"] == topic and entry["partition"] == partition
        ]
        return found

    def wait_for(
        self, predicate: Callable[[dict[str, Any]], bool], what: str, timeout_s: float = 30.0
    ) -> dict[str, Any]:
        deadline = time.monotonic() + timeout_s
        status = self.status()
        while not predicate(status):
            if time.monotonic() > deadline:
                raise AssertionError(f"reproducer never reached: {what}\nlast status: {status}")
            time.sleep(0.05)
            status = self.status()
        return status

    def stop(self) -> None:
        if self.process.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                os.kill(self.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            self.process.wait(timeout=10)


def start_reproducer(
    classes: Path,
    group: str,
    topics: Sequence[str],
    settings: dict[str, str] | None = None,
    extra_args: Sequence[str] = (),
    jvm_options: Sequence[str] = (),
    user: int | None = None,
    ready_timeout_s: float = 30.0,
) -> Reproducer:
    """Start MaxLagConsumerApp and wait for READY; `user` runs it as that uid (via setpriv)."""
    java = shutil.which("java")
    assert java, "java is not on PATH"
    argv = [java, "-Xmx96m", "-XX:+UseSerialGC"]
    for key, value in (settings or {}).items():
        argv.append(f"-D{key}={value}")
    argv += [*jvm_options, "-cp", classpath(classes), MAIN_CLASS, "--group", group]
    for topic in topics:
        argv += ["--topic", topic]
    argv += list(extra_args)
    if user is not None:
        argv = ["setpriv", f"--reuid={user}", f"--regid={user}", "--clear-groups", *argv]
    process = subprocess.Popen(
        argv,
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        bufsize=1,
        cwd="/tmp",
    )
    reproducer = Reproducer(process, "", argv)
    threading.Thread(target=reproducer._reader, daemon=True).start()
    deadline = time.monotonic() + ready_timeout_s
    while True:
        remaining = deadline - time.monotonic()
        try:
            line = reproducer.lines.get(timeout=max(remaining, 0.01))
        except queue.Empty:
            reproducer.stop()
            raise AssertionError(f"reproducer not READY in {ready_timeout_s}s: {reproducer.output}") from None
        if line.startswith("CONSUMER "):
            reproducer.consumer_id = line.split(" ", 1)[1]
        if line == "READY":
            return reproducer
        if process.poll() is not None:
            raise AssertionError(f"reproducer exited: {reproducer.output}")
