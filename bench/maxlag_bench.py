"""MaxLag benchmark: the time to read one consumer JVM's metrics, by PID and over remote JMX.

    .venv/bin/python bench/maxlag_bench.py [--runs 7] [--partitions 8,1000]

Starts the maxlag reproducer (fixtures/java/com/example/MaxLagConsumerApp.java; a real JVM with
the old consumer's MBeans) with the JDK's remote JMX agent on a free 127.0.0.1 port, and times:

  pid-first   the first read by PID of a fresh JVM: perf counters, `jcmd PID ManagementAgent.start_local`,
              then the JMX client (a new JVM per run, so each run starts the agent)
  pid         later reads by PID (agent running: address from the perf counters, no jcmd)
  jmx         reads over remote JMX (host:port)
  cli-pid     a whole `kafkadiag maxlag --pid PID --format json` process (metrics only)
  cli-jmx     a whole `kafkadiag maxlag --jmx HOST:PORT --format json` process

for a consumer with 8 partitions (2 streams) and one with 1,000 partitions (10 streams), and
prints median, min and max with the client's own breakdown (JVM start + RMI connect + read).
The one-off compile of the JMX client into the cache is timed once, separately. The machine's
load average is printed: the numbers are only comparable at similar load. Every JVM is stopped
by PID.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from kafkadiag.collect.jmx import jvm as jmx  # noqa: E402
from kafkadiag.collect.jmx.client import client_command, java_tool  # noqa: E402
from tests.infra.servers import free_port  # noqa: E402
from tests.maxlag.reproducer import Reproducer, compile_reproducer, start_reproducer  # noqa: E402
from tests.maxlag.test_jmx_remote import remote_jmx_options  # noqa: E402

SETTINGS = {
    "queued.max.message.chunks": "2",
    "fetch.message.max.bytes": "1500",
    "auto.commit.interval.ms": "1000",
}


def summary(name: str, seconds: list[float], extra: str = "") -> None:
    print(
        f"  {name:<10} median {statistics.median(seconds) * 1000:7.0f} ms   "
        f"min {min(seconds) * 1000:7.0f} ms   max {max(seconds) * 1000:7.0f} ms   runs {len(seconds)}{extra}"
    )


def breakdown(readings: list[jmx.MetricsReading]) -> str:
    parts = []
    for key in ("attach_ms", "client_ms", "connect_ms", "read_ms"):
        values = [reading.timing(key) for reading in readings]
        known = [value for value in values if value is not None]
        if known:
            parts.append(f"{key.removesuffix('_ms')} {statistics.median(known):.0f}")
    return "   [median ms: " + ", ".join(parts) + "]" if parts else ""


def start(classes: Path, partitions: int, streams: int, port: int | None) -> Reproducer:
    """The reproducer; with a port, the remote JMX agent too (which also starts the local
    connector, so a read by PID then needs no jcmd)."""
    reproducer = start_reproducer(
        classes,
        f"bench{partitions}",
        [f"orders:{partitions}:{streams}"],
        SETTINGS,
        ["--hw", "orders:0:10"],
        jvm_options=remote_jmx_options(port) if port is not None else [],
    )
    # Wait until every partition has a ConsumerLag gauge (created on the first fetch response).
    reproducer.wait_for(lambda s: all(p["fetcher_lag"] >= 0 for p in s["partitions"]), "first fetch done", 60)
    return reproducer


def cli(args: list[str]) -> float:
    started = time.perf_counter()
    completed = subprocess.run(
        [sys.executable, "-m", "kafkadiag", "maxlag", *args, "--format", "json"],
        capture_output=True,
        cwd=REPO,
        timeout=120,
        check=False,
    )
    elapsed = time.perf_counter() - started
    if completed.returncode not in (0, 1):
        raise SystemExit(f"kafkadiag maxlag failed ({completed.returncode}):\n{completed.stderr.decode()}")
    return elapsed


def bench(classes: Path, partitions: int, streams: int, runs: int) -> None:
    print(f"\n{partitions} partitions, {streams} streams")
    first: list[float] = []
    first_readings: list[jmx.MetricsReading] = []
    for _ in range(runs):
        reproducer = start(classes, partitions, streams, None)
        try:
            started = time.perf_counter()
            first_readings.append(jmx.read_local_jvm(reproducer.pid, timeout_s=30))
            first.append(time.perf_counter() - started)
        finally:
            reproducer.stop()
    summary("pid-first", first, breakdown(first_readings))

    port = free_port()
    reproducer = start(classes, partitions, streams, port)
    try:
        jmx.read_local_jvm(reproducer.pid, timeout_s=30)  # the agent now runs
        beans = 0
        for name, read in (
            ("pid", lambda: jmx.read_local_jvm(reproducer.pid, timeout_s=30)),
            ("jmx", lambda: jmx.read_remote_jmx(f"127.0.0.1:{port}", timeout_s=30)),
        ):
            times, readings = [], []
            for _ in range(runs):
                started = time.perf_counter()
                reading = read()
                times.append(time.perf_counter() - started)
                readings.append(reading)
                beans = len(reading.beans)
            summary(name, times, breakdown(readings) + f"   beans {beans}")
        summary("cli-pid", [cli(["--pid", str(reproducer.pid)]) for _ in range(runs)])
        summary("cli-jmx", [cli(["--jmx", f"127.0.0.1:{port}"]) for _ in range(runs)])
    finally:
        reproducer.stop()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--partitions", default="8,1000", help="comma-separated partition counts")
    options = parser.parse_args()
    java = java_tool("java")
    if java is None or shutil.which("jcmd") is None:
        raise SystemExit("needs a JDK (java, javac, jcmd) on PATH")
    work = Path(tempfile.mkdtemp(prefix="kafkadiag-maxlag-bench-"))
    previous_cache = os.environ.get("XDG_CACHE_HOME")
    os.environ["XDG_CACHE_HOME"] = str(work / "cache")
    try:
        version = subprocess.run([java, "-version"], capture_output=True, text=True).stderr.splitlines()[0]
        print(f"{version}; {os.cpu_count()} CPUs; load average {os.getloadavg()[0]:.2f} at start")
        started = time.perf_counter()
        client_command(java)
        compile_ms = (time.perf_counter() - started) * 1000
        print(f"one-off: compiling the JMX client into the cache took {compile_ms:.0f} ms")
        classes = compile_reproducer(work / "classes")
        for count in (int(value) for value in options.partitions.split(",")):
            bench(classes, count, max(1, min(10, count // 4)), options.runs)
        print(f"\nload average {os.getloadavg()[0]:.2f} at the end")
    finally:
        if previous_cache is None:
            os.environ.pop("XDG_CACHE_HOME", None)
        else:
            os.environ["XDG_CACHE_HOME"] = previous_cache
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
