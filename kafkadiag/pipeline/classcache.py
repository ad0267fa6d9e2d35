"""A class-data sharing archive for the Spark driver's JVM, kept between batch runs.

Most of a small batch run is the JVM loading Spark's classes: on 2 cores, a local session takes
4.5 s to start and the first Parquet write 2.6 s; with the classes mapped from an archive, 2.5 s
and 1.2 s. The first run on a machine writes the archive when its JVM exits
(`-XX:ArchiveClassesAtExit`, JDK 13+) to a temporary name; a later run adopts it once that JVM is
gone and starts with `-XX:SharedArchiveFile`. The JVM checks the archive against its own version
and class path and ignores one that does not match (`-Xshare:auto`), so a stale or broken archive
costs nothing but the time saved.

The archive takes about 170 MB in `$KAFKADIAG_CACHE_DIR` (default `$XDG_CACHE_HOME/kafkadiag`, or
`~/.cache/kafkadiag`); `KAFKADIAG_SPARK_CLASS_CACHE=0` turns it off.
"""

from __future__ import annotations

import hashlib
import os
import re
import shutil
from pathlib import Path

# Dynamic archives (ArchiveClassesAtExit) exist from JDK 13 on.
MINIMUM_JAVA = 13
# The JVM prints archive warnings (classes it cannot archive, a mismatched archive) on stdout,
# which would mix with kafkadiag's output.
QUIET = ("-Xlog:cds=off", "-Xlog:cds+dynamic=off")
_PENDING = ".pending-"


def driver_java_options(environment: dict[str, str] | None = None) -> tuple[list[str], Path | None]:
    """The driver JVM options to use or to write the archive, and the temporary path being
    written by this run (whose JVM pid `record_writer` must note), if any."""
    environment = dict(os.environ if environment is None else environment)
    if environment.get("KAFKADIAG_SPARK_CLASS_CACHE", "1") == "0":
        return [], None
    java_home = _java_home(environment)
    if java_home is None or (_java_feature_version(java_home) or 0) < MINIMUM_JAVA:
        return [], None
    archive = _cache_dir(environment) / f"spark-driver-{_fingerprint(java_home)}.jsa"
    _adopt_finished(archive)
    if archive.exists():
        return [f"-XX:SharedArchiveFile={archive}", "-Xshare:auto", *QUIET], None
    if _writer_running(archive):
        return [], None
    try:
        archive.parent.mkdir(parents=True, exist_ok=True)
    except OSError:
        return [], None  # no writable cache: start as usual
    pending = archive.with_name(f"{archive.name}{_PENDING}{os.getpid()}")
    return [f"-XX:ArchiveClassesAtExit={pending}", *QUIET], pending


def record_writer(pending: Path, jvm_pid: int) -> None:
    """Note which JVM writes `pending`: a later run adopts the file once that process is gone."""
    try:
        pending.with_name(pending.name + ".pid").write_text(str(jvm_pid))
    except OSError:
        pass


def _pending_archives(archive: Path) -> list[Path]:
    """Archives being (or having been) written for `archive` by runs' JVMs, not their pid markers."""
    return sorted(archive.parent.glob(f"{archive.name}{_PENDING}*[0-9]"))


def _adopt_finished(archive: Path) -> None:
    for pending in _pending_archives(archive):
        writer = _writer_pid(pending)
        if writer is not None and _alive(writer):
            continue
        marker = pending.with_name(pending.name + ".pid")
        try:
            if writer is not None and pending.stat().st_size > 0 and not archive.exists():
                os.replace(pending, archive)
            else:
                pending.unlink()
            marker.unlink(missing_ok=True)
        except OSError:
            continue


def _writer_running(archive: Path) -> bool:
    pids = (_writer_pid(path) for path in _pending_archives(archive))
    return any(pid is not None and _alive(pid) for pid in pids)


def _writer_pid(pending: Path) -> int | None:
    try:
        return int(pending.with_name(pending.name + ".pid").read_text().strip())
    except (OSError, ValueError):
        return None


def _alive(pid: int) -> bool:
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _cache_dir(environment: dict[str, str]) -> Path:
    if environment.get("KAFKADIAG_CACHE_DIR"):
        return Path(environment["KAFKADIAG_CACHE_DIR"])
    base = environment.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "kafkadiag"


def _java_home(environment: dict[str, str]) -> Path | None:
    """The JDK Spark's launcher runs: JAVA_HOME's, else the `java` on PATH."""
    if environment.get("JAVA_HOME"):
        return Path(environment["JAVA_HOME"]).resolve()
    java = shutil.which("java", path=environment.get("PATH"))
    return Path(java).resolve().parent.parent if java else None


def _java_feature_version(java_home: Path) -> int | None:
    try:
        release = (java_home / "release").read_text(errors="replace")
    except OSError:
        return None
    match = re.search(r'^JAVA_VERSION="(?:1\.)?(\d+)', release, re.MULTILINE)
    return int(match.group(1)) if match else None


def _fingerprint(java_home: Path) -> str:
    """One archive per JDK and Spark installation (the JVM checks the details itself)."""
    import pyspark

    spark_jars = Path(pyspark.__file__).parent / "jars"
    parts = [str(java_home), _mtime(java_home / "release"), str(spark_jars), _mtime(spark_jars)]
    return hashlib.sha1("\n".join(parts).encode()).hexdigest()[:16]


def _mtime(path: Path) -> str:
    try:
        return str(path.stat().st_mtime_ns)
    except OSError:
        return "-"
