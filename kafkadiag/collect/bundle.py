"""Reading a capture bundle (written by `kafkadiag capture`, see kafkadiag.collect.capture): its
manifest, and the dump files the manifest names, confined to the bundle's directory.

`dump parse`/`dump analyze DIR`, `diagnose --from DIR` and `batch` read bundles through
`read_bundle`, the one place that trusts a manifest only as far as it goes. A bundle comes from
another host, a ticket or a support upload: its manifest may be a list, hold null or strings,
nest 100,000 levels deep, or name `/etc/passwd`, `../../secret` or a symlink out of the bundle,
and a dump file may be a FIFO that never ends. None of that is a traceback (exit 4) and nothing
outside the bundle is read and quoted as evidence: each entry that cannot be read from inside the
bundle is refused with a caveat naming it, and the rest is read.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from typing import Any

from kafkadiag import boundedjson
from kafkadiag.readlimits import file_kind

MANIFEST = "manifest.json"
# A capture of 1,000 dumps writes a manifest of about 200 KB.
MAX_MANIFEST_BYTES = 4 << 20
# Files of a bundle that are not dumps (the manifest, per-thread CPU, metrics as read), skipped
# when the dumps are taken from the file names (no manifest, or one that lists nothing usable).
_NON_DUMP = re.compile(r"(?i)(manifest|cpu|threads?-cpu|metrics?)[^/]*\.(json|jsonl|csv|tsv)$")


@dataclass(frozen=True)
class Bundle:
    directory: str
    files: tuple[str, ...]  # the dump files to read, in capture order, each inside `directory`
    host: str | None = None
    pid: int | None = None
    refused: tuple[str, ...] = ()  # caveats: what was not read, and why
    # The fetcher metrics the capture recorded beside the dumps (metrics.json), inside `directory`.
    metrics: str | None = None


def is_bundle(directory: str) -> bool:
    """A directory holding a manifest (as a link or a FIFO too: read_bundle refuses those)."""
    return os.path.lexists(os.path.join(directory, MANIFEST))


def read_bundle(directory: str) -> Bundle:
    """The bundle in `directory`: the dumps its manifest lists, else the dump-like files in it
    (a directory without a manifest is read so: `dump analyze`, `diagnose --from` and batch alike)."""
    refused: list[str] = []
    manifest = _manifest(directory, refused)
    listed = _listed_names(directory, manifest, refused)
    names = listed if listed is not None else _dump_like_names(directory)
    files = tuple(path for path in (_confined(directory, name, refused) for name in names) if path)
    pid = manifest.get("pid")
    host = manifest.get("host")
    metrics = manifest.get("metrics")
    return Bundle(
        directory,
        files,
        host=host if isinstance(host, str) else None,
        pid=pid if isinstance(pid, int) and not isinstance(pid, bool) else None,
        refused=tuple(refused),
        metrics=_confined(directory, metrics, refused) if isinstance(metrics, str) else None,
    )


def _manifest(directory: str, refused: list[str]) -> dict[str, Any]:
    """The manifest's object, or {} (its problem added to `refused`) when there is none to use."""
    path = os.path.join(directory, MANIFEST)
    if not os.path.lexists(path):
        return {}
    problem = _unreadable_file(directory, MANIFEST)
    if problem is None:
        try:
            with open(path, "rb") as handle:
                raw = handle.read(MAX_MANIFEST_BYTES + 1)
            if len(raw) > MAX_MANIFEST_BYTES:
                raise ValueError(f"larger than {MAX_MANIFEST_BYTES >> 20} MiB")
            document = boundedjson.loads(raw.decode("utf-8", errors="replace"))
            if isinstance(document, dict):
                return document
            problem = f"holds {_json_kind(document)}, not a capture manifest (a JSON object)"
        except (OSError, ValueError) as error:
            problem = f"cannot be read ({getattr(error, 'strerror', None) or error})"
    refused.append(f"{path} {problem}: the bundle's dumps are taken from its file names")
    return {}


