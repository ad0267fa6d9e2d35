"""The parts of report.html that decide what a reader sees, on inputs made to corner them: labels
of paths that share a long beginning, pauses between recordings, the order of the groups, and
text from the inputs that looks like markup. (test_report_in_a_browser.py renders a real run.)
"""

from __future__ import annotations

import re
from typing import Any

from kafkadiag.pipeline import report_chart, report_html
from kafkadiag.pipeline.report_chart import Series, find_gaps, lag_chart


def test_paths_that_share_a_long_beginning_get_short_unique_labels() -> None:
    # GIVEN eight dumps whose paths differ only at their end (once cut at 48 columns: all alike)
    base = "/var/log/incidents/2026-11-22/orders-service_vm-1796181563131-50cf3449"
    paths = [f"{base}/host-{n}/jstack.txt" for n in range(4)] + [
        f"{base}/host-{n}/kill3-stdout.log" for n in range(4)
    ]
    # WHEN they are labelled
    labels = report_html.short_labels(paths)
    # THEN every label is unique, short, and the end of its own path
    assert len(set(labels.values())) == 8
    for path, label in labels.items():
        assert len(label) <= report_html.LABEL_WIDTH and path.endswith(label), (path, label)
    assert labels[f"{base}/host-2/jstack.txt"] == "host-2/jstack.txt"


def test_a_name_that_is_the_ending_of_another_keeps_its_whole_name() -> None:
    names = ["jstack.txt", "host-1/jstack.txt", "host-2/jstack.txt"]
    assert report_html.short_labels(names) == {name: name for name in names}


def test_a_label_too_long_is_cut_in_the_middle_and_stays_unique() -> None:
    names = [f"{'a' * 30}-{n}-{'b' * 30}.log" for n in range(3)]
    labels = report_html.short_labels(names)
    assert all(len(label) == report_html.LABEL_WIDTH and "…" in label for label in labels.values())
    assert len(set(labels.values())) == 3


def test_a_pause_is_a_gap_and_steady_recordings_are_not() -> None:
    steady = [0, 1000, 2000, 3000, 4100, 5000]
    assert find_gaps(steady) == []
    paused = [0, 1000, 2000, 3000, 80_000, 81_000, 82_000]
    assert find_gaps(paused) == [(3000, 80_000)]
    assert find_gaps([0, 60_000]) == []  # two recordings: no usual step to compare with


def test_no_line_is_drawn_across_a_gap() -> None:
    # GIVEN a topic recorded every second, then not for 80 s, then again
    times = [0, 1000, 2000, 3000, 83_000, 84_000, 85_000]
    start = 1_795_000_000_000
    points = [(start + t, 100 * i) for i, t in enumerate(times)]
    svg = lag_chart([Series("topic orders", "#000", points)], [(t, "OK") for t, _ in points])
    # THEN two segments, the gap is shaded and says how long it was
    segments = re.findall(r"<polyline[^>]*points='([^']*)'", svg)
    assert len(segments) == 2 and [len(s.split()) for s in segments] == [4, 3]
    assert "no recording for 80 s" in svg
    # and the axes say what they measure
    assert "lag (records)" in svg and "time (UTC) from 2026-" in svg
    assert re.search(r">\d\d:\d\d:\d\d<", svg)


def test_lag_ticks_are_round_numbers_above_the_largest_lag() -> None:
    for largest, top in ((0, 4), (3, 4), (10_895, 20_000), (120, 200), (2_400, 4_000)):
        assert report_chart._nice_top(largest) == top, largest


def group_rows(group: str, statuses: list[str], lags: list[int]) -> list[dict[str, Any]]:
    return [
        {"group": group, "source": "kafka", "time_ms": 1000 * i, "lag": lag, "statuses": [status]}
        for i, (status, lag) in enumerate(zip(statuses, lags))
    ]


def test_groups_are_charted_worst_first() -> None:
    rows = (
        group_rows("a-healthy", ["OK", "OK"], [0, 0])
        + group_rows("b-stopped", ["OK", "STOP"], [5, 50])
        + group_rows("c-lagging", ["OK", "WARN"], [5, 900])
    )
    summary = {"counts": {}, "rules": {}, "findings_by_severity": {}}
    page = report_html.render(summary, [], [], rows)
    order = [page.index(f"group {name}") for name in ("b-stopped", "c-lagging", "a-healthy")]
    assert order == sorted(order)


def test_text_from_the_inputs_is_escaped() -> None:
    finding = {
        "id": "1", "unit": "u", "process": "<b>p</b>", "host": None, "rule": "KD101", "severity": "error",
        "title": "t", "message": "<script>alert(1)</script>", "threads": ["[main]"],
        "evidence": [{"source": "x/<y>.txt", "line": 1, "text": "'\"&"}], "remedy": "<i>r</i>",
    }  # fmt: skip
    summary = {"counts": {}, "rules": {}, "findings_by_severity": {"error": 1}}
    page = report_html.render(summary, [finding], [], [])
    assert "<script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<i>r</i>" not in page and "<b>p</b>" not in page


def test_control_characters_from_the_inputs_are_visible_escapes() -> None:
    # A report.html read with `less` or `cat` printed a thread name's sequences raw to the terminal
    finding = {
        "id": "1", "unit": "u", "process": "p\x1b]0;pwned\x07", "host": None, "rule": "KD101",
        "severity": "error", "title": "t", "message": "m\x1b[2J", "threads": ["deadlock-\u202eA"],
        "evidence": [{"source": "x/\x1b[31m.txt", "line": 1, "text": "\x9b2J"}], "remedy": "r",
    }  # fmt: skip
    summary = {"counts": {}, "rules": {}, "findings_by_severity": {"error": 1}}
    page = report_html.render(summary, [finding], [], group_rows("g\x1b]0;x\x07", ["OK", "STOP"], [5, 50]))
    assert not [raw for raw in ("\x1b", "\x07", "\x9b", "\u202e") if raw in page]
    assert "p\\x1b]0;pwned\\x07" in page and "deadlock-\\u202eA" in page


def test_a_single_recording_is_a_dot_and_says_so() -> None:
    start = 1_795_000_000_000
    svg = lag_chart([Series("topic orders", "#000", [(start, 7)])], [(start, "STOP")])
    assert "<polyline" not in svg and svg.count("<circle") == 1
    assert "one recording, at 2026-" in svg
