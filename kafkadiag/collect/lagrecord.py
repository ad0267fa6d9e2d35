"""The lag record `kafkadiag lag --record DIR` keeps: one JSON line per snapshot in
DIR/lag-snapshots.jsonl, read back by `lag history` and by `batch`."""

from __future__ import annotations

import json
import os
import stat
from typing import TYPE_CHECKING

from kafkadiag import boundedjson
from kafkadiag.collect.errors import SnapshotReadError
from kafkadiag.collect.lagrecord_read import read_records
from kafkadiag.errors import InputUnreadableError
from kafkadiag.lag.snapshot import Snapshot, to_json
from kafkadiag.readlimits import open_input

if TYPE_CHECKING:
    from kafkadiag.collect.retention import Keep

RECORD_FILE = "lag-snapshots.jsonl"


def record_snapshot(record_dir: str, snapshot: Snapshot, keep: Keep | None = None) -> None:
    """Append one JSON line; a reader never sees half a line (one write of the whole line).
    With `keep` (--keep), what is past its age or size is then dropped (collect/retention.py)."""
    try:
        os.makedirs(record_dir, exist_ok=True)
        line = json.dumps(to_json(snapshot), separators=(",", ":")) + "\n"
        # O_NONBLOCK: a FIFO in the record's place is refused, not waited on for a reader forever.
        path = os.path.join(record_dir, RECORD_FILE)
        flags = os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_NONBLOCK
        if os.path.exists(path) and not os.path.isfile(path):
            raise _not_a_file(record_dir)
        descriptor = os.open(path, flags, 0o666)
        try:
            if not stat.S_ISREG(os.fstat(descriptor).st_mode):
                raise _not_a_file(record_dir)
            os.set_blocking(descriptor, True)
            os.write(descriptor, line.encode("utf-8"))
        finally:
            os.close(descriptor)
        if keep is not None:
            from kafkadiag.collect.retention import prune

            prune(os.path.join(record_dir, RECORD_FILE), keep, snapshot.taken_at_ms)
    except OSError as error:
        raise InputUnreadableError(
            f"cannot record into {record_dir}: {error.strerror or error}",
            help_text="Choose a directory this user can write to for --record.",
        ) from None


def _not_a_file(record_dir: str) -> InputUnreadableError:
    return InputUnreadableError(
        f"cannot record into {record_dir}: its {RECORD_FILE} is not a regular file",
        help_text="Remove it, or choose another directory for --record.",
    )


def read_recorded(record_dir: str) -> tuple[list[Snapshot], list[str]]:
    """Snapshots recorded in record_dir (oldest first) and problems with lines that were skipped."""
    path = os.path.join(record_dir, RECORD_FILE) if os.path.isdir(record_dir) else record_dir
    try:
        with open_input(path) as handle:
            snapshots, problems = read_records(path, handle)
    except OSError as error:
        raise SnapshotReadError(f"cannot read {path}: {error.strerror or error}") from None
    if not snapshots:
        raise SnapshotReadError(
            f"no usable recorded snapshot in {path}"
            + (f" ({len(problems)} line(s) skipped; first: {problems[0]})" if problems else ""),
            help_text="Record snapshots into it with `kafkadiag lag --record DIR`, "
            "or point at a record that `lag --record` wrote.",
        )
    snapshots.sort(key=lambda snapshot: snapshot.taken_at_ms)
    return snapshots, problems


def looks_like_lag_record(path: str) -> bool:
    """A `lag --record` file by its name, or any JSON-lines file whose first line is a lag snapshot."""
    if os.path.basename(path) == RECORD_FILE:
        return True
    if not path.endswith(".jsonl"):
        return False
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            first = handle.readline(1 << 20)
        document = boundedjson.loads(first)
    except (OSError, ValueError):
        return False
    return isinstance(document, dict) and str(document.get("schema", "")).startswith("kafkadiag.lag")
