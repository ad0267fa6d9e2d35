"""The Spark driver's class-data archive: written by a first batch run's JVM as it exits,
adopted by the next run, ignored when it cannot apply; on real runs and on JDK homes built here."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import psutil

from kafkadiag.exitcodes import ExitCode
from kafkadiag.pipeline.classcache import driver_java_options, record_writer
from tests.conftest import CAPTURED


def jdk(tmp_path: Path, version: str) -> Path:
    home = tmp_path / f"jdk-{version}"
    home.mkdir()
    (home / "release").write_text(f'IMPLEMENTOR="Test"\nJAVA_VERSION="{version}"\n')
    return home


def environment(tmp_path: Path, home: Path, **extra: str) -> dict[str, str]:
    return {"JAVA_HOME": str(home), "KAFKADIAG_CACHE_DIR": str(tmp_path / "cache"), "PATH": "", **extra}


def test_a_first_run_writes_the_archive_and_the_next_one_maps_it(tmp_path: Path) -> None:
    env = environment(tmp_path, jdk(tmp_path, "17.0.15"))
    options, pending = driver_java_options(env)
    assert pending is not None and options[0] == f"-XX:ArchiveClassesAtExit={pending}"
    assert "-Xlog:cds=off" in options  # the JVM's archive warnings would land on stdout
    # while the writing JVM lives, nobody else writes or maps anything
    record_writer(pending, os.getpid())
    pending.write_bytes(b"half-written")
    assert driver_java_options(env) == ([], None)
    # once it is gone, the next run adopts the file and maps it
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait()
    record_writer(pending, gone.pid)
    options, again = driver_java_options(env)
    archive = pending.with_name(pending.name.split(".pending-")[0])
    assert again is None and options[:2] == [f"-XX:SharedArchiveFile={archive}", "-Xshare:auto"]
    assert archive.read_bytes() == b"half-written" and not pending.exists()
    assert sorted(p.name for p in archive.parent.iterdir()) == [archive.name]


def test_a_pending_archive_without_a_known_writer_is_dropped(tmp_path: Path) -> None:
    env = environment(tmp_path, jdk(tmp_path, "21"))
    _, pending = driver_java_options(env)
    assert pending is not None
    pending.write_bytes(b"x")  # its JVM never recorded itself: nothing says it finished
    options, fresh = driver_java_options(env)
    assert not pending.exists() and fresh is not None and options[0].startswith("-XX:ArchiveClassesAtExit=")


def test_old_jdks_an_unknown_jdk_and_the_switch_leave_the_jvm_alone(tmp_path: Path) -> None:
    assert driver_java_options(environment(tmp_path, jdk(tmp_path, "1.8.0_392"))) == ([], None)
    assert driver_java_options(environment(tmp_path, jdk(tmp_path, "11.0.2"))) == ([], None)
    assert driver_java_options(environment(tmp_path, tmp_path / "no-such-jdk")) == ([], None)
    off = environment(tmp_path, jdk(tmp_path, "17"), KAFKADIAG_SPARK_CLASS_CACHE="0")
    assert driver_java_options(off) == ([], None)
    # a cache directory that cannot be made: start as usual
    blocker = tmp_path / "file"
    blocker.write_text("")
    unwritable = {**environment(tmp_path, jdk(tmp_path, "25")), "KAFKADIAG_CACHE_DIR": str(blocker / "c")}
    assert driver_java_options(unwritable) == ([], None)


def batch_process(inputs: list[str], out: Path, cache: Path) -> subprocess.CompletedProcess[str]:
    """A batch run in a process of its own: its JVM exits (and writes the archive) when it ends."""
    return subprocess.run(
        [sys.executable, "-m", "kafkadiag", "batch", *inputs, "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "KAFKADIAG_CACHE_DIR": str(cache)},
    )


def test_real_runs_write_then_use_the_archive_with_the_same_results(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    inputs = [str(CAPTURED / "real-old-consumer-stall-0.8.2.2"), str(CAPTURED / "deadlock")]
    first = batch_process(inputs, tmp_path / "first", cache)
    assert first.returncode == ExitCode.FINDINGS, first.stderr[-3000:]
    (marker,) = cache.glob("*.pid")
    writer = int(marker.read_text())
    deadline = time.monotonic() + 120
    while psutil.pid_exists(writer) and time.monotonic() < deadline:
        time.sleep(0.2)  # the JVM writes the archive as it exits, after the run has ended
    assert not psutil.pid_exists(writer)
    second = batch_process(inputs, tmp_path / "second", cache)
    assert second.returncode == ExitCode.FINDINGS, second.stderr[-3000:]
    assert "cds" not in second.stdout + second.stderr  # the JVM's archive messages stay quiet
    (archive,) = cache.glob("*.jsa")
    assert archive.stat().st_size > 10_000_000 and not list(cache.glob("*.pending-*"))
    for name in ("findings.jsonl", "stuck.jsonl", "quarantine.jsonl"):
        assert (tmp_path / "first" / name).read_bytes() == (tmp_path / "second" / name).read_bytes()
