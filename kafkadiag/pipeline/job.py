"""`kafkadiag batch`: the Spark job.

How the work is split: the driver lists the inputs (`units`: a dump file, a capture bundle or a
lag snapshot file) and hands Spark at most four batches of units per core, of about equal bytes,
so a task's start-up is paid once for many files and no core waits for the big dumps. Each task
parses and analyses its units with kafkadiag's own code (`work`). One shuffle takes each unit's
result towards the driver and each stuck-thread row to the rows of its process; lag rows are
shuffled by (group, topic, partition). Lag snapshot files are read by Spark's own JSON reader and
evaluated in SQL: no Python runs on that path. On a cluster, more executors take more batches;
the inputs must be readable from every executor (a shared filesystem, HDFS, S3).
"""

from __future__ import annotations

import heapq
import os
import shutil
import tempfile
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kafkadiag.console import say
from kafkadiag.errors import OutputUnwritableError, UsageError
from kafkadiag.pipeline import lag_sql, outputs, stuck
from kafkadiag.pipeline.progress import SparkProgress
from kafkadiag.pipeline.units import BUNDLE, DUMP, LAG, Unit, expand_local, is_url
from kafkadiag.pipeline.work import analyze_remote_unit, analyze_unit

SLICES_PER_CORE = 4
# A batch carries at least this many bytes of input (about a third of a second of parsing and
# analysis on one core): below it a task's own cost (scheduling, serialising its closure and
# result, one more shuffle partition) outweighs the core it would add.
MIN_BATCH_BYTES = 4 * 1024 * 1024
# Inputs below this size finish before the JVM's optimising compiler pays back: the driver runs
# with the quick compiler only (docs/batch.md, "Start-up").
QUICK_START_BYTES = 64 * 1024 * 1024
# Spark's own output (the JVM's warnings, its log lines, the Python workers' stderr), in --out.
SPARK_LOG = "spark.log"
# What a failed run shows of that log, since the results directory it was in is not kept.
FAILED_LOG_LINES = 20


@dataclass(frozen=True)
class BatchResult:
    out_dir: str
    units: int
    dumps: int
    findings: int
    quarantined: int
    lag_rows: int
    worst_severity: str | None


def run_batch(
    inputs: Sequence[str],
    out_dir: str,
    master: str | None = None,
    conf: Sequence[tuple[str, str]] = (),
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    show_progress: bool = False,
) -> BatchResult:
    target = out_directory(out_dir)
    # Made before the job: a parent that cannot be written to is said now, not after an hour.
    staging = _staging_beside(target, out_dir)
    try:
        local_units, missing = expand_local([path for path in inputs if not is_url(path)])
        remote_inputs = [path for path in inputs if is_url(path)]
        from kafkadiag.pipeline.session import start_session

        session = start_session(
            master,
            conf,
            quick_start=wants_quick_start(local_units, remote_inputs),
            log_path=staging / SPARK_LOG,
        )
        context = session.sparkContext
        try:
            with SparkProgress(context, show_progress) as progress:
                remote_units = list_remote(session, remote_inputs, missing)
                units = sorted(local_units + remote_units, key=lambda unit: unit.path)
                progress.phase(f"analysing {sum(u.kind != LAG for u in units):,} dump inputs")
                analysed = _analyse_dumps(session, [u for u in units if u.kind != LAG], select, ignore)
                progress.phase(f"reading {sum(u.kind == LAG for u in units):,} lag histories")
                lag_result = _read_lags(session, [u for u in units if u.kind == LAG])
                progress.phase("writing results")
                counts = outputs.write_all(
                    session,
                    staging,
                    analysed.results,
                    analysed.episodes,
                    lag_result,
                    missing,
                    units=len(units),
                )
        finally:
            session.stop()
    except Exception:
        _show_spark_log(staging / SPARK_LOG)
        shutil.rmtree(staging, ignore_errors=True)
        raise
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    _move_into_place(staging, target)
    return BatchResult(out_dir=out_dir, **counts)


