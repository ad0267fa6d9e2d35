"""Run kafkadiag's JMX client (jmxclient/JmxDump.java) and return what it read.

The client ships as Java source (package data). Launching it as `java JmxDump.java` compiles it
in memory on every run, about 3 s on a 2-core machine; so it is compiled once with javac into
kafkadiag's cache (keyed by the source's hash and the java version) and started from there, about
0.3 s of JVM start. Without javac or a writable cache the source launch is used.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from importlib import resources
from typing import Any

from kafkadiag import boundedjson
from kafkadiag.collect.jmx.errors import (
    JavaNotFoundError,
    JmxAuthenticationError,
    JmxUnreachableError,
    JvmGoneError,
    MetricsSourceError,
)

CLIENT_CLASS = "JmxDump"
CLIENT_SOURCE = "JmxDump.java"
# A small, short-lived client: C1 only, serial GC, no perfdata file of its own.
CLIENT_JVM_OPTIONS = ("-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", "-Xmx128m", "-XX:-UsePerfData")
EXIT_CONNECT, EXIT_AUTH, EXIT_BROKEN = 10, 11, 12


@dataclass(frozen=True)
class ClientRun:
    document: dict[str, Any]
    wall_ms: float


def java_tool(name: str) -> str | None:
    """A JDK tool from $JAVA_HOME/bin, else from PATH."""
    home = os.environ.get("JAVA_HOME")
    if home:
        candidate = os.path.join(home, "bin", name)
        if os.access(candidate, os.X_OK):
            return candidate
    return shutil.which(name)


def _source_resource() -> Any:
    return resources.files("kafkadiag.collect.jmx").joinpath("jmxclient").joinpath(CLIENT_SOURCE)


def _cache_root() -> str:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return os.path.join(base, "kafkadiag", "jmxclient")


def _java_identity(java: str) -> str:
    """Which JDK: its real path and modification time (asking `java -version` costs a JVM start)."""
    real = os.path.realpath(java)
    try:
        return f"{real}:{os.stat(real).st_mtime_ns}"
    except OSError:
        return real


def client_command(java: str) -> list[str]:
    """argv prefix that starts JmxDump: the cached compiled class, or the source launch."""
    source = _source_resource().read_bytes()
    javac = java_tool("javac")
    if javac is not None:
        key = hashlib.sha256(source + _java_identity(java).encode()).hexdigest()[:16]
        directory = os.path.join(_cache_root(), key)
        if not os.path.exists(os.path.join(directory, CLIENT_CLASS + ".class")):
            with contextlib.suppress(OSError, subprocess.SubprocessError):
                _compile(javac, source, directory)
        if os.path.exists(os.path.join(directory, CLIENT_CLASS + ".class")):
            return [java, *CLIENT_JVM_OPTIONS, "-cp", directory, CLIENT_CLASS]
    with resources.as_file(_source_resource()) as path:
        return [java, *CLIENT_JVM_OPTIONS, str(path)]


def _compile(javac: str, source: bytes, directory: str) -> None:
    """Compile into a fresh directory, then rename it into place: concurrent runs never see half."""
    parent = os.path.dirname(directory)
    os.makedirs(parent, exist_ok=True)
    work = tempfile.mkdtemp(prefix=".build-", dir=parent)
    try:
        with open(os.path.join(work, CLIENT_SOURCE), "wb") as handle:
            handle.write(source)
        subprocess.run(
            [javac, "-nowarn", "-d", work, os.path.join(work, CLIENT_SOURCE)],
            capture_output=True,
            timeout=120,
            check=True,
        )
        try:
            os.rename(work, directory)
        except OSError:
            pass  # another kafkadiag compiled it first
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_client(
    url: str,
    patterns: list[tuple[str, tuple[str, ...] | None]],
    system_properties: list[str],
    thread_prefixes: list[str],
    timeout_s: float,
    describe: str,
) -> ClientRun:
    """Read `url` with JmxDump: each pattern with the attributes to read (None: all); raise a
    MetricsSourceError saying what failed and what to do."""
    import time

    java = java_tool("java")
    if java is None:
        raise JavaNotFoundError("no java found on PATH or in $JAVA_HOME/bin")
    argv = client_command(java) + ["--url", url, "--timeout-ms", str(int(timeout_s * 1000))]
    for pattern, attributes in patterns:
        argv += ["--attributes", ",".join(attributes) if attributes else "*", "--pattern", pattern]
    for name in system_properties:
        argv += ["--system-property", name]
    for prefix in thread_prefixes:
        argv += ["--thread-prefix", prefix]
    started = time.monotonic()
    try:
        # The JVM start and RMI connect come on top of the timeout given to RMI itself.
        completed = subprocess.run(argv, capture_output=True, timeout=timeout_s + 20, check=False)
    except subprocess.TimeoutExpired:
        raise JmxUnreachableError(f"{describe}: no answer within {timeout_s + 20:g}s") from None
    except OSError as error:
        raise JavaNotFoundError(f"cannot run {java}: {error.strerror or error}") from None
    wall_ms = (time.monotonic() - started) * 1000
    stdout = completed.stdout.decode("utf-8", "replace").strip()
    try:
        document: dict[str, Any] = boundedjson.loads(stdout.splitlines()[-1]) if stdout else {}
    except ValueError:
        document = {}
    if completed.returncode == 0 and "beans" in document:
        return ClientRun(document, wall_ms)
    failure = document.get("error") or {}
    message = failure.get("message") or completed.stderr.decode("utf-8", "replace").strip()[-500:]
    if completed.returncode == EXIT_AUTH:
        raise JmxAuthenticationError(f"{describe}: authentication refused ({message})")
    if completed.returncode == EXIT_BROKEN:
        raise JvmGoneError(f"{describe}: the connection broke during the read ({message})")
    if completed.returncode == EXIT_CONNECT:
        raise JmxUnreachableError(f"{describe}: cannot connect ({message})")
    raise MetricsSourceError(
        f"{describe}: the JMX client failed with exit code {completed.returncode} ({message})",
        help_text="This looks like a bug in kafkadiag's JMX client; please report it with this message.",
    )
