"""What the fuzzer runs on each input, and the regression test replays: one input, one reader.

An input is a target byte and a body. The target byte picks a format to parse the body as (each
of DumpFormat, or detection), the capture-bundle manifest reader, or the lag record reader (the
body as DIR/lag-snapshots.jsonl, read by `lag history`). A body read as a dump goes
the whole way a user's file goes: read_dumps, the rule engine, the JSON and table reports. Any
exception that is not a KafkadiagError (a named input error, exit 3) is a bug and fails the
input, and so are the failures kafkadiag turns into caveats so that a user still gets a report:
a parser that stopped part-way (ReadStats.parser_failure) and a rule that crashed (KD001).
"""

from __future__ import annotations

import gzip
import importlib
import io
import json
import os
import pkgutil
from pathlib import Path

import kafkadiag
from kafkadiag.collect.bundle import read_bundle
from kafkadiag.dumps import read_dumps
from kafkadiag.dumps.summary import summarize
from kafkadiag.errors import KafkadiagError
from kafkadiag.model import DumpFormat, ThreadDump
from kafkadiag.report.analysis_json import write_report
from kafkadiag.report.analysis_table import render_report
from kafkadiag.report.dump_json_text import JsonDumpWriter
from kafkadiag.report.dump_table import render_dump
from kafkadiag.report.safe_text import ControlEscapingStream
from kafkadiag.rules.engine import analyze

MANIFEST = "manifest"
LAG_RECORD = "lag-record"
# How read_dumps names a parser that stopped on a line it did not foresee (dumps.guarded).
_PARSER_FAILED = " parser failed ("
# The target byte, modulo their count, picks one: each format, detection (None), the manifest,
# the lag record.
TARGETS: tuple[DumpFormat | str | None, ...] = (*DumpFormat, None, MANIFEST, LAG_RECORD)
# A small real dump, the file a fuzzed manifest lists among others (it may also list ../, /etc ...).
_BUNDLE_DUMP = (
    b'"main" #1 prio=5 os_prio=0 tid=0x1 nid=0x2 runnable [0x3]\n   java.lang.Thread.State: RUNNABLE\n'
)


class FoundBug(AssertionError):
    """An input that made kafkadiag fail other than by a named input error."""


def import_everything() -> None:
    """Import every module an input can reach, so that a fuzzer instruments them all (parsers and
    rules are otherwise imported lazily, after instrumentation)."""
    for module in pkgutil.walk_packages(kafkadiag.__path__, "kafkadiag."):
        if module.name.startswith(
            (
                "kafkadiag.dumps",
                "kafkadiag.rules",
                "kafkadiag.report",
                "kafkadiag.collect.bundle",
                "kafkadiag.collect.lagrecord",
            )
        ):
            importlib.import_module(module.name)


def target_of(data: bytes) -> DumpFormat | str | None:
    return TARGETS[data[0] % len(TARGETS)]


def target_name(target: DumpFormat | str | None) -> str:
    """How a kept input names its target (its first byte would change meaning as formats are added)."""
    return target.value if isinstance(target, DumpFormat) else (target or "auto")


def target_named(name: str) -> DumpFormat | str | None:
    return next(target for target in TARGETS if target_name(target) == name)


def exercise(data: bytes, workdir: Path) -> None:
    """Read `data` as its target byte says; FoundBug (or the exception itself) on a bug."""
    if data:
        read_as(target_of(data), data[1:], workdir)


def read_as(target: DumpFormat | str | None, body: bytes, workdir: Path) -> None:
    if target == MANIFEST:
        _read_manifest(body, workdir)
    elif target == LAG_RECORD:
        _read_lag_record(body, workdir)
    else:
        _read_dump(body, target if isinstance(target, DumpFormat) else None, workdir)


def _read_dump(body: bytes, fmt: DumpFormat | None, workdir: Path) -> None:
    path = workdir / "input"
    path.write_bytes(body)
    dumps: list[ThreadDump] = []
    try:
        dumps.extend(read_dumps(str(path), fmt))
    except KafkadiagError as error:
        # read_dumps names a parser that failed part-way (exit 3 for the user): here, a bug.
        if _PARSER_FAILED in error.message:
            raise FoundBug(error.message) from error
    if dumps:
        _report(dumps)


def _report(dumps: list[ThreadDump]) -> None:
    """Analyse and render as `dump analyze` and `dump parse` do, through the streams their output
    goes through: the text must encode as UTF-8 and the JSON documents must parse."""
    report = analyze(dumps)
    crashed = [finding.message for finding in report.findings if finding.rule == "KD001"]
    if crashed:
        raise FoundBug(f"rule crashed: {crashed[0]}")
    inputs = [{"source": "input", "dumps": len(dumps)}]
    analysis, summaries, tables = io.StringIO(), io.StringIO(), io.StringIO()
    write_report(ControlEscapingStream(analysis, as_json=True), report, inputs, "error")  # type: ignore[arg-type]
    render_report(ControlEscapingStream(tables), report, len(dumps))  # type: ignore[arg-type]
    writer = JsonDumpWriter(ControlEscapingStream(summaries, as_json=True))  # type: ignore[arg-type]
    writer.begin()
    for dump in dumps:
        summary = summarize(dump)
        writer.write(summary)
        render_dump(ControlEscapingStream(tables), summary)  # type: ignore[arg-type]
    writer.end(inputs)
    for text in (analysis.getvalue(), summaries.getvalue(), tables.getvalue()):
        text.encode("utf-8")
    json.loads(analysis.getvalue())
    json.loads(summaries.getvalue())


