"""`kafkadiag lag --record DIR --keep AGE|SIZE`: a recording that cannot grow without bound."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafkadiag.collect.retention import Keep, parse_keep, prune
from kafkadiag.exitcodes import ExitCode
from tests.infra import workload
from tests.infra.cli import run
from tests.infra.workload import Cluster

DAY_MS = 86_400_000


def _record(cluster: Cluster, group: str, directory: Path, *options: str) -> None:
    code, _, err = run(
        [
            "lag",
            "--bootstrap-server",
            cluster.bootstrap,
            "--group",
            group,
            "--record",
            str(directory),
            *options,
        ]
    )
    assert code == ExitCode.OK, err


def _taken_at(path: Path) -> list[int]:
    return [json.loads(line)["taken_at_ms"] for line in path.read_text().splitlines()]


@pytest.fixture
def group(cluster: Cluster) -> str:
    topic = cluster.topic(1, {0: 5})
    name = workload.unique("recorded")
    workload.commit_offsets_without_joining(cluster.bootstrap, name, {(topic, 0): 2})
    return name


def test_a_size_keeps_the_newest_snapshots_within_it(cluster: Cluster, group: str, tmp_path: Path) -> None:
    # GIVEN the size of one recorded snapshot of this group
    _record(cluster, group, tmp_path / "one")
    line_bytes = (tmp_path / "one" / "lag-snapshots.jsonl").stat().st_size
    # WHEN eight are recorded with room for three
    recording = tmp_path / "kept"
    _record(
        cluster, group, recording, "--samples", "8", "--interval", "100ms", "--keep", f"{3 * line_bytes}b"
    )
    # THEN the file never holds more than three, the newest, and `lag history` reads them
    path = recording / "lag-snapshots.jsonl"
    assert path.stat().st_size <= 3 * line_bytes
    taken = _taken_at(path)
    assert 1 <= len(taken) <= 3 and taken == sorted(taken), taken
    code, out, err = run(["lag", "history", str(recording), "--format", "json"])
    assert code == ExitCode.OK, err
    assert json.loads(out)["taken_at_ms"] == taken[-1]


def test_an_age_drops_the_snapshots_older_than_it(cluster: Cluster, group: str, tmp_path: Path) -> None:
    # GIVEN a recording whose snapshots were taken 10, 9 and 8 days ago
    recording = tmp_path / "recording"
    _record(cluster, group, recording)
    path = recording / "lag-snapshots.jsonl"
    real = json.loads(path.read_text())
    old = [{**real, "taken_at_ms": real["taken_at_ms"] - days * DAY_MS} for days in (10, 9, 8)]
    path.write_text("".join(json.dumps(document) + "\n" for document in old))
    # WHEN a new snapshot is recorded with --keep 7d
    _record(cluster, group, recording, "--keep", "7d")
    # THEN only it is left
    (taken,) = _taken_at(path)
    assert taken > real["taken_at_ms"]


def test_keep_needs_a_recording_and_a_readable_value(tmp_path: Path) -> None:
    code, _, err = run(["lag", "--bootstrap-server", "127.0.0.1:1", "--group", "g", "--keep", "7d"])
    assert code == ExitCode.USAGE, err
    assert "--keep is the retention of --record DIR" in err
    code, _, err = run(
        [
            "lag",
            "--bootstrap-server",
            "127.0.0.1:1",
            "--group",
            "g",
            "--record",
            str(tmp_path),
            "--keep",
            "7 parsecs",
        ]
    )
    assert code == ExitCode.USAGE, err
    assert "neither an age" in err


@pytest.mark.parametrize(
    ("text", "keep"),
    [
        ("7d", Keep(max_age_s=7 * 86400)),
        ("36h", Keep(max_age_s=36 * 3600)),
        ("90m", Keep(max_age_s=5400)),
        ("2w", Keep(max_age_s=14 * 86400)),
        ("500MB", Keep(max_bytes=500_000_000)),
        ("2GiB", Keep(max_bytes=2 * 2**30)),
        ("1.5kb", Keep(max_bytes=1500)),
    ],
)
def test_keep_reads_ages_and_sizes(text: str, keep: Keep) -> None:
    assert parse_keep(text) == keep


@pytest.mark.parametrize("text", ["", "7", "0d", "-1d", "7 days", "d7"])
def test_keep_refuses_what_is_neither(text: str) -> None:
    with pytest.raises(ValueError):
        parse_keep(text)


def test_an_age_prunes_only_past_its_slack(tmp_path: Path) -> None:
    # GIVEN snapshots one per minute over 70 minutes, kept for an hour
    path = tmp_path / "lag-snapshots.jsonl"
    now_ms = 100 * 3_600_000
    lines = [json.dumps({"taken_at_ms": now_ms - minutes * 60_000}) + "\n" for minutes in range(70, -1, -1)]
    path.write_text("".join(lines))
    # THEN kept for 67 minutes, the oldest (70) is within the slack (a twentieth): no rewrite
    assert prune(str(path), Keep(max_age_s=67 * 60), now_ms) == 0
    assert len(path.read_text().splitlines()) == 71
    # WHEN kept for an hour, all older goes; a torn line at the end stays, for `lag history` to report
    with path.open("a") as handle:
        handle.write('{"taken_at_ms": 12')
    assert prune(str(path), Keep(max_age_s=3600), now_ms) == 10
    kept = path.read_text().splitlines()
    assert json.loads(kept[0])["taken_at_ms"] == now_ms - 3_600_000
    assert kept[-1] == '{"taken_at_ms": 12'


def test_damaged_lines_are_passed_over_in_bounded_pieces(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a recording with binary bytes, a line that is not an object, a string timestamp and a
    # line longer than any record may be (the bound lowered to 1 kB for the test)
    monkeypatch.setattr("kafkadiag.collect.retention._MAX_LINE_BYTES", 1024)
    path = tmp_path / "lag-snapshots.jsonl"
    now_ms = 100 * 3_600_000
    old = [json.dumps({"taken_at_ms": now_ms - minutes * 60_000}) + "\n" for minutes in (90, 80)]
    damaged = [b"\xff\xfe\n", b"[1, 2]\n", b'{"taken_at_ms": "soon"}\n', b"x" * 5000 + b"\n"]
    new = [json.dumps({"taken_at_ms": now_ms - minutes * 60_000}) + "\n" for minutes in (30, 0)]
    path.write_bytes("".join(old).encode() + b"".join(damaged) + "".join(new).encode())
    # WHEN kept for an hour
    dropped = prune(str(path), Keep(max_age_s=3600), now_ms)
    # THEN the old lines and the damaged ones before the first kept snapshot go, nothing crashes
    assert dropped == 6
    assert _taken_at(path) == [now_ms - 30 * 60_000, now_ms]
