"""A JVM's kill -3 output stored as JSON log records - Docker's json-file driver, journalctl -o
json, a log shipper's export with the whole dump in one record - reads as the dump itself."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafkadiag.collect.dumpfiles import reading_caveats
from kafkadiag.dumps import read_dumps
from kafkadiag.dumps.lines import ReadStats

from ..conftest import CAPTURED

KILL3_LOG = CAPTURED / "real-old-consumer-stall-0.8.2.2" / "kill3-stdout.log"


def docker_json_file(lines: list[str]) -> str:
    return "".join(
        json.dumps({"log": line + "\n", "stream": "stdout", "time": f"2026-11-27T10:00:{n % 60:02d}.5Z"})
        + "\n"
        for n, line in enumerate(lines)
    )


def journald_json(lines: list[str]) -> str:
    return "".join(
        json.dumps({"__REALTIME_TIMESTAMP": str(1_700_000_000_000_000 + n), "_SYSTEMD_UNIT": "orders.service",
                    "PRIORITY": "6", "MESSAGE": line}) + "\n"
        for n, line in enumerate(lines)
    )  # fmt: skip


def shipper_export(lines: list[str]) -> str:
    """An Elasticsearch/Loki export: log events around one event whose message is the whole dump."""
    before = [{"@timestamp": "2026-11-27T09:59:58Z", "message": line} for line in lines[:3]]
    dump = {"@timestamp": "2026-11-27T10:00:00Z", "message": "\n".join(lines[3:])}
    return "".join(json.dumps(event) + "\n" for event in [*before, dump])


def threads_of(path: Path) -> list[tuple[str, str, tuple[str, ...]]]:
    return [
        (thread.name, thread.status.value, tuple(frame.function for frame in thread.frames))
        for dump in read_dumps(str(path))
        for thread in dump.threads
    ]


@pytest.mark.parametrize(
    "form, field, lines_hold",
    [(docker_json_file, "log", True), (journald_json, "MESSAGE", True), (shipper_export, "message", False)],
    ids=["docker-json-file", "journalctl-o-json", "shipper-export"],
)
def test_json_log_records_read_as_the_dump(tmp_path: Path, form, field: str, lines_hold: bool) -> None:
    # GIVEN the kill -3 output of the stalled consumer as JSON log records
    lines = KILL3_LOG.read_text(encoding="utf-8").rstrip("\n").split("\n")
    records = tmp_path / "container.log"
    records.write_text(form(lines), encoding="utf-8")
    # WHEN it is read THEN its threads are those of the plain log, and the caveat names the field
    assert threads_of(records) == threads_of(KILL3_LOG)
    stats = ReadStats()
    list(read_dumps(str(records), stats=stats))
    (caveat,) = reading_caveats("container.log", stats)
    assert f'"{field}" field' in caveat and ("line numbers hold" in caveat) is lines_hold, caveat
    if lines_hold:
        # one record per line: the first thread is on the line of the original file
        original = next(read_dumps(str(KILL3_LOG))).threads[0].line_no
        assert next(read_dumps(str(records))).threads[0].line_no == original
