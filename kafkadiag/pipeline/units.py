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
import json
import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

DUMP = "dump"
BUNDLE = "bundle"
LAG = "lag"
BUNDLE_MANIFEST = "manifest.json"
LAG_SNAPSHOT_FILE = "lag-snapshots.jsonl"
# Files of a bundle that are not dumps (the manifest, per-thread CPU, metrics as read).
_BUNDLE_NON_DUMP = re.compile(r"(?i)(manifest|cpu|threads?-cpu|metrics?)[^/]*\.(json|jsonl|csv|tsv)$")
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
    arguments that name nothing (each a quarantine record)."""
    units: dict[str, Unit] = {}
    missing: list[dict[str, str]] = []
    for argument in arguments:
        path = argument.removeprefix("file://")
        matches = sorted(glob.glob(path, recursive=True)) if glob.has_magic(path) else [path]
        if not matches or not all(os.path.exists(match) for match in matches):
            missing.append({"path": argument, "reason": "no such file or directory"})
            continue
        for match in matches:
            for unit in _units_under(match):
                units.setdefault(unit.path, unit)
    return sorted(units.values(), key=lambda unit: unit.path), missing


def _units_under(path: str) -> Iterator[Unit]:
    if os.path.isfile(path):
        yield classify_file(path)
        return
    if os.path.isfile(os.path.join(path, BUNDLE_MANIFEST)):
        yield bundle_unit(path)
        return
    for root, directories, files in os.walk(path):
        directories.sort()
        if BUNDLE_MANIFEST in files and root != path:
            yield bundle_unit(root)
            directories.clear()
            continue
        for name in sorted(files):
            yield classify_file(os.path.join(root, name))


def classify_file(path: str) -> Unit:
    return Unit(LAG if looks_like_lag_snapshots(path) else DUMP, path, (path,))


def looks_like_lag_snapshots(path: str) -> bool:
    """`lag --record` files by name, or any JSON-lines file whose first line is a lag snapshot."""
    if os.path.basename(path) == LAG_SNAPSHOT_FILE:
        return True
    if not path.endswith(".jsonl"):
        return False
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            first = handle.readline(1 << 20)
        document = json.loads(first)
    except (OSError, ValueError):
        return False
    return isinstance(document, dict) and str(document.get("schema", "")).startswith("kafkadiag.lag")


def bundle_unit(directory: str) -> Unit:
    """A capture bundle: its dumps in the order the manifest lists them (else by name)."""
    manifest: dict[str, object] = {}
    try:
        with open(os.path.join(directory, BUNDLE_MANIFEST), encoding="utf-8") as handle:
            loaded = json.load(handle)
        manifest = loaded if isinstance(loaded, dict) else {}
    except (OSError, ValueError):
        manifest = {}
    files = _manifest_dump_files(directory, manifest) or tuple(
        os.path.join(directory, name)
        for name in sorted(os.listdir(directory))
        if os.path.isfile(os.path.join(directory, name)) and not _BUNDLE_NON_DUMP.search(name)
    )
    pid = manifest.get("pid")
    host = manifest.get("host")
    return Unit(
        BUNDLE,
        directory,
        files,
        host=str(host) if host is not None else None,
        pid=int(pid) if isinstance(pid, int) else None,
    )


def _manifest_dump_files(directory: str, manifest: dict[str, object]) -> tuple[str, ...]:
    listed = manifest.get("dumps")
    if not isinstance(listed, list):
        return ()
    files = []
    for entry in listed:
        name = entry.get("file") if isinstance(entry, dict) else entry
        if isinstance(name, str) and os.path.isfile(os.path.join(directory, name)):
            files.append(os.path.join(directory, name))
    return tuple(files)