def _read_manifest(body: bytes, workdir: Path) -> None:
    bundle = workdir / "bundle"
    if not bundle.is_dir():
        bundle.mkdir()
        (bundle / "jstack-1.txt").write_bytes(_BUNDLE_DUMP)
        (bundle / "jstack-2.txt").write_bytes(_BUNDLE_DUMP)
        os.symlink("/etc/hostname", bundle / "outside.txt")
    (bundle / "manifest.json").write_bytes(body)
    try:
        read = read_bundle(str(bundle))
    except KafkadiagError:
        return
    for path in read.files:
        if not os.path.realpath(path).startswith(os.path.realpath(bundle) + os.sep):
            raise FoundBug(f"a bundle read {path}, outside its directory")
    json.dumps(list(read.refused), ensure_ascii=False).encode("utf-8")


def _read_lag_record(body: bytes, workdir: Path) -> None:
    """As `lag history` reads and evaluates a record: a damaged line is a skipped line, and a
    record with none usable a named input error."""
    from kafkadiag.app.lag import lag_history
    from kafkadiag.collect.lagrecord import RECORD_FILE

    record = workdir / "record"
    record.mkdir(exist_ok=True)
    (record / RECORD_FILE).write_bytes(body)
    try:
        history = lag_history(str(record))
    except KafkadiagError:
        return
    json.dumps(list(history.problems), ensure_ascii=False).encode("utf-8")


# The seeds: the start of every captured fixture, under the target of the format it holds and
# under detection; the public and wild dumps for the formats nobody here captured.
SEED_SOURCES = ("fixtures/captured", "tests/dumps/public", "tests/wild/dumps")
SEED_BYTES = 8192
_MANIFEST_SEEDS = (
    {"pid": 4242, "host": "consumer-1", "dumps": [{"file": "jstack-1.txt"}, {"file": "jstack-2.txt"}]},
    {"dumps": ["jstack-1.txt", "../outside.txt", "/etc/passwd", None, 7]},
    [{"file": "jstack-1.txt"}],
)

# A recorded snapshot as `lag --record` writes it, whole and with a field of the wrong type.
_LAG_RECORD_SEEDS = (
    b'{"schema":"kafkadiag.lag.snapshot","version":1,"taken_at_ms":1700000000000,"duration_ms":1.5,'
    b'"sources":[["kafka","127.0.0.1:9092"]],"groups":[{"group":"g","source":"kafka","state":"Stable",'
    b'"members":[{"member_id":"m","subscription":[["t",1]],"assignment":[["t",0]]}],'
    b'"offsets":[{"topic":"t","partition":0,"offset":5}],"errors":[],"exists":true}],'
    b'"partitions":[],"topics":[],"errors":[],"unreachable":[],"stats":[["kafka_requests",3]]}\n',
    b'{"schema":"kafkadiag.lag.snapshot","version":1,"taken_at_ms":"soon","sources":"zk"}\n',
)


def write_seeds(repo: Path, directory: Path) -> int:
    """Seed inputs in `directory`, one file each; how many."""
    count = 0
    for source in SEED_SOURCES:
        for path in sorted((repo / source).rglob("*")):
            if not path.is_file() or path.suffix in (".py", ".toml", ".md") or path.name == "MANIFEST.json":
                continue
            fmt = _format_of(path)
            if fmt is None:
                continue
            head = _text_head(path)
            for target in (fmt, None):
                (directory / f"seed-{count}").write_bytes(bytes([TARGETS.index(target)]) + head)
                count += 1
    for record in _LAG_RECORD_SEEDS:
        (directory / f"seed-{count}").write_bytes(bytes([TARGETS.index(LAG_RECORD)]) + record)
        count += 1
    for manifest in _MANIFEST_SEEDS:
        (directory / f"seed-{count}").write_bytes(
            bytes([TARGETS.index(MANIFEST)]) + json.dumps(manifest).encode()
        )
        count += 1
    return count


def _format_of(path: Path) -> DumpFormat | None:
    try:
        return next(read_dumps(str(path))).format
    except (KafkadiagError, StopIteration):
        return None


def _text_head(path: Path) -> bytes:
    """The first SEED_BYTES of the file's text (a gzip's, expanded)."""
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        with gzip.open(path, "rb") as expanded:
            raw = expanded.read(SEED_BYTES)
    return raw[:SEED_BYTES]
