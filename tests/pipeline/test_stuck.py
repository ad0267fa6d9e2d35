"""Threads stuck across consecutive dumps of one process (the batch's `stuck.jsonl`), on rows as
the executors emit them (kafkadiag.pipeline.work) and on a real run over a capture bundle."""

from __future__ import annotations

from typing import Any

from kafkadiag.pipeline.stuck import episode_sort_key, episodes_of_process


def row(
    unit: str, index: int, time: float | None, thread: str, stack: str, nid: str | None = "0x1"
) -> dict[str, Any]:
    return {
        "process": "host-a pid 7", "unit": unit, "source": f"{unit}#{index}", "dump_index": index,
        "dump_time": time, "thread": thread, "nid": nid, "why": "blocked", "stack_id": stack,
        "top_frame": f"at {stack}",
    }  # fmt: skip


def test_a_run_is_the_same_stack_in_consecutive_dumps_of_the_process() -> None:
    rows = [
        # three dumps of one process, in two files; the second file's dump comes first in time
        row("b.txt", 0, 100.0, "fetcher", "put"),
        row("a.txt", 0, 110.0, "fetcher", "put"),
        row("a.txt", 1, 120.0, "fetcher", "put"),
        row("b.txt", 0, 100.0, "worker", "lock"),
        row("a.txt", 1, 120.0, "worker", "lock"),  # not stuck at 110: two runs of one dump each
        row("b.txt", 0, 100.0, "poller", "sleep"),
        row("a.txt", 0, 110.0, "poller", "read"),  # its stack changed
    ]
    (episode,) = episodes_of_process(rows)
    assert episode == {
        "process": "host-a pid 7", "thread": "fetcher", "nid": "0x1", "why": "blocked",
        "top_frame": "at put", "dumps": 3, "first_time": 100.0, "last_time": 120.0, "stuck_s": 20.0,
        "first_source": "a.txt#0",
    }  # fmt: skip


def test_threads_sharing_a_name_are_told_apart_by_os_id_and_a_changed_stack_ends_a_run() -> None:
    rows = [
        row("a.txt", 0, 1.0, "worker", "take", nid="0x1"),
        row("a.txt", 1, 2.0, "worker", "take", nid="0x1"),
        row("a.txt", 2, 3.0, "worker", "put", nid="0x1"),
        row("a.txt", 3, 4.0, "worker", "put", nid="0x1"),
        row("a.txt", 0, 1.0, "worker", "take", nid="0x2"),
        row("a.txt", 1, 2.0, "worker", "take", nid="0x2"),
    ]
    episodes = sorted(episodes_of_process(rows), key=episode_sort_key)
    assert [(e["nid"], e["top_frame"], e["first_time"], e["dumps"]) for e in episodes] == [
        ("0x1", "at take", 1.0, 2), ("0x1", "at put", 3.0, 2), ("0x2", "at take", 1.0, 2),
    ]  # fmt: skip


def test_dumps_without_a_time_come_after_the_timed_ones_in_file_order() -> None:
    rows = [
        row("c.txt", 0, None, "fetcher", "put"),
        row("a.txt", 0, 50.0, "fetcher", "put"),
        row("b.txt", 0, None, "fetcher", "put"),
    ]
    (episode,) = episodes_of_process(rows)
    assert episode["dumps"] == 3 and episode["first_time"] == episode["last_time"] == 50.0
    assert episode["stuck_s"] == 0.0
    untimed = [row("b.txt", 0, None, "t", "s"), row("c.txt", 0, None, "t", "s")]
    (episode,) = episodes_of_process(untimed)
    assert episode["first_time"] is None and episode["stuck_s"] is None


def test_episodes_sort_with_unknown_os_ids_and_times_first() -> None:
    episodes = [
        {"process": "p", "thread": "t", "nid": "0x2", "first_time": 1.0, "first_source": "a", "dumps": 2},
        {"process": "p", "thread": "t", "nid": None, "first_time": 5.0, "first_source": "a", "dumps": 2},
        {"process": "p", "thread": "t", "nid": "0x2", "first_time": None, "first_source": "a", "dumps": 2},
    ]
    ordered = sorted(episodes, key=episode_sort_key)
    assert [(e["nid"], e["first_time"]) for e in ordered] == [(None, 5.0), ("0x2", None), ("0x2", 1.0)]
