"""What a batch run reads: its INPUT arguments expanded into units of analysis.

A unit is analysed by one task, exactly as `kafkadiag dump analyze UNIT` would analyse it:
* a dump file (any format `dump parse` reads), its dumps one series when they are one process;
* a capture bundle (a directory with `manifest.json`, written by `kafkadiag capture`), its dumps
  in capture order, its host and pid taken from the manifest;
* a lag snapshot file (`lag-snapshots.jsonl`, written by `kafkadiag lag --record DIR`).

Local paths are listed here, in the driver (a plain directory walk is hundreds of times faster
than Spark's file listing for thousands of small files); URLs (hdfs://, s3a://, ...) are listed
with Hadoop's FileSystem through the Spark session (see `job.list_remote`).
"""

from __future__ import annotations

import glob
import os
import re
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

from kafkadiag.collect.bundle import MANIFEST, is_bundle, read_bundle
from kafkadiag.collect.lagrecord import RECORD_FILE, looks_like_lag_record
from kafkadiag.readlimits import file_kind

DUMP = "dump"
BUNDLE = "bundle"
LAG = "lag"
BUNDLE_MANIFEST = MANIFEST
# The name `lag --record` writes, which the job's remote listing also recognises.
LAG_SNAPSHOT_FILE = RECORD_FILE
_URL = re.compile(r"^[a-zA-Z][a-zA-Z0-9+.-]*://")


@dataclass(frozen=True)
class Unit:
    kind: str  # DUMP, BUNDLE or LAG
    path: str  # the file, or the bundle's directory, as the user named it
    files: tuple[str, ...]  # what is read: the file itself, or a bundle's dump files in order
    host: str | None = None
    pid: int | None = None

    @property
    def process(self) -> str:
        """The process the unit's dumps came from: host and pid where known, else the path."""
        if self.pid is not None:
            return f"{self.host or 'unknown-host'} pid {self.pid}"
        return self.path


def is_url(path: str) -> bool:
    return bool(_URL.match(path)) and not path.startswith("file://")


def expand_local(arguments: Iterable[str]) -> tuple[list[Unit], list[dict[str, str]]]:
    """Units for the local INPUT arguments (files, directories, globs), sorted by path, and the
    quarantine records of what cannot be read: arguments that name nothing, folders that cannot
    be listed, files that are not regular (a FIFO, a link to /dev/zero: read, they would block
    the job or never end), what a bundle refuses (kafkadiag.collect.bundle)."""
    units: dict[str, Unit] = {}
    problems: list[dict[str, str]] = []
    for argument in arguments:
        path = argument.removeprefix("file://")
        matches = sorted(glob.glob(path, recursive=True)) if glob.has_magic(path) else [path]
        if not matches or not all(os.path.lexists(match) for match in matches):
            problems.append({"path": argument, "reason": "no such file or directory"})
            continue
        for match in matches:
            for unit in _units_under(match, problems):
                units.setdefault(unit.path, unit)
    return sorted(units.values(), key=lambda unit: unit.path), problems


def _units_under(path: str, problems: list[dict[str, str]]) -> Iterator[Unit]:
    if not os.path.isdir(path):
        yield from _file_unit(path, problems)
        return
    if is_bundle(path):
        yield _bundle_unit(path, problems)
        return

    def unlisted(error: OSError) -> None:
        reason = f"cannot be listed: {error.strerror}"
        problems.append(_quarantined(DIRECTORY, error.filename or path, reason))

    for root, directories, files in os.walk(path, onerror=unlisted):
        directories.sort()
        if BUNDLE_MANIFEST in files and root != path:
            yield _bundle_unit(root, problems)
            directories.clear()
            continue
        for name in sorted(files):
            yield from _file_unit(os.path.join(root, name), problems)


DIRECTORY = "directory"


def _quarantined(kind: str, path: str, reason: str) -> dict[str, str]:
    """A quarantine record of the driver's, as pipeline.work.quarantine writes the tasks' own."""
    return {"path": path, "kind": kind, "reason": reason}


def _file_unit(path: str, problems: list[dict[str, str]]) -> Iterator[Unit]:
    """The unit of one file, unless it is not a regular file: that is quarantined, never opened."""
    try:
        mode = os.stat(path).st_mode
    except OSError as error:
        problems.append(_quarantined(DUMP, path, f"cannot be read: {error.strerror or error}"))
        return
    if not stat.S_ISREG(mode):
        problems.append(_quarantined(DUMP, path, f"{file_kind(mode)}, not a regular file: not read"))
        return
    yield classify_file(path)


def classify_file(path: str) -> Unit:
    return Unit(LAG if looks_like_lag_record(path) else DUMP, path, (path,))


def _bundle_unit(directory: str, problems: list[dict[str, str]]) -> Unit:
    """A capture bundle: its dumps in the order the manifest lists them (else by name); what it
    refuses to read is quarantined, the rest analysed."""
    bundle = read_bundle(directory)
    problems.extend(_quarantined(BUNDLE, directory, reason) for reason in bundle.refused)
    return Unit(BUNDLE, directory, bundle.files, host=bundle.host, pid=bundle.pid)