def out_directory(out_dir: str) -> Path:
    """Where the results go, checked before the job runs: a new directory, or an empty one. A
    symlink stands for the directory it names (an empty one is filled; the link stays a link);
    one that names nothing is refused, as is anything that is not an empty directory."""
    target = Path(out_dir)
    if target.is_symlink():
        resolved = Path(os.path.realpath(target))
        if not resolved.exists():
            raise UsageError(
                f"--out {out_dir} is a symbolic link to {resolved}, which does not exist",
                help_text="Create that directory, or name a new directory for --out.",
            )
        target = resolved
    if target.exists() and (not target.is_dir() or any(target.iterdir())):
        raise UsageError(
            f"{out_dir} exists and is not an empty directory",
            help_text="Name a new directory for --out: batch never overwrites earlier results.",
        )
    return target


def _staging_beside(target: Path, out_dir: str) -> Path:
    """The directory the results are written to, renamed to `target` when complete; made with
    the permissions the user's umask gives a new directory (mkdtemp's are the owner's only)."""
    try:
        staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", dir=str(target.parent.resolve())))
        staging.chmod(0o777 & ~_umask())
        return staging
    except OSError as error:
        raise OutputUnwritableError(
            f"cannot write the results beside {out_dir}: {error.strerror or error}",
            help_text="Name an --out directory in a folder this user can write to.",
        ) from None


def _umask() -> int:
    mask = os.umask(0o022)  # the only way to read it is to set it: set it straight back
    os.umask(mask)
    return mask


def _show_spark_log(log_path: Path) -> None:
    """The last lines of Spark's log of a run that failed, on stderr: they often say why."""
    try:
        lines = log_path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:
        return
    for line in lines[-FAILED_LOG_LINES:]:
        say(f"spark: {line}")


def _move_into_place(staging: Path, target: Path) -> None:
    """The finished results renamed to `target`; when that fails (the directory was filled or
    removed meanwhile), they are kept where they are and the error says where."""
    try:
        if target.exists():
            target.rmdir()
        staging.rename(target)
    except OSError as error:
        raise OutputUnwritableError(
            f"the results could not be moved to {target} ({error.strerror or error}); they are in {staging}",
            help_text=f"Move {staging} where you want the results; nothing was lost.",
        ) from None


def list_remote(session: Any, urls: Sequence[str], missing: list[dict[str, str]]) -> list[Unit]:
    """Units under URLs (hdfs://, s3a://, ...), listed with Hadoop's FileSystem."""
    if not urls:
        return []
    jvm = session.sparkContext._jvm
    hadoop_conf = session.sparkContext._jsc.hadoopConfiguration()
    units: list[Unit] = []
    for url in urls:
        path = jvm.org.apache.hadoop.fs.Path(url)
        try:
            filesystem = path.getFileSystem(hadoop_conf)
            statuses = filesystem.globStatus(path) or []
        except Exception as error:  # noqa: BLE001 - py4j wraps Hadoop's IOExceptions
            missing.append({"path": url, "reason": f"cannot list: {str(error).strip().splitlines()[0]}"})
            continue
        if not statuses:
            missing.append({"path": url, "reason": "no such file or directory"})
        for status in statuses:
            units.extend(_remote_units(filesystem, status))
    return units


def _remote_units(filesystem: Any, status: Any) -> Iterable[Unit]:
    from kafkadiag.pipeline.units import BUNDLE_MANIFEST, LAG_SNAPSHOT_FILE

    if not status.isDirectory():
        name = status.getPath().toString()
        yield Unit(LAG if name.endswith("/" + LAG_SNAPSHOT_FILE) else DUMP, name, (name,))
        return
    children = sorted(filesystem.listStatus(status.getPath()), key=lambda child: child.getPath().toString())
    names = {child.getPath().getName() for child in children}
    if BUNDLE_MANIFEST in names:
        from kafkadiag.collect.bundle import dump_like_names

        by_name = {child.getPath().getName(): child for child in children if not child.isDirectory()}
        files = tuple(by_name[name].getPath().toString() for name in dump_like_names(by_name))
        yield Unit(BUNDLE, status.getPath().toString(), files)
        return
    for child in children:
        yield from _remote_units(filesystem, child)


