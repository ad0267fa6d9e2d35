"""What one task does with one unit: plain Python over kafkadiag's parsers and rules.

`analyze_unit` runs a dump file or a capture bundle through `kafkadiag.app.analyze.analyze_dumps`,
exactly as `kafkadiag dump analyze` does (what reading repaired becomes the unit's caveats), and
serialises the findings with the same `finding_json`; it also emits, for every thread whose
unchanged stack would mean "stuck" (KD501's test), one row per dump, from which the job finds
threads stuck across consecutive dumps.
Nothing here raises for bad input: a unit that cannot be read comes back as a quarantine record.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from collections.abc import Iterator, Sequence
from datetime import datetime, timezone
from typing import Any

from kafkadiag.errors import KafkadiagError
from kafkadiag.pipeline.units import BUNDLE, Unit

# Dump timestamps as jstack, jcmd and kill -3 print them.
_TIMESTAMP_FORMATS = ("%Y-%m-%d %H:%M:%S", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S.%f")


def stable_id(*parts: object) -> str:
    return hashlib.sha1("\x1f".join(map(str, parts)).encode("utf-8")).hexdigest()[:16]


def dump_epoch_s(timestamp: str | None) -> float | None:
    """The dump's own timestamp as UTC seconds (jstack prints local time without a zone: UTC is
    assumed, which keeps durations right)."""
    if not timestamp:
        return None
    for fmt in _TIMESTAMP_FORMATS:
        try:
            parsed = datetime.strptime(timestamp.strip(), fmt)
        except ValueError:
            continue
        return parsed.replace(tzinfo=timezone.utc).timestamp()
    return None


def quarantine(unit: Unit, reason: str) -> dict[str, Any]:
    return {"path": unit.path, "kind": unit.kind, "reason": reason}


def analyze_unit(
    unit: Unit, select: Sequence[str] = (), ignore: Sequence[str] = (), display: dict[str, str] | None = None
) -> dict[str, Any]:
    """{"findings": [...], "threads": [...], "quarantine": [...], "caveats": [...], "dumps": n,
    "bytes": n}.

    `display` maps the files actually read (a remote file's local copy) to the names to report.
    """
    from kafkadiag.app.analyze import analyze_dumps
    from kafkadiag.report.analysis_json import finding_json

    outcome: dict[str, Any] = {
        "findings": [], "threads": [], "quarantine": [], "caveats": [], "dumps": 0, "bytes": 0
    }  # fmt: skip
    try:
        outcome["bytes"] = sum(os.path.getsize(path) for path in unit.files)
        analysis = analyze_dumps(unit.files, None, select, ignore)
    except KafkadiagError as error:  # the rules' own input limits
        outcome["quarantine"].append(quarantine(unit, _renamed(error.message, display)))
        return outcome
    except (OSError, UnicodeError, ValueError) as error:
        outcome["quarantine"].append(quarantine(unit, _renamed(f"{unit.path}: {error}", display)))
        return outcome
    for failure in analysis.read.failures:
        outcome["quarantine"].append(quarantine(unit, _renamed(failure.message, display)))
    dumps = list(analysis.read.dumps)
    if not dumps:
        return outcome
    outcome["dumps"] = len(dumps)
    outcome["caveats"] = [
        {"unit": unit.path, "caveat": _renamed(caveat, display)} for caveat in analysis.report.caveats
    ]
    report = analysis.report
    times = [dump_epoch_s(dump.timestamp) for dump in dumps]
    for finding in report.findings:
        row = _renamed_document(finding_json(finding), display)
        held = [index for index in finding.dumps if 0 <= index < len(times)]
        known = [time for time in (times[index] for index in held) if time is not None]
        latest = max(known, default=None)
        outcome["findings"].append(
            {
                "id": stable_id(unit.path, row["rule"], row["series"], row["threads"], row["message"]),
                "unit": unit.path,
                "kind": unit.kind,
                "host": unit.host,
                "pid": unit.pid if unit.pid is not None else _series_pid(dumps),
                "process": unit.process,
                "dump_time": latest,
                **row,
            }
        )
    outcome["threads"] = list(_stuck_thread_rows(unit, dumps, times, display))
    return outcome


def _series_pid(dumps: Sequence[Any]) -> int | None:
    pids = {dump.pid for dump in dumps if dump.pid is not None}
    return pids.pop() if len(pids) == 1 else None


def _stuck_thread_rows(
    unit: Unit, dumps: Sequence[Any], times: Sequence[float | None], display: dict[str, str] | None
) -> Iterator[dict[str, Any]]:
    from kafkadiag.rules.kd501_thread_not_moving import fingerprint, stuck_kind

    process = unit.process if unit.kind == BUNDLE or unit.pid is not None else _process_of(unit, dumps)
    for index, dump in enumerate(dumps):
        for thread in dump.threads:
            why = stuck_kind(thread)
            if why is None:
                continue
            yield {
                "process": process,
                "unit": unit.path,
                "source": (display or {}).get(dump.source, dump.source),
                "dump_index": index,
                "dump_time": times[index],
                "thread": thread.name,
                "nid": None if thread.nid is None else str(thread.nid),
                "why": why,
                "stack_id": stable_id(fingerprint(thread)),
                "top_frame": thread.frames[0].text if thread.frames else "",
            }


def _process_of(unit: Unit, dumps: Sequence[Any]) -> str:
    """Loose files of one process (the same pid in the same directory) are one process."""
    pid = _series_pid(dumps)
    if pid is None:
        return unit.path
    return f"{os.path.dirname(unit.path) or '.'} pid {pid}"


def _renamed(text: str, display: dict[str, str] | None) -> str:
    for local, shown in (display or {}).items():
        text = text.replace(local, shown)
    return text


def _renamed_document(document: dict[str, Any], display: dict[str, str] | None) -> dict[str, Any]:
    if not display:
        return document
    return json.loads(_renamed(json.dumps(document, ensure_ascii=False), display))


def analyze_remote_unit(
    unit: Unit, contents: dict[str, bytes], select: Sequence[str] = (), ignore: Sequence[str] = ()
) -> dict[str, Any]:
    """A unit whose files Spark read from a remote filesystem: parsed from local copies, reported
    under their URLs."""
    with tempfile.TemporaryDirectory(prefix="kafkadiag-batch-") as directory:
        local_files = []
        display = {}
        for number, url in enumerate(unit.files):
            local = os.path.join(directory, f"{number}-{os.path.basename(url) or 'input'}")
            with open(local, "wb") as handle:
                handle.write(contents.get(url, b""))
            local_files.append(local)
            display[local] = url
        local_unit = Unit(unit.kind, unit.path, tuple(local_files), unit.host, unit.pid)
        return analyze_unit(local_unit, select, ignore, display)
