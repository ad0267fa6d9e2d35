"""Threads stuck across consecutive dumps of one process.

Input: one row per (dump, thread) for threads whose unchanged stack would mean stuck (KD501's
test), shuffled by process. A process's dumps are ordered by their own timestamp (unknown last),
then by file and position. A run ("episode") is a thread (name and OS id) showing the same stack
in consecutive dumps of its process; it ends when the stack changes or the thread is not stuck in
the next dump. Only runs of two dumps or more are episodes.

This runs in Python over the rows of one process at a time, not in Spark SQL: the rows are made
by Python tasks, and turning them into a DataFrame cost more than the whole evaluation.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any


def process_of(row: dict[str, Any]) -> str:
    return row["process"]


def episodes_of_process(rows: Iterable[dict[str, Any]]) -> Iterator[dict[str, Any]]:
    """The episodes in the stuck-thread rows of one process."""
    rows = list(rows)
    dump_order = sorted(
        {(row["dump_time"], row["unit"], row["dump_index"]) for row in rows}, key=_dump_sort_key
    )
    position = {dump: index for index, dump in enumerate(dump_order)}
    by_thread: dict[tuple[str, str | None], list[tuple[int, dict[str, Any]]]] = {}
    for row in rows:
        seq = position[(row["dump_time"], row["unit"], row["dump_index"])]
        by_thread.setdefault((row["thread"], row["nid"]), []).append((seq, row))
    for seen in by_thread.values():
        seen.sort(key=lambda item: item[0])
        run: list[tuple[int, dict[str, Any]]] = []
        for seq, row in seen:
            if run and (run[-1][1]["stack_id"] != row["stack_id"] or run[-1][0] != seq - 1):
                yield from _episode(run)
                run = []
            run.append((seq, row))
        yield from _episode(run)


def episode_sort_key(episode: dict[str, Any]) -> tuple[Any, ...]:
    """process, thread, OS id, first time (unknowns first), then the rest for ties."""
    return (
        episode["process"],
        episode["thread"],
        *_nulls_first(episode["nid"]),
        *_nulls_first(episode["first_time"]),
        episode["first_source"],
        episode["dumps"],
    )


def _episode(run: list[tuple[int, dict[str, Any]]]) -> Iterator[dict[str, Any]]:
    if len(run) < 2:
        return
    first = run[0][1]
    times = [row["dump_time"] for _, row in run if row["dump_time"] is not None]
    first_time = min(times) if times else None
    last_time = max(times) if times else None
    yield {
        "process": first["process"],
        "thread": first["thread"],
        "nid": first["nid"],
        "why": first["why"],
        "top_frame": first["top_frame"],
        "dumps": len(run),
        "first_time": first_time,
        "last_time": last_time,
        "stuck_s": None if first_time is None or last_time is None else last_time - first_time,
        "first_source": min(row["source"] for _, row in run),
    }


def _dump_sort_key(dump: tuple[float | None, str, int]) -> tuple[Any, ...]:
    time, unit, index = dump
    return (time is None, time or 0.0, unit, index)


def _nulls_first(value: Any) -> tuple[bool, Any]:
    return (value is not None, value if value is not None else "")
