"""Threads stuck across consecutive dumps of one process, with Spark SQL window functions.

Input: one row per (dump, thread) for threads whose unchanged stack would mean stuck (KD501's
test). Dumps of a process are ordered by their own timestamp, then by file and position. A run
("episode") is a thread (name and OS id) showing the same stack in consecutive dumps of its
process; it ends when the stack changes or the thread is not stuck in the next dump.
"""

from __future__ import annotations

EPISODES_SQL = """
WITH sequenced AS (
  SELECT t.*,
         DENSE_RANK() OVER (PARTITION BY process
                            ORDER BY dump_time ASC NULLS LAST, unit, dump_index) AS dump_seq
  FROM threads t
),
marked AS (
  SELECT *,
         CASE WHEN LAG(stack_id) OVER w = stack_id AND LAG(dump_seq) OVER w = dump_seq - 1
              THEN 0 ELSE 1 END AS starts_episode
  FROM sequenced
  WINDOW w AS (PARTITION BY process, thread, nid ORDER BY dump_seq)
),
numbered AS (
  SELECT *,
         SUM(starts_episode) OVER (PARTITION BY process, thread, nid ORDER BY dump_seq
                                   ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) AS episode
  FROM marked
)
SELECT process, thread, nid,
       FIRST(why) AS why,
       FIRST(top_frame) AS top_frame,
       COUNT(*) AS dumps,
       MIN(dump_time) AS first_time,
       MAX(dump_time) AS last_time,
       MAX(dump_time) - MIN(dump_time) AS stuck_s,
       MIN(source) AS first_source
FROM numbered
GROUP BY process, thread, nid, episode
HAVING COUNT(*) >= 2
"""

EPISODE_ORDER = ["process", "thread", "nid", "first_time"]