def _listed_names(directory: str, manifest: dict[str, Any], refused: list[str]) -> list[str] | None:
    """The file names the manifest's `dumps` lists (entries `{"file": name}`, or bare names); None
    when it lists none, so that the directory's file names are used instead."""
    listed = manifest.get("dumps")
    if not isinstance(listed, list) or not listed:
        if manifest:
            path = os.path.join(directory, MANIFEST)
            refused.append(f"{path} lists no dumps: they are taken from the file names")
        return None
    names = []
    for number, entry in enumerate(listed, start=1):
        name = entry.get("file") if isinstance(entry, dict) else entry
        if isinstance(name, str) and name:
            names.append(name)
        else:
            refused.append(
                f"{os.path.join(directory, MANIFEST)}: dump entry {number} names no file "
                f"(it holds {_json_kind(name)}): skipped"
            )
    return names


def _dump_like_names(directory: str) -> Iterator[str]:
    """The dump-like names of the directory's entries, its subdirectories left out: a bundle may
    keep other captures beside its dumps (`group/` with kafka-consumer-groups' output), and a
    subdirectory is not a dump that failed to read. A symlink is kept, for _confined to judge."""
    try:
        with os.scandir(directory) as entries:
            names = [entry.name for entry in entries if not entry.is_dir(follow_symlinks=False)]
    except OSError:
        return iter(())
    return iter(dump_like_names(names))


def dump_like_names(names: Iterable[str]) -> list[str]:
    """The names among a bundle's file names that are dumps, sorted: not the manifest, per-thread
    CPU or metrics. The one rule, for a local bundle without a usable manifest and for a remote
    one (batch lists hdfs:// and s3a:// bundles by name)."""
    return sorted(name for name in names if name != MANIFEST and not _NON_DUMP.search(name))


def _confined(directory: str, name: str, refused: list[str]) -> str | None:
    """The path of `name` in the bundle when it is a regular file inside it, else None with the
    reason in `refused`. A listed name is never read from outside the bundle's directory: not as
    an absolute path, not up through `..`, not through a symlink that leaves it."""
    problem = _unreadable_file(directory, name)
    if problem is None:
        return os.path.join(directory, name)
    refused.append(f"{directory}: {name!r} {problem}: not read")
    return None


def _unreadable_file(directory: str, name: str) -> str | None:
    """Why `name` cannot be read as a file of the bundle in `directory`; None when it can."""
    if "\x00" in name:
        return "holds a NUL character"
    if os.path.isabs(name):
        return "is an absolute path, outside the bundle"
    root = os.path.realpath(directory)
    real = os.path.realpath(os.path.join(directory, name))
    if os.path.commonpath([root, real]) != root:
        return f"leads outside the bundle (to {real})"
    try:
        mode = os.stat(real).st_mode
    except OSError as error:
        return f"cannot be read ({error.strerror or error})"
    if not stat.S_ISREG(mode):
        # A FIFO would block the reader for ever, /dev/zero never end.
        return f"is {file_kind(mode)}, not a regular file"
    return None


def _json_kind(value: object) -> str:
    if value is None:
        return "null"
    names = {bool: "a boolean", str: "a string", int: "a number", float: "a number", list: "a JSON array"}
    return names.get(type(value), "an object")


def expand_bundles(paths: tuple[str, ...]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """Each directory among `paths` replaced by its dump files, other paths unchanged; and the
    caveats of what the bundles refused. A directory without a manifest is read by the same rule
    as one whose manifest lists nothing (its dump-like file names), as `diagnose --from` reads it."""
    expanded: list[str] = []
    refused: list[str] = []
    for path in paths:
        if not os.path.isdir(path):
            expanded.append(path)
            continue
        bundle = read_bundle(path)
        expanded.extend(bundle.files)
        refused.extend(bundle.refused)
    return tuple(expanded), tuple(refused)