def balanced_batches(units: Sequence[Unit], count: int) -> list[list[Unit]]:
    """`count` batches of about equal bytes (largest unit first into the lightest batch): parse
    time follows size, and a few large dumps in one slice would leave the other cores idle."""
    sized = sorted(
        ((_unit_bytes(unit), unit.path, unit) for unit in units), key=lambda item: (-item[0], item[1])
    )
    heap: list[tuple[int, int]] = [(0, index) for index in range(count)]
    batches: list[list[Unit]] = [[] for _ in range(count)]
    for size, _, unit in sized:
        load, index = heapq.heappop(heap)
        batches[index].append(unit)
        heapq.heappush(heap, (load + size, index))
    return [batch for batch in batches if batch]


def _unit_bytes(unit: Unit) -> int:
    total = 0
    for path in unit.files:
        try:
            total += os.path.getsize(path)
        except OSError:
            pass  # an unreadable file is quarantined by its task, whatever its batch
    return total


def wants_quick_start(local_units: Sequence[Unit], remote_inputs: Sequence[str]) -> bool:
    # Remote inputs are listed through the session, so their size is not known before it starts.
    return not remote_inputs and sum(map(_unit_bytes, local_units)) < QUICK_START_BYTES


def batch_count(units: Sequence[Unit], cores: int) -> int:
    by_bytes = -(-sum(map(_unit_bytes, units)) // MIN_BATCH_BYTES)
    return max(1, min(len(units), cores * SLICES_PER_CORE, by_bytes))


@dataclass
class AnalysedDumps:
    """What the executors made of the dump inputs: per unit its result without the stuck-thread
    rows, and the stuck-thread episodes those rows make per process."""

    results: list[dict[str, Any]]
    episodes: list[dict[str, Any]]


def _analyse_dumps(
    session: Any, units: list[Unit], select: Sequence[str], ignore: Sequence[str]
) -> AnalysedDumps:
    if not units:
        return AnalysedDumps([], [])
    context = session.sparkContext
    selected, ignored = tuple(select), tuple(ignore)
    local = [unit for unit in units if not is_url(unit.path)]
    remote = [unit for unit in units if is_url(unit.path)]
    parts = []
    if local:
        batches = balanced_batches(local, batch_count(local, context.defaultParallelism))
        parts.append(
            context.parallelize(batches, len(batches)).flatMap(
                lambda batch: [analyze_unit(unit, selected, ignored) for unit in batch]
            )
        )
    if remote:
        by_file = {path: unit.path for unit in remote for path in unit.files}
        units_by_path = {unit.path: unit for unit in remote}
        contents = context.binaryFiles(",".join(sorted(by_file))).map(lambda item: (by_file[item[0]], item))
        parts.append(
            contents.groupByKey().map(
                lambda item: analyze_remote_unit(units_by_path[item[0]], dict(item[1]), selected, ignored)
            )
        )
    analysed = parts[0] if len(parts) == 1 else context.union(parts)
    # One shuffle takes each unit's result to the driver's collect and each stuck-thread row to
    # the rows of its process, which are cut into episodes where they land.
    settled = analysed.zipWithUniqueId().flatMap(_destinations).groupByKey().flatMap(_settle).collect()
    return AnalysedDumps(
        [value for kind, value in settled if kind == _RESULT],
        sorted((value for kind, value in settled if kind == _EPISODE), key=stuck.episode_sort_key),
    )


_RESULT, _EPISODE, _PROCESS = "result", "episode", "process"


def _destinations(numbered: tuple[dict[str, Any], int]) -> Iterator[tuple[tuple[str, Any], Any]]:
    result, number = numbered
    yield (_RESULT, number), {**result, "threads": []}
    for row in result["threads"]:
        yield (_PROCESS, row["process"]), row


def _settle(group: tuple[tuple[str, Any], Iterable[Any]]) -> Iterator[tuple[str, Any]]:
    (kind, _), values = group
    if kind == _RESULT:
        yield from ((_RESULT, value) for value in values)
    else:
        yield from ((_EPISODE, episode) for episode in stuck.episodes_of_process(values))


def _read_lags(session: Any, units: list[Unit]) -> dict[str, Any]:
    if not units:
        return {"frame": None, "quarantine": []}
    raw, problems = lag_sql.read_rows(session, units)
    return {"frame": lag_sql.evaluate(session, raw), "quarantine": problems}
