"""`kafkadiag capture`: a bundle of a consumer process's state that kafkadiag analyses offline.

A bundle is a directory:

    manifest.json        schema kafkadiag.capture v1: host, pid, user, command line, runtime,
                         tools and their versions, when each file was taken, what failed
    dump-001.txt ...     each thread dump exactly as the tool printed it (jstack -l or py-spy dump)
    threads-cpu-001.json per-thread CPU seconds from the kernel at that dump, by Linux thread id
                         (jstack's nid; py-spy's native thread id)
    metrics.json         the consumer's fetcher metrics over the JVM's local JMX, as read

It is written into a temporary directory beside the target and renamed into place at the end, so
a failed capture leaves nothing half-written.
"""

from __future__ import annotations

import dataclasses
import json
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from kafkadiag.collect.bundle import MANIFEST
from kafkadiag.collect.live import JVM, ThreadDumpError, jstack_for, py_spy, runtime_of, take_dump
from kafkadiag.errors import InputUnreadableError, UsageError
from kafkadiag.umask import current_umask

SCHEMA = "kafkadiag.capture"
VERSION = 1


def thread_cpu(pid: int) -> dict[str, dict[str, Any]]:
    """CPU seconds (user, system) per Linux thread id, with the kernel's thread name."""
    import psutil

    threads: dict[str, dict[str, Any]] = {}
    try:
        for thread in psutil.Process(pid).threads():
            threads[str(thread.id)] = {"user_s": thread.user_time, "system_s": thread.system_time}
    except (psutil.NoSuchProcess, psutil.AccessDenied):
        return {}
    for tid, entry in threads.items():
        try:
            with open(f"/proc/{pid}/task/{tid}/comm", encoding="utf-8", errors="replace") as handle:
                entry["comm"] = handle.read().strip()
        except OSError:
            entry["comm"] = None
    return threads


def tool_version(argv: list[str]) -> str | None:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return None
    text = (done.stdout or done.stderr).strip()
    return text.splitlines()[0] if text else None


def capture(
    pid: int,
    out_dir: str,
    count: int = 3,
    interval_s: float = 2.0,
    jstack: str | None = None,
    py_spy_path: str | None = None,
    with_metrics: bool = True,
    on_dump: Callable[[int], None] = lambda _: None,
) -> dict[str, Any]:
    """Write the bundle; return its manifest. Raises UsageError for a bad DIR or count, and
    InputUnreadableError (exit 3) when the process cannot be dumped (nothing is left behind)."""
    target = Path(out_dir)
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise UsageError(
            f"{out_dir} exists and is not an empty directory", help_text="Name a new directory with --out."
        )
    if count < 1 or interval_s < 0:
        raise UsageError("--count must be at least 1 and --interval not negative")
    manifest = _manifest(pid, jstack, py_spy_path, count, interval_s)
    parent = target.parent if str(target.parent) else Path(".")
    parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=str(parent)))
    try:
        for index in range(1, count + 1):
            if index > 1:
                time.sleep(interval_s)
            _capture_dump(pid, index, jstack, py_spy_path, staging, manifest)
            on_dump(index)
        if manifest["runtime"] == JVM and with_metrics:
            _capture_metrics(pid, staging, manifest)
        manifest["finished_at"] = time.time()
        (staging / MANIFEST).write_text(json.dumps(manifest, indent=1) + "\n", encoding="utf-8")
        _publish(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    return manifest


def _manifest(
    pid: int, jstack: str | None, py_spy_path: str | None, count: int, interval_s: float
) -> dict[str, Any]:
    """The manifest before any dump: the process, and the tool that will dump it."""
    import psutil

    runtime, exe = runtime_of(pid)
    tool = (jstack or jstack_for(exe)) if runtime == JVM else (py_spy_path or py_spy())
    try:
        process = psutil.Process(pid)
        command, user, started_at = process.cmdline(), process.username(), process.create_time()
    except (psutil.NoSuchProcess, psutil.AccessDenied) as error:
        raise ThreadDumpError(f"process {pid} cannot be read: {error}") from None
    return {
        "schema": SCHEMA,
        "version": VERSION,
        "host": socket.gethostname(),
        "pid": pid,
        "user": user,
        "command": command,
        "runtime": runtime,
        "process_started_at": started_at,
        "tool": {
            "path": tool,
            # A JVM's version is in its dump's banner (read below): no second JVM is started for it.
            "version": None if runtime == JVM else tool_version([tool, "--version"]),
        },
        "count": count,
        "interval_s": interval_s,
        "dumps": [],
        "failures": [],
    }


def _capture_dump(
    pid: int, index: int, jstack: str | None, py_spy_path: str | None, staging: Path, manifest: dict[str, Any]
) -> None:
    """Dump number `index` and the threads' CPU times at it, written and listed in the manifest."""
    taken_at = time.time()
    # The CPU times are read while the tool dumps: they describe the same moment, and the
    # capture takes no longer than the dump itself.
    with ThreadPoolExecutor(max_workers=1) as background:
        dumping = background.submit(take_dump, pid, jstack=jstack, py_spy_path=py_spy_path)
        cpu = thread_cpu(pid)
        dump = dumping.result()
    name = f"dump-{index:03d}.txt"
    (staging / name).write_text(dump.text, encoding="utf-8")
    cpu_name = f"threads-cpu-{index:03d}.json"
    (staging / cpu_name).write_text(json.dumps(cpu, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    manifest["dumps"].append({"file": name, "taken_at": taken_at, "tool": dump.tool, "threads_cpu": cpu_name})
    if manifest["tool"]["version"] is None:
        manifest["tool"]["version"] = _banner(dump.text)


def _publish(staging: Path, target: Path) -> None:
    """The finished bundle renamed into place, with the modes the umask gives new files."""
    for path in staging.iterdir():
        path.chmod(0o644 & ~current_umask())
    if target.exists():
        target.rmdir()
    # mkdtemp makes the directory 0700: the bundle gets what the umask gives a new directory.
    staging.chmod(0o777 & ~current_umask())
    staging.rename(target)


def _banner(text: str) -> str | None:
    """The JVM as its dump names it: "OpenJDK 64-Bit Server VM (17.0.15+6-Debian-1deb12u1 mixed mode)"."""
    for line in text.splitlines()[:5]:
        if line.startswith("Full thread dump"):
            return line.removeprefix("Full thread dump ").rstrip(":")
    return None


def _capture_metrics(pid: int, staging: Path, manifest: dict[str, Any]) -> None:
    """The fetcher metrics as read; a JVM whose agent cannot be reached is a noted failure, not fatal."""
    from kafkadiag.collect.jmx.jvm import read_local_jvm

    try:
        reading = read_local_jvm(pid, 10.0, True)
    except InputUnreadableError as error:
        manifest["failures"].append({"what": "metrics", "error": error.message})
        return
    (staging / "metrics.json").write_text(
        json.dumps(dataclasses.asdict(reading), indent=1, default=str) + "\n", encoding="utf-8"
    )
    manifest["metrics"] = "metrics.json"
