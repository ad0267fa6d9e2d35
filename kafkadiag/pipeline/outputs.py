"""What a batch run leaves in its output directory (documented in docs/batch.md):

findings.jsonl + findings/ (Parquet)   one row per finding
stuck.jsonl                            threads stuck in the same frames across consecutive dumps
lag.jsonl + lag/ (Parquet)             one row per (group, topic, partition, snapshot)
quarantine.jsonl                       each input that could not be read, and why
summary.json                           counts, rules by where they fire, stuck frames, worst hosts/groups
report.html                            one self-contained page: lag charts, findings by process
spark.log                              Spark's own output (JVM warnings, log lines), kept off the terminal

JSON lines are sorted and written with sorted keys, so the same inputs give byte-identical files.
"""

from __future__ import annotations

import collections
import json
import shutil
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kafkadiag.findings import Severity
from kafkadiag.pipeline import lag_sql, report_html

SUMMARY_SCHEMA = "kafkadiag.batch.summary"
SCHEMA_VERSION = 1
STATUS_RANK = {"OK": 0, "WARN": 1, "STALL": 2, "STOP": 3, "REWIND": 4, "ERR": 5}

# findings.jsonl as the JSON reader reads it: an object read as a string is kept as its JSON text.
FINDING_JSON_SCHEMA = (
    "id string, unit string, kind string, host string, pid long, process string, dump_time double, "
    "rule string, name string, severity string, title string, message string, threads array<string>, "
    "evidence array<struct<source:string,line:long,text:string>>, remedy string, series string, "
    "dumps array<int>, details string"
)


def json_line(row: dict[str, Any]) -> str:
    return json.dumps(row, ensure_ascii=False, sort_keys=True, separators=(",", ":")) + "\n"


def write_lines(path: Path, rows: Iterable[dict[str, Any]]) -> int:
    count = 0
    with open(path, "w", encoding="utf-8") as handle:
        for row in rows:
            handle.write(json_line(row))
            count += 1
    return count


def write_all(
    session: Any,
    directory: Path,
    dump_results: list[dict[str, Any]],
    episodes: list[dict[str, Any]],
    lag_result: dict[str, Any],
    missing: list[dict[str, str]],
    units: int,
) -> dict[str, Any]:
    """`dump_results`: each dump unit's result (without its stuck-thread rows); `episodes`: the
    threads stuck across consecutive dumps of a process, in output order."""
    findings = sorted(
        (row for result in dump_results for row in result["findings"]),
        key=lambda row: (row["unit"], row["series"], row["rule"], row["id"]),
    )
    write_lines(directory / "findings.jsonl", findings)
    _findings_parquet(session, directory / "findings.jsonl", directory / "findings")

    write_lines(directory / "stuck.jsonl", episodes)

    lag = _write_lag(session, directory, lag_result["frame"])

    quarantined = sorted(
        [
            *missing,
            *(entry for result in dump_results for entry in result["quarantine"]),
            *lag_result["quarantine"],
        ],
        key=lambda entry: (entry["path"], entry["reason"]),
    )
    write_lines(directory / "quarantine.jsonl", quarantined)

    dumps = sum(result["dumps"] for result in dump_results)
    summary = build_summary(
        units, dumps, findings, episodes, lag.rows, lag.latest_groups, quarantined, dump_results
    )
    with open(directory / "summary.json", "w", encoding="utf-8") as handle:
        json.dump(summary, handle, ensure_ascii=False, sort_keys=True, indent=1)
        handle.write("\n")
    (directory / "report.html").write_text(
        report_html.render(summary, findings, episodes, lag.over_time, lag.topic_over_time), "utf-8"
    )
    return {
        "units": units,
        "dumps": dumps,
        "findings": len(findings),
        "quarantined": len(quarantined),
        "lag_rows": lag.rows,
        "worst_severity": summary["worst_severity"],
    }


@dataclass
class LagViews:
    """What the lag outputs leave for the summary and the report."""

    rows: int = 0
    latest_groups: list[dict[str, Any]] = field(default_factory=list)
    over_time: list[dict[str, Any]] = field(default_factory=list)
    topic_over_time: list[dict[str, Any]] = field(default_factory=list)


def _write_lag(session: Any, directory: Path, lag_frame: Any) -> LagViews:
    """lag.jsonl and lag/ (Parquet), and the per-group views the summary and report need."""
    if lag_frame is None:
        (directory / "lag.jsonl").write_text("")
        return LagViews()
    # The evaluation runs once, into the Parquet copy; the other outputs read that copy (a
    # cached frame was evaluated again for some of them).
    lag_frame.write.parquet(str(directory / "lag"))
    stored = session.read.parquet(str(directory / "lag"))
    rows = write_spark_json_lines(stored, directory / "lag.jsonl", lag_sql.OUTPUT_ORDER)
    latest_groups, over_time = lag_sql.group_views(session, stored)
    return LagViews(rows, latest_groups, over_time, _topic_lag_over_time(stored))


