"""Lag histories with Spark SQL window functions: for every recorded snapshot of every group
partition, the evaluation `kafkadiag lag history` makes over the snapshots up to then.

Per (group, source, topic, partition), ordered by snapshot time, over the trailing window of
WINDOW_SAMPLES snapshots (`lag history --samples`' default):
- consumption / production rate: (last - first) committed offset / high watermark over the
  window's span, from the first and last sample that know it;
- time lag: lag / production rate; catch-up: lag / (consumption - production) when positive;
- status: Burrow's rules (kafkadiag.lag.burrow) written as SQL higher-order functions over the
  window's observations (no Python UDF), observations built as kafkadiag.lag.window builds them.
"""

from __future__ import annotations

from typing import Any

WINDOW_SAMPLES = 10

RAW_COLUMNS = (
    ("unit", "string"),
    ("time_ms", "long"),
    ("group", "string"),
    ("source", "string"),
    ("topic", "string"),
    ("partition", "int"),
    ("committed", "long"),
    ("commit_time_ms", "long"),
    ("high_watermark", "long"),
    ("lag", "long"),
)
RAW_SCHEMA = ", ".join(f"`{name}` {kind}" for name, kind in RAW_COLUMNS)

OUTPUT_ORDER = ["group", "source", "topic", "partition", "time_ms"]

EVALUATE_SQL = f"""
WITH windowed AS (
  SELECT *,
    COLLECT_LIST(NAMED_STRUCT('t', time_ms, 'o', committed, 'h', high_watermark, 'c', commit_time_ms))
      OVER w AS samples
  FROM lag_rows
  WINDOW w AS (PARTITION BY `group`, source, topic, `partition` ORDER BY time_ms
               ROWS BETWEEN {WINDOW_SAMPLES - 1} PRECEDING AND CURRENT ROW)
),
known AS (
  SELECT *,
    FILTER(samples, s -> s.o IS NOT NULL) AS with_offset,
    FILTER(samples, s -> s.h IS NOT NULL) AS with_mark,
    FILTER(samples, s -> s.o IS NOT NULL AND s.h IS NOT NULL) AS usable
  FROM windowed
),
rated AS (
  SELECT *,
    CASE WHEN SIZE(with_offset) >= 2
              AND ELEMENT_AT(with_offset, -1).t > ELEMENT_AT(with_offset, 1).t
         THEN (ELEMENT_AT(with_offset, -1).o - ELEMENT_AT(with_offset, 1).o)
              / ((ELEMENT_AT(with_offset, -1).t - ELEMENT_AT(with_offset, 1).t) / 1000D) END
      AS consumption_rate,
    CASE WHEN SIZE(with_mark) >= 2 AND ELEMENT_AT(with_mark, -1).t > ELEMENT_AT(with_mark, 1).t
         THEN (ELEMENT_AT(with_mark, -1).h - ELEMENT_AT(with_mark, 1).h)
              / ((ELEMENT_AT(with_mark, -1).t - ELEMENT_AT(with_mark, 1).t) / 1000D) END
      AS production_rate,
    -- Burrow's observations: distinct commits stamped with their commit time where commit
    -- times are known, else every usable sample stamped with the sample's time.
    CASE WHEN EXISTS(samples, s -> s.c IS NOT NULL)
         THEN TRANSFORM(FILTER(FILTER(usable, s -> s.c IS NOT NULL),
                (s, i) -> NOT EXISTS(SLICE(FILTER(usable, x -> x.c IS NOT NULL), 1, i),
                                     p -> p.o = s.o AND p.c = s.c)),
                s -> NAMED_STRUCT('o', s.o, 't', s.c, 'l', GREATEST(s.h - s.o, 0)))
         ELSE TRANSFORM(usable, s -> NAMED_STRUCT('o', s.o, 't', s.t, 'l', GREATEST(s.h - s.o, 0)))
    END AS observations
  FROM known
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
    WHEN SIZE(observations) = 0 THEN 'OK'
    WHEN GREATEST(lag, 0) = 0 OR EXISTS(observations, x -> x.l = 0) THEN 'OK'
    WHEN EXISTS(SEQUENCE(2, GREATEST(SIZE(observations), 2)),
                i -> i <= SIZE(observations)
                     AND ELEMENT_AT(observations, i).o < ELEMENT_AT(observations, i - 1).o)
      THEN 'REWIND'
    WHEN (time_ms - ELEMENT_AT(observations, -1).t)
         > (ELEMENT_AT(observations, -1).t - ELEMENT_AT(observations, 1).t) THEN 'STOP'
    WHEN FORALL(observations, x -> x.o = ELEMENT_AT(observations, 1).o) THEN 'STALL'
    WHEN FORALL(SEQUENCE(2, GREATEST(SIZE(observations), 2)),
                i -> i > SIZE(observations)
                     OR ELEMENT_AT(observations, i).l >= ELEMENT_AT(observations, i - 1).l)
      THEN 'WARN'
    ELSE 'OK'
  END AS status
FROM rated
"""


def evaluate(session: Any, raw: Any) -> Any:
    raw.createOrReplaceTempView("lag_rows")
    return session.sql(EVALUATE_SQL).orderBy(*OUTPUT_ORDER)
