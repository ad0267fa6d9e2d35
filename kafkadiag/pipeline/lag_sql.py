"""Lag histories with Spark SQL window functions: for every recorded snapshot of every group
partition, the evaluation `kafkadiag lag history` makes over the snapshots up to then.

Per (group, source, topic, partition), ordered by snapshot time, over the trailing window of
WINDOW_SAMPLES snapshots (`lag history --samples`' default):
- consumption / production rate: (last - first) committed offset / high watermark over the
  window's span, from the first and last sample that know it;
- time lag: lag / production rate; catch-up: lag / (consumption - production) when positive;
- status: Burrow's current rules (kafkadiag.lag.burrow) written as SQL higher-order functions
  over the window's observations, their consecutive pairs and the window's high watermarks (no
  Python UDF), observations built as kafkadiag.lag.window builds them.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any
from urllib.parse import unquote

from kafkadiag.pipeline.units import Unit
from kafkadiag.pipeline.work import quarantine

WINDOW_SAMPLES = 10
# Burrow's allowed-lag setting (`lag history --allowed-lag`'s default): the batch uses none.
ALLOWED_LAG = 0
SNAPSHOT_SCHEMA_NAME = "kafkadiag.lag.snapshot"
SNAPSHOT_VERSION = 1
# The part of a recorded snapshot (kafkadiag.lag.snapshot.to_json) the evaluation reads.
SNAPSHOT_SCHEMA = (
    "`schema` string, version long, taken_at_ms long, "
    "groups array<struct<`group`:string, source:string, "
    "offsets:array<struct<topic:string, `partition`:int, `offset`:long, commit_time_ms:long>>>>, "
    "partitions array<struct<topic:string, `partition`:int, high_watermark:long>>, "
    "_corrupt_record string"
)
QUARANTINED_LINES_PER_FILE = 20

ROWS_SQL = f"""
WITH good AS (
  SELECT file_path, taken_at_ms, groups,
         -- the snapshot's high watermarks by "topic/partition", looked up per offset (no join)
         MAP_FROM_ENTRIES(TRANSFORM(partitions,
             p -> STRUCT(CONCAT(p.topic, '/', CAST(p.`partition` AS STRING)), p.high_watermark))) AS marks
  FROM snapshots
  WHERE _corrupt_record IS NULL AND `schema` = '{SNAPSHOT_SCHEMA_NAME}' AND version = {SNAPSHOT_VERSION}
        AND taken_at_ms IS NOT NULL
),
offsets AS (
  SELECT file_path, taken_at_ms, marks, g.`group`, g.source, o.topic, o.`partition`,
         o.`offset` AS committed, o.commit_time_ms
  FROM good LATERAL VIEW EXPLODE(groups) gs AS g LATERAL VIEW EXPLODE(g.offsets) os AS o
)
SELECT file_path, taken_at_ms AS time_ms, `group`, source, topic, `partition`, committed, commit_time_ms,
       TRY_ELEMENT_AT(marks, CONCAT(topic, '/', CAST(`partition` AS STRING))) AS high_watermark,
       TRY_ELEMENT_AT(marks, CONCAT(topic, '/', CAST(`partition` AS STRING))) - committed AS lag