def _topic_lag_over_time(evaluated: Any) -> list[dict[str, Any]]:
    """Per group, topic and recording, the lag summed over the topic's partitions (the report's
    line per topic); a partition whose lag is unknown counts as none, as in the group's sum."""
    from pyspark.sql import functions

    lag = functions.greatest(functions.coalesce(functions.col("lag"), functions.lit(0)), functions.lit(0))
    rows = (
        evaluated.groupBy("group", "source", "topic", "time_ms")
        .agg(functions.sum(lag).alias("lag"))
        .orderBy("group", "source", "topic", "time_ms")
        .collect()
    )
    return [row.asDict() for row in rows]


def _findings_parquet(session: Any, lines: Path, target: Path) -> None:
    """The Parquet copy of findings.jsonl, read by Spark's JSON reader: Python rows would cross
    into the JVM one by one. `details` is read as its JSON text (`details_json`)."""
    (
        session.read.schema(FINDING_JSON_SCHEMA)
        .json(str(lines))
        .withColumnRenamed("details", "details_json")  # the schema's order, details last
        .write.parquet(str(target))
    )


def build_summary(
    units: int,
    dumps: int,
    findings: list[dict[str, Any]],
    episodes: list[dict[str, Any]],
    lag_rows: int,
    latest_groups: list[dict[str, Any]],
    quarantined: list[dict[str, Any]],
    dump_results: list[dict[str, Any]],
) -> dict[str, Any]:
    worst = max((row["severity"] for row in findings), key=lambda value: Severity(value).rank, default=None)
    rules: dict[str, dict[str, Any]] = {}
    for row in findings:
        entry = rules.setdefault(
            row["rule"], {"name": row["name"], "severity": row["severity"], "findings": 0, "processes": set()}
        )
        entry["findings"] += 1
        entry["processes"].add(row["process"])
    frames = collections.Counter(episode["top_frame"] for episode in episodes)
    return {
        "schema": SUMMARY_SCHEMA,
        "version": SCHEMA_VERSION,
        "counts": {
            "inputs": units,
            "dumps": dumps,
            "bytes": sum(result["bytes"] for result in dump_results),
            "findings": len(findings),
            "stuck_threads": len(episodes),
            "lag_rows": lag_rows,
            "quarantined": len(quarantined),
        },
        "worst_severity": worst,
        # What reading each input had to repair (an encoding guessed, lines cut, an HTML page
        # read as text), as `dump analyze` says it beside its findings.
        "caveats": sorted(
            (entry for result in dump_results for entry in result.get("caveats", ())),
            key=lambda entry: (entry["unit"], entry["caveat"]),
        ),
        "findings_by_severity": dict(
            sorted(collections.Counter(row["severity"] for row in findings).items())
        ),
        "rules": {code: _where(entry) for code, entry in sorted(rules.items())},
        "stuck_frames": [{"frame": frame, "threads": count} for frame, count in _most_common(frames, 20)],
        "worst_hosts": _worst_hosts(findings),
        "worst_groups": _worst_groups(latest_groups),
    }


def _where(entry: dict[str, Any], limit: int = 20) -> dict[str, Any]:
    """A rule's count and the processes it fires in (the first `limit`, and how many in all)."""
    processes = sorted(entry["processes"])
    return {**entry, "processes": processes[:limit], "process_count": len(processes)}


def _most_common(counter: collections.Counter[str], limit: int) -> Iterator[tuple[str, int]]:
    yield from sorted(counter.items(), key=lambda item: (-item[1], item[0]))[:limit]


def _worst_hosts(findings: list[dict[str, Any]], limit: int = 20) -> list[dict[str, Any]]:
    by_host: dict[str, collections.Counter[str]] = collections.defaultdict(collections.Counter)
    for row in findings:
        by_host[row["host"] or row["process"]][row["severity"]] += 1
    ranked = sorted(
        by_host.items(),
        key=lambda item: (-item[1]["error"], -item[1]["warning"], -sum(item[1].values()), item[0]),
    )
    return [{"host": host, "findings": dict(sorted(counts.items()))} for host, counts in ranked[:limit]]


def _worst_groups(latest_groups: list[dict[str, Any]], limit: int = 20) -> list[dict[str, Any]]:
    ranked = []
    for entry in latest_groups:
        status = max(entry["statuses"], key=lambda value: STATUS_RANK.get(value, 0), default="OK")
        ranked.append(
            {"group": entry["group"], "source": entry["source"], "lag": entry["lag"], "status": status}
        )
    ranked.sort(
        key=lambda entry: (
            -STATUS_RANK.get(entry["status"], 0),
            -entry["lag"],
            entry["group"],
            entry["source"],
        )
    )
    return ranked[:limit]


def write_spark_json_lines(frame: Any, path: Path, order: list[str]) -> int:
    """Large outputs are written by Spark, not the driver: one sorted partition, keys in sorted
    order, nulls kept, then the single part file renamed to `path`."""
    staging = path.with_name(path.name + ".parts")
    (
        frame.select(*sorted(frame.columns))
        .repartition(1)
        .sortWithinPartitions(*order)
        .write.option("ignoreNullFields", "false")
        .json(str(staging))
    )
    (part,) = sorted(staging.glob("part-*"))
    part.rename(path)
    shutil.rmtree(staging)
    return int(frame.count())
