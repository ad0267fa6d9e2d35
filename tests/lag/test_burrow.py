"""Burrow's evaluation rules (kafkadiag.lag.burrow): every case of Burrow's own evaluator test
table, then kafkadiag's own cases for what that table leaves out; and the same table of Burrow's
through `kafkadiag lag history`, where the window's samples become the observations."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafkadiag.collect.lagrecord import RECORD_FILE
from kafkadiag.lag import burrow
from kafkadiag.lag.burrow import Observation as O  # noqa: N817 - short, for readable tables
from kafkadiag.lag.snapshot import (
    SOURCE_KAFKA,
    SOURCE_ZOOKEEPER,
    BrokerPartition,
    CommittedOffset,
    GroupSnapshot,
    Snapshot,
    to_json,
)
from tests.infra.cli import group_of, partitions_of, run_json

# The table of linkedin/Burrow core/internal/evaluator/caching_test.go (commit 2676759d), as data:
# observations (offset, commit time ms, lag or None), the recent broker high watermarks, the
# current lag, "now" in SECONDS as Burrow passes it, the allowed lag; then what each check says
# (lag never within the allowed lag, index of an unrecovered-or-not rewind, stopped, stalled,
# lag not decreasing, caught up recently) and the status.
BURROW_CASES = [
    pytest.param(
        [
            O(1000, 100000, 0),
            O(2000, 200000, 50),
            O(3000, 300000, 100),
            O(4000, 400000, 150),
            O(5000, 500000, 200),
        ],
        [5200],
        200,
        600,
        0,
        (False, None, False, False, True, False),
        "OK",
        id="0: zero lag in the window",
    ),
    pytest.param(
        [
            O(1000, 100000, 0),
            O(2000, 200000, 50),
            O(3000, 300000, 100),
            O(4000, 400000, 150),
            O(5000, 500000, 200),
        ],
        [5200],
        200,
        900,
        0,
        (False, None, False, False, True, False),
        "OK",
        id="1: now - last equals the span: not stopped",
    ),
    pytest.param(
        [
            O(1000, 100000, 0),
            O(2000, 200000, 50),
            O(3000, 300000, 100),
            O(4000, 400000, 150),
            O(5000, 500000, 200),
        ],
        [5200],
        200,
        1000,
        0,
        (False, None, True, False, True, False),
        "STOP",
        id="2: stopped though caught up at the start",
    ),
    pytest.param(
        [
            O(1000, 100000, 50),
            O(2000, 200000, 100),
            O(3000, 300000, 150),
            O(4000, 400000, 200),
            O(5000, 500000, 250),
        ],
        [5250],
        250,
        1000,
        0,
        (True, None, True, False, True, False),
        "STOP",
        id="3: stopped, lag never zero",
    ),
    pytest.param(
        [
            O(1000, 100000, 0),
            O(1000, 200000, 50),
            O(1000, 300000, 100),
            O(1000, 400000, 150),
            O(1000, 500000, 200),
        ],
        [1200],
        200,
        600,
        0,
        (False, None, False, True, True, False),
        "OK",
        id="4: offset unmoved but lag zero once",
    ),
    pytest.param(
        [
            O(1000, 100000, 100),
            O(1000, 200000, 150),
            O(1000, 300000, 200),
            O(1000, 400000, 250),
            O(1000, 500000, 300),
        ],
        [1300],
        300,
        600,
        0,
        (True, None, False, True, True, False),
        "STALL",
        id="5: stalled, lag growing",
    ),
    pytest.param(
        [
            O(1000, 100000, 100),
            O(1000, 200000, 100),
            O(1000, 300000, 100),
            O(1000, 400000, 100),
            O(1000, 500000, 100),
        ],
        [1100],
        100,
        600,
        0,
        (True, None, False, True, True, False),
        "STALL",
        id="6: stalled, lag steady",
    ),
    pytest.param(
        [
            O(1000, 100000, 100),
            O(2000, 200000, 150),
            O(3000, 300000, 200),
            O(2000, 400000, 1250),
            O(4000, 500000, 300),
        ],
        [4300],
        300,
        600,
        0,
        (True, 3, False, False, False, False),
        "OK",
        id="7: rewind recovered",
    ),
    pytest.param(
        [
            O(1000, 100000, 50),
            O(2000, 200000, 100),
            O(3000, 300000, 150),
            O(4000, 400000, 200),
            O(5000, 500000, 250),
        ],
        [5250],
        0,
        1000,
        0,
        (True, None, True, False, True, False),
        "OK",
        id="8: current lag zero",
    ),
    pytest.param(
        [
            O(792748079, 1512224618356, 0),
            O(792748080, 1512224619362, 0),
            O(792748081, 1512224620366, 0),
            O(792748082, 1512224621367, 0),
            O(792748083, 1512224622370, 0),
            O(792748084, 1512224623373, 0),
            O(792748085, 1512224624378, 0),
            O(792748086, 1512224625379, 0),
            O(792748087, 1512224626383, 0),
            O(792748088, 1512224627383, 0),
            O(792748089, 1512224628383, 0),
            O(792748090, 1512224629388, 0),
            O(792748091, 1512224630391, 0),
            O(792748092, 1512224631394, 0),
            O(792748093, 1512224632397, 0),
        ],
        [792749024, 792749000, 792748800, 792748600, 792748500],
        931,
        1512224650,
        0,
        (False, None, True, False, True, False),
        "STOP",
        id="9: stopped while new records arrived",
    ),
    pytest.param(
        [
            O(792748079, 1512224618356, 0),
            O(792748080, 1512224619362, 0),
            O(792748081, 1512224620366, 0),
            O(792748082, 1512224621367, 0),
            O(792748083, 1512224622370, 0),
            O(792748084, 1512224623373, 0),
            O(792748085, 1512224624378, 0),
            O(792748086, 1512224625379, 0),
            O(792748087, 1512224626383, 0),
            O(792748088, 1512224627383, 0),
            O(792748089, 1512224628383, 0),
            O(792748090, 1512224629388, 0),
            O(792748091, 1512224630391, 0),
            O(792748092, 1512224631394, 0),
            O(792748093, 1512224632397, 0),
        ],
        [792748094, 792748093, 792748093, 792748093],
        1,
        1512224650,
        0,
        (False, None, True, False, True, True),
        "OK",
        id="10: caught up recently: not stopped",
    ),
    pytest.param(
        [
            O(1000, 100000, 0),
            O(1500, 150000, None),
            O(2000, 200000, 50),
            O(2500, 250000, None),
            O(3000, 300000, 100),
            O(3500, 350000, None),
            O(4000, 400000, 150),
            O(4500, 450000, None),
            O(5000, 500000, 200),
            O(5500, 550000, None),
        ],
        [5700],
        200,
        600,
        0,
        (False, None, False, False, True, False),
        "OK",
        id="11: unknown lags are skipped",
    ),
    pytest.param(
        [O(1000, 100000, 2), O(2000, 200000, 1), O(2000, 300000, 1)],
        [2001],
        1,
        550,
        1,
        (False, None, True, False, False, False),
        "OK",
        id="12: current lag within the allowed lag",
    ),
    pytest.param(
        [
            O(1000, 100000, 100),
            O(1000, 200000, 150),
            O(1000, 300000, 200),
            O(1000, 400000, 250),
            O(1000, 500000, 300),
        ],
        [1300],
        300,
        600,
        99,
        (True, None, False, True, True, False),
        "STALL",
        id="13: stalled above the allowed lag",
    ),
    pytest.param(
        [
            O(1000, 100000, 100),
            O(2000, 200000, 150),
            O(3000, 300000, 200),
            O(2000, 400000, 1250),
            O(4000, 500000, 300),
        ],
        [4300],
        300,
        600,
        99,
        (True, 3, False, False, False, False),
        "OK",
        id="14: rewind recovered, with an allowed lag",
    ),
    pytest.param(
        [
            O(1000, 100000, 100),
            O(2000, 200000, 150),
            O(3000, 300000, 200),
            O(2000, 400000, 1250),
            O(2500, 500000, 300),
        ],
        [4300],
        300,
        600,
        0,
        (True, 3, False, False, False, False),
        "REWIND",
        id="15: rewind not recovered",
    ),
]


@pytest.mark.parametrize(
    ("observations", "recent_marks", "current_lag", "now_s", "allowed_lag", "checks", "expected"),
    BURROW_CASES,
)
def test_burrows_own_cases(
    observations: list[O],
    recent_marks: list[int],
    current_lag: int,
    now_s: int,
    allowed_lag: int,
    checks: tuple[bool, int | None, bool, bool, bool, bool],
    expected: str,
) -> None:
    now_ms = now_s * 1000
    assert (
        burrow.lag_never_within(observations, allowed_lag),
        burrow.rewind_index(observations),
        burrow.offsets_stopped(observations, now_ms),
        burrow.offsets_stalled(observations),
        burrow.lag_not_decreasing(observations),
        burrow.caught_up_recently(observations, recent_marks),
    ) == checks
    assert burrow.partition_status(observations, current_lag, now_ms, recent_marks, allowed_lag) == expected


@pytest.mark.parametrize(
    ("observations", "current_lag", "now_ms", "recent_marks", "allowed_lag", "expected"),
    [
        pytest.param([], 5, 1000, [], 0, "OK", id="no observation: nothing can be told"),
        pytest.param([O(10, 1000, 5)], 5, 1001, [15], 0, "STOP", id="one commit, any time later: stopped"),
        pytest.param([O(10, 1000, 5)], 5, 1000, [15], 0, "STALL", id="one commit, evaluated at its time"),
        pytest.param(
            [O(10, 1000, 5), O(10, 2000, 0), O(10, 3000, 7)], 7, 3500, [17], 0, "OK", id="zero lag once"
        ),
        pytest.param(
            [O(10, 1000, 5), O(10, 2000, 0), O(10, 3000, 7)], 7, 9000, [17], 0, "STOP",
            id="zero lag once, then stopped: STOP comes first",
        ),
        pytest.param(
            [O(100, 1000, 5), O(90, 2000, 15), O(95, 3000, 10)], 10, 3500, [105], 0, "REWIND",
            id="rewind not recovered",
        ),
        pytest.param(
            [O(100, 1000, 5), O(90, 2000, 15), O(100, 3000, 20)], 20, 3500, [120], 0, "WARN",
            id="rewind recovered, lag never decreasing after it",
        ),
        pytest.param(
            [O(10, 1000, None), O(10, 2000, None)], 7, 2500, [], 0, "STALL",
            id="unknown lags never count as caught up",
        ),
        pytest.param(
            [O(10, 1000, 5), O(12, 2000, None), O(14, 3000, 4)], 4, 3500, [18], 0, "OK",
            id="an unknown lag between two known ones is skipped",
        ),
    ],
)  # fmt: skip
def test_cases_of_our_own(
    observations: list[O],
    current_lag: int,
    now_ms: int,
    recent_marks: list[int],
    allowed_lag: int,
    expected: str,
) -> None:
    assert burrow.partition_status(observations, current_lag, now_ms, recent_marks, allowed_lag) == expected


@pytest.mark.parametrize(
    ("statuses", "expected"),
    [
        ([], "OK"),
        (["OK", "OK"], "OK"),
        (["OK", "WARN"], "WARN"),
        (["WARN", "STALL"], "ERR"),
        (["STOP"], "ERR"),
        (["REWIND", "WARN"], "ERR"),
    ],
)
def test_group_status_is_the_worst_capped_at_err(statuses: list[str], expected: str) -> None:
    assert burrow.group_status(statuses) == expected


# ---- Burrow's cases through `kafkadiag lag history` (issue 32) -------------------------------
# Each case becomes a recording, as kafkadiag would have sampled what Burrow stored: one snapshot
# at each commit's time (committed offset, high watermark = offset + the commit's lag, unknown
# where Burrow's lag is nil), then one snapshot per recent broker offset between the last commit
# and "now" (offset unchanged), and a last one at "now" whose high watermark gives the current
# lag. `lag history` evaluates Kafka-stored offsets as of its last snapshot, so "now" is sampled.
# Twice: with commit times (the old consumer's offset znode mtime) and without (Kafka-stored
# offsets, where OffsetFetch gives none).

# Without commit times a commit that repeats the offset leaves no trace: Burrow's cases that
# commit one offset several times read as one commit followed by silence, STOP. Burrow says OK
# for case 4 (its lag was zero once) and STALL for 5, 6 and 13 (committing without progress);
# docs/lag.md, "Differences from Burrow".
WITHOUT_COMMIT_TIMES_DIFFERS = {
    "4: offset unmoved but lag zero once": "STOP",
    "5: stalled, lag growing": "STOP",
    "6: stalled, lag steady": "STOP",
    "13: stalled above the allowed lag": "STOP",
}


def burrow_case_as_recording(
    directory: Path,
    observations: list[O],
    recent_marks: list[int],
    current_lag: int,
    now_s: int,
    with_commit_times: bool,
) -> int:
    """Write the case's snapshots as `lag --record` does; returns how many."""
    last = observations[-1]
    now_ms = now_s * 1000

    def sample(at_ms: int, commit: O, high_watermark: int | None) -> Snapshot:
        source = SOURCE_ZOOKEEPER if with_commit_times else SOURCE_KAFKA
        offset = CommittedOffset(
            "t", 0, commit.offset, commit_time_ms=commit.timestamp_ms if with_commit_times else None
        )
        mark = (
            BrokerPartition("t", 0, leader=0, high_watermark=high_watermark)
            if high_watermark is not None
            else BrokerPartition("t", 0, leader=0, error="high watermark not read")
        )
        group = GroupSnapshot("g", source, offsets=(offset,))
        return Snapshot(taken_at_ms=at_ms, groups=(group,), partitions=(mark,))

    snapshots = [
        sample(commit.timestamp_ms, commit, commit.offset + commit.lag if commit.lag is not None else None)
        for commit in observations
    ]
    gap = now_ms - last.timestamp_ms
    snapshots += [
        sample(last.timestamp_ms + gap * (index + 1) // (len(recent_marks) + 1), last, mark)
        for index, mark in enumerate(recent_marks)
    ]
    snapshots.append(sample(now_ms, last, last.offset + current_lag))
    directory.mkdir()
    with open(directory / RECORD_FILE, "w", encoding="utf-8") as record:
        for snapshot in snapshots:
            record.write(json.dumps(to_json(snapshot)) + "\n")
    return len(snapshots)


@pytest.mark.parametrize("with_commit_times", [True, False], ids=["commit times", "no commit times"])
@pytest.mark.parametrize(
    ("observations", "recent_marks", "current_lag", "now_s", "allowed_lag", "checks", "expected"),
    BURROW_CASES,
)
def test_burrows_own_cases_through_lag_history(
    observations: list[O],
    recent_marks: list[int],
    current_lag: int,
    now_s: int,
    allowed_lag: int,
    checks: tuple[bool, int | None, bool, bool, bool, bool],
    expected: str,
    with_commit_times: bool,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    # GIVEN Burrow's case recorded as kafkadiag would have sampled it
    count = burrow_case_as_recording(
        tmp_path / "record", observations, recent_marks, current_lag, now_s, with_commit_times
    )
    # WHEN `lag history` evaluates the whole recording, with Burrow's allowed lag
    record = str(tmp_path / "record")
    window = ["--samples", str(count), "--allowed-lag", str(allowed_lag)]
    document = run_json(["lag", "history", record, *window])
    (partition,) = partitions_of(document, "g").values()
    # THEN the status is Burrow's, or the documented difference
    case = request.node.callspec.id.rsplit("-", 1)[0]  # "<Burrow's case>-<commit times or not>"
    if not with_commit_times:
        expected = WITHOUT_COMMIT_TIMES_DIFFERS.get(case, expected)
    assert partition["lag"] == current_lag
    assert partition["status"] == expected
    assert group_of(document, "g")["status"] == burrow.group_status([expected])