FROM offsets
"""


def _local_path(uri: str) -> str:
    return unquote(uri[len("file:") :]) if uri.startswith("file:") else uri


def read_rows(session: Any, units: Sequence[Unit]) -> tuple[Any, list[dict[str, Any]]]:
    """Snapshot files read by Spark's JSON reader (no Python on this path): one row per
    (snapshot, group, partition) as a DataFrame, and quarantine records for the lines `lag history`
    would skip and for files holding no snapshot."""
    by_file = {
        os.path.abspath(unit.files[0]) if "://" not in unit.files[0] else unit.files[0]: unit
        for unit in units
    }
    frame = (
        session.read.schema(SNAPSHOT_SCHEMA)
        .option("mode", "PERMISSIVE")
        .option("columnNameOfCorruptRecord", "_corrupt_record")
        .json([unit.files[0] for unit in units])
        .selectExpr("*", "_metadata.file_path AS file_path")
        .cache()
    )
    frame.createOrReplaceTempView("snapshots")

    def unit_of(uri: str) -> Unit | None:
        return by_file.get(_local_path(uri)) or by_file.get(uri)

    problems: list[dict[str, Any]] = []
    bad = session.sql(
        f"""SELECT file_path, COALESCE(SUBSTRING(_corrupt_record, 1, 120),
                    CONCAT('schema ', COALESCE(`schema`, 'missing'),
                           ' version ', COALESCE(version, 'missing'),
                           ' taken_at_ms ', COALESCE(CAST(taken_at_ms AS STRING), 'missing'))) AS what,
                  ROW_NUMBER() OVER (PARTITION BY file_path ORDER BY taken_at_ms) AS n
           FROM snapshots
           WHERE _corrupt_record IS NOT NULL OR `schema` IS DISTINCT FROM '{SNAPSHOT_SCHEMA_NAME}'
                 OR version IS DISTINCT FROM {SNAPSHOT_VERSION} OR taken_at_ms IS NULL"""
    ).where(f"n <= {QUARANTINED_LINES_PER_FILE}")
    for row in bad.orderBy("file_path", "n").collect():
        unit = unit_of(row.file_path)
        if unit is not None:
            problems.append(quarantine(unit, f"{unit.path}: skipped, not a recorded snapshot: {row.what}"))
    with_snapshots = {
        row.file_path
        for row in session.sql(
            f"SELECT DISTINCT file_path FROM snapshots WHERE _corrupt_record IS NULL "
            f"AND `schema` = '{SNAPSHOT_SCHEMA_NAME}' AND version = {SNAPSHOT_VERSION} "
            "AND taken_at_ms IS NOT NULL"
        ).collect()
    }
    readable = {id(unit_of(uri)) for uri in with_snapshots}
    for unit in units:
        if id(unit) not in readable:
            problems.append(quarantine(unit, f"{unit.path}: no recorded snapshot in it"))
    rows = session.sql(ROWS_SQL)
    paths = session.createDataFrame(
        [(uri, unit.path) for uri in with_snapshots if (unit := unit_of(uri)) is not None],
        "file_path string, unit string",
    )
    return rows.join(paths, "file_path").drop("file_path"), problems


OUTPUT_ORDER = ["group", "source", "topic", "partition", "time_ms"]

EVALUATE_SQL = f"""
WITH sampled AS (
  -- the window's samples, collected once; everything below reads this array
  SELECT *,
    COLLECT_LIST(NAMED_STRUCT('t', time_ms, 'o', committed, 'm', high_watermark, 'c', commit_time_ms))
      OVER w AS samples
  FROM lag_rows
  WINDOW w AS (PARTITION BY `group`, source, topic, `partition` ORDER BY time_ms
               ROWS BETWEEN {WINDOW_SAMPLES - 1} PRECEDING AND CURRENT ROW)
),
known AS (
  SELECT *,
    FILTER(samples, s -> s.o IS NOT NULL) AS with_offset,
    FILTER(samples, s -> s.m IS NOT NULL) AS with_mark
  FROM sampled
),
windowed AS (
  SELECT *,
    -- rates: the first and last sample of the window that know the value
    IF(SIZE(with_offset) = 0, NULL,
       NAMED_STRUCT('t', with_offset[0].t, 'v', with_offset[0].o)) AS first_offset,
    IF(SIZE(with_offset) = 0, NULL,
       NAMED_STRUCT('t', TRY_ELEMENT_AT(with_offset, -1).t, 'v', TRY_ELEMENT_AT(with_offset, -1).o))
      AS last_offset,
    IF(SIZE(with_mark) = 0, NULL, NAMED_STRUCT('t', with_mark[0].t, 'v', with_mark[0].m)) AS first_mark,
    IF(SIZE(with_mark) = 0, NULL,
       NAMED_STRUCT('t', TRY_ELEMENT_AT(with_mark, -1).t, 'v', TRY_ELEMENT_AT(with_mark, -1).m)) AS last_mark,
    -- Burrow's observations: the samples that know the offset; the lag is unknown (null) where
    -- the high watermark was, and such commits are kept
    TRANSFORM(with_offset, s -> NAMED_STRUCT('o', s.o, 't', s.t, 'c', s.c,
                                         -- GREATEST skips nulls: an unknown lag would read 0
                                         'l', IF(s.m IS NULL, NULL, GREATEST(s.m - s.o, 0))))
      AS usable,
    EXISTS(samples, s -> s.c IS NOT NULL) AS has_commit_times
  FROM known
),
rated AS (
  SELECT *,
    IF(last_offset.t > first_offset.t,
       (last_offset.v - first_offset.v) / ((last_offset.t - first_offset.t) / 1000D), NULL)
      AS consumption_rate,
    IF(last_mark.t > first_mark.t,
       (last_mark.v - first_mark.v) / ((last_mark.t - first_mark.t) / 1000D), NULL) AS production_rate,
    -- where commit times are known each distinct commit is one observation stamped with its commit
    -- time (as Burrow's ZooKeeper module sees it), else each change of the offset, stamped with the
    -- first sample that showed it; 's' is that sample's time either way
    IF(has_commit_times,
       TRANSFORM(FILTER(usable, (s, i) -> s.c IS NOT NULL
                 AND NOT EXISTS(SLICE(usable, 1, i), p -> p.c IS NOT NULL AND p.o = s.o AND p.c = s.c)),
                 s -> NAMED_STRUCT('o', s.o, 't', s.c, 'l', s.l, 's', s.t)),
       TRANSFORM(FILTER(usable, (s, i) -> i = 0 OR s.o != usable[i - 1].o),
                 s -> NAMED_STRUCT('o', s.o, 't', s.t, 'l', s.l, 's', s.t))) AS observations
  FROM windowed
),
recent AS (
  -- Burrow's "recent broker offsets": the high watermarks read after the sample that first
  -- showed the last commit
  SELECT *,
    TRANSFORM(FILTER(with_mark, x -> x.t > TRY_ELEMENT_AT(observations, -1).s), x -> x.m) AS recent_marks
  FROM rated
),
pairs AS (
  SELECT *, ZIP_WITH(SLICE(observations, 1, GREATEST(SIZE(observations) - 1, 0)),
                     SLICE(observations, 2, GREATEST(SIZE(observations) - 1, 0)),
                     (earlier, later) -> NAMED_STRUCT('rewind', later.o < earlier.o,
                                                      'moved', later.o != earlier.o)) AS steps,
            FILTER(observations, x -> x.l IS NOT NULL) AS known_lags
  FROM recent
),
judged AS (
  SELECT *,
    -- the first rewind, as the 1-based position of the observation before it (0: none)
    ARRAY_POSITION(TRANSFORM(steps, s -> s.rewind), TRUE) AS rewind_after,
    EXISTS(ZIP_WITH(SLICE(known_lags, 1, GREATEST(SIZE(known_lags) - 1, 0)),
                    SLICE(known_lags, 2, GREATEST(SIZE(known_lags) - 1, 0)),
                    (earlier, later) -> later.l < earlier.l), d -> d) AS lag_decreased
  FROM pairs
)
SELECT unit, `group`, source, topic, `partition`, time_ms, committed, high_watermark, lag,
  consumption_rate, production_rate,
  CASE WHEN lag IS NULL THEN NULL WHEN lag <= 0 THEN 0D
       WHEN production_rate > 0 THEN lag / production_rate END AS time_lag_s,
  CASE WHEN lag IS NULL THEN NULL WHEN lag <= 0 THEN 0D
       WHEN consumption_rate > production_rate THEN lag / (consumption_rate - production_rate) END
    AS catch_up_s,
  CASE
    WHEN lag IS NULL OR high_watermark IS NULL THEN NULL
    WHEN SIZE(observations) = 0 OR GREATEST(lag, 0) <= {ALLOWED_LAG} THEN 'OK'
    WHEN (time_ms - ELEMENT_AT(observations, -1).t) > (ELEMENT_AT(observations, -1).t - observations[0].t)
         AND NOT EXISTS(recent_marks, m -> m <= ELEMENT_AT(observations, -1).o) THEN 'STOP'
    WHEN rewind_after > 0
         AND NOT EXISTS(SLICE(observations, CAST(rewind_after + 1 AS INT), SIZE(observations)),
                        x -> x.o >= ELEMENT_AT(observations, CAST(rewind_after AS INT)).o) THEN 'REWIND'
    WHEN EXISTS(known_lags, x -> x.l <= {ALLOWED_LAG}) THEN 'OK'
    WHEN NOT EXISTS(steps, s -> s.moved) THEN 'STALL'
    WHEN NOT lag_decreased THEN 'WARN'
    ELSE 'OK'
  END AS status
FROM judged
"""


def evaluate(session: Any, raw: Any) -> Any:
    raw.createOrReplaceTempView("lag_rows")
    return session.sql(EVALUATE_SQL)


LATEST_BY_GROUP_SQL = """
WITH latest AS (
  SELECT `group`, source, MAX_BY(lag, time_ms) AS lag, MAX_BY(status, time_ms) AS status
  FROM evaluated GROUP BY `group`, source, topic, `partition`
)
SELECT `group`, source, SUM(GREATEST(COALESCE(lag, 0), 0)) AS lag,
       COLLECT_SET(COALESCE(status, 'OK')) AS statuses
FROM latest GROUP BY `group`, source
"""

OVER_TIME_SQL = """
SELECT `group`, source, time_ms, SUM(GREATEST(COALESCE(lag, 0), 0)) AS lag,
       COLLECT_SET(COALESCE(status, 'UNKNOWN')) AS statuses
FROM evaluated GROUP BY `group`, source, time_ms
"""


def group_views(session: Any, evaluated: Any) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """Per group: its latest lag and statuses; and its lag and statuses at every snapshot time."""
    evaluated.createOrReplaceTempView("evaluated")
    latest = [row.asDict() for row in session.sql(LATEST_BY_GROUP_SQL).collect()]
    over_time = [
        row.asDict() for row in session.sql(OVER_TIME_SQL).orderBy("group", "source", "time_ms").collect()
    ]
    return latest, over_time
