"""The lag chart of report.html: one group's lag over real time, as inline SVG.

A line per topic (and their sum when there are several), a time axis in UTC and a lag axis in
records, both with ticks at round values; a stretch without recordings is drawn as a gap (shaded
and labelled), never as a line across it; under the chart, the worst partition status of each
recording as a strip, with its legend. Every text from the inputs is escaped.
"""

from __future__ import annotations

import datetime
import html
import math
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from kafkadiag.report.safe_text import printable

# Burrow's statuses and kafkadiag's own, worst last; UNKNOWN: no high watermark to judge by.
STATUS_ORDER = ("UNKNOWN", "OK", "WARN", "STALL", "STOP", "REWIND", "ERR")
STATUS_COLOURS = {
    "UNKNOWN": "#bbbbbb",
    "OK": "#2e9d3a",
    "WARN": "#f0a000",
    "STALL": "#e2401c",
    "STOP": "#9e0b0b",
    "REWIND": "#8a2be2",
    "ERR": "#222222",
}
TOPIC_COLOURS = ("#1f6fd1", "#d1761f", "#2a9d8f", "#b5338a", "#6b8e23", "#8c564b", "#7f7f7f", "#17becf")
SUM_COLOUR = "#222222"
# A step between recordings this many times the usual one is a gap: the recorder was not running.
GAP_FACTOR = 2.5
TIME_STEPS_S = (1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400)

WIDTH, HEIGHT = 760, 220
LEFT, RIGHT, TOP, BOTTOM = 70, 20, 12, 40  # the plot area's margins: room for the axes' labels
STRIP = 14

Scale = Callable[[int], float]  # a value to its pixel position


@dataclass(frozen=True)
class Series:
    """One line of the chart: (time in ms, lag in records) in time order."""

    label: str
    colour: str
    points: Sequence[tuple[int, int]]
    dashed: bool = False


def e(value: object) -> str:
    """`value` as HTML text: markup escaped, and control characters as visible escapes (a report
    read with `less` or `cat` must not steer the terminal; U+202E must not reverse a name)."""
    return html.escape(printable(str(value)), quote=True)


def lag_chart(series: Sequence[Series], recordings: Sequence[tuple[int, str]]) -> str:
    """`recordings`: each recording's time and the worst status of its partitions."""
    times = sorted({time for time, _ in recordings} | {t for line in series for t, _ in line.points})
    first, last = times[0], times[-1]
    span = (last - first) or 1000
    top = _nice_top(max((lag for line in series for _, lag in line.points), default=0))
    plot_width, plot_height = WIDTH - LEFT - RIGHT, HEIGHT - TOP - BOTTOM

    def x(time_ms: int) -> float:
        return LEFT + plot_width * (time_ms - first) / span

    def y(lag: int) -> float:
        return TOP + plot_height * (1 - lag / top)

    gaps = find_gaps(times)
    parts = [
        _gap_marks(gaps, x),
        _lag_axis(top, y),
        _time_axis(first, last, x),
        *(_line(line, gaps, x, y) for line in series),
        _status_strip(recordings, gaps, x),
    ]
    return (
        f"<svg class='chart' width='{WIDTH}' height='{HEIGHT + STRIP + 8}' role='img' "
        f"aria-label='lag in records over time (UTC)'>"
        + "".join(parts)
        + "</svg>"
        + _series_legend(series)
        + status_legend()
    )


def find_gaps(times: Sequence[int]) -> list[tuple[int, int]]:
    """The steps between consecutive recordings much longer than the usual step."""
    steps = [later - earlier for earlier, later in zip(times, times[1:])]
    if len(steps) < 2:
        return []
    usual = statistics.median(steps)
    return [
        (earlier, later) for earlier, later in zip(times, times[1:]) if later - earlier > GAP_FACTOR * usual
    ]


def _within_gap(earlier: int, later: int, gaps: Sequence[tuple[int, int]]) -> bool:
    return any(start <= earlier and later <= end for start, end in gaps)


def _line(line: Series, gaps: Sequence[tuple[int, int]], x: Scale, y: Scale) -> str:
    """The line broken into segments at every gap; a lone point between gaps is a dot."""
    segments: list[list[tuple[int, int]]] = [[]]
    for point in line.points:
        if segments[-1] and _within_gap(segments[-1][-1][0], point[0], gaps):
            segments.append([])
        segments[-1].append(point)
    dash = " stroke-dasharray='5,3'" if line.dashed else ""
    drawn = []
    for segment in segments:
        if len(segment) == 1:
            ((time, lag),) = segment
            drawn.append(f"<circle cx='{x(time):.1f}' cy='{y(lag):.1f}' r='2.5' fill='{line.colour}'/>")
            continue
        points = " ".join(f"{x(time):.1f},{y(lag):.1f}" for time, lag in segment)
        drawn.append(
            f"<polyline class='series' fill='none' stroke='{line.colour}' stroke-width='2'{dash} "
            f"points='{points}'/>"
        )
    return f"<g><title>{e(line.label)}</title>{''.join(drawn)}</g>"


def _gap_marks(gaps: Sequence[tuple[int, int]], x: Scale) -> str:
    marks = []
    for start, end in gaps:
        left, right = x(start), x(end)
        marks.append(
            f"<rect class='gap' x='{left:.1f}' y='{TOP}' width='{right - left:.1f}' "
            f"height='{HEIGHT - TOP - BOTTOM}' fill='#f1f1f1'/>"
            f"<text class='gap-label' x='{(left + right) / 2:.1f}' y='{TOP + 14}' font-size='11' "
            f"text-anchor='middle' fill='#666'>no recording for {_duration((end - start) / 1000)}</text>"
        )
    return "".join(marks)


def _lag_axis(top: int, y: Scale) -> str:
    ticks = []
    for index in range(5):
        value = top // 4 * index
        ticks.append(
            f"<line x1='{LEFT - 4}' x2='{WIDTH - RIGHT}' y1='{y(value):.1f}' y2='{y(value):.1f}' "
            f"stroke='{'#444' if index == 0 else '#e4e4e4'}'/>"
            f"<text class='tick' x='{LEFT - 7}' y='{y(value) + 4:.1f}' font-size='11' "
            f"text-anchor='end'>{value:,}</text>"
        )
    middle = TOP + (HEIGHT - TOP - BOTTOM) / 2
    return (
        "<g class='axis lag-axis'>"
        + "".join(ticks)
        + f"<text class='axis-title' x='14' y='{middle:.0f}' font-size='12' text-anchor='middle' "
        f"transform='rotate(-90 14 {middle:.0f})'>lag (records)</text></g>"
    )


def _time_axis(first: int, last: int, x: Scale) -> str:
    span_s = max((last - first) / 1000, 1)
    step_s = next((step for step in TIME_STEPS_S if span_s / step <= 6), TIME_STEPS_S[-1])
    tick = math.ceil(first / 1000 / step_s) * step_s
    baseline = HEIGHT - BOTTOM
    ticks = []
    while tick * 1000 <= last:
        left = x(tick * 1000)
        ticks.append(
            f"<line x1='{left:.1f}' x2='{left:.1f}' y1='{baseline}' y2='{baseline + 4}' stroke='#444'/>"
            f"<text class='tick' x='{left:.1f}' y='{baseline + 16}' font-size='11' "
            f"text-anchor='middle'>{_clock(tick, step_s)}</text>"
        )
        tick += step_s
    start = datetime.datetime.fromtimestamp(first / 1000, datetime.timezone.utc)
    return (
        "<g class='axis time-axis'>"
        + f"<line x1='{LEFT}' x2='{WIDTH - RIGHT}' y1='{baseline}' y2='{baseline}' stroke='#444'/>"
        + "".join(ticks)
        + f"<text class='axis-title' x='{LEFT + (WIDTH - LEFT - RIGHT) / 2:.0f}' y='{HEIGHT - 4}' "
        f"font-size='12' text-anchor='middle'>{_time_title(start, first, last)}</text></g>"
    )


def _time_title(start: datetime.datetime, first: int, last: int) -> str:
    if first == last:
        return f"time (UTC): one recording, at {start:%Y-%m-%d %H:%M:%S}"
    return f"time (UTC) from {start:%Y-%m-%d %H:%M:%S}, {_duration((last - first) / 1000)} in all"


def _status_strip(recordings: Sequence[tuple[int, str]], gaps: Sequence[tuple[int, int]], x: Scale) -> str:
    """Each recording's status from its time to the next recording's (not across a gap)."""
    cells = []
    ordered = sorted(recordings)
    for index, (time, status) in enumerate(ordered):
        following = ordered[index + 1][0] if index + 1 < len(ordered) else None
        left = x(time)
        if following is None or _within_gap(time, following, gaps):
            width = 4.0
        else:
            width = max(x(following) - left, 2.0)
        cells.append(
            f"<rect class='status' x='{left:.1f}' y='{HEIGHT + 4}' width='{width:.1f}' height='{STRIP}' "
            f"fill='{STATUS_COLOURS.get(status, STATUS_COLOURS['UNKNOWN'])}'>"
            f"<title>{e(_clock(time // 1000, 1))} UTC: {e(status)}</title></rect>"
        )
    return "<g class='status-strip'>" + "".join(cells) + "</g>"


def _series_legend(series: Sequence[Series]) -> str:
    keys = "".join(
        f"<span class='key'><span class='swatch{' dashed' if line.dashed else ''}' "
        f"style='background:{line.colour}'></span>{e(line.label)}</span>"
        for line in series
    )
    return f"<div class='legend series-legend'>lines: {keys}</div>"


def status_legend() -> str:
    keys = "".join(
        f"<span class='key'><span class='swatch' style='background:{STATUS_COLOURS[status]}'></span>"
        f"{status}</span>"
        for status in STATUS_ORDER
    )
    return (
        f"<div class='legend status-legend'>strip: the worst partition status at each recording {keys}</div>"
    )


def worst_status(statuses: Sequence[str]) -> str:
    known = [status for status in statuses if status in STATUS_ORDER]
    return max(known, key=STATUS_ORDER.index) if known else "UNKNOWN"


def _nice_top(value: int) -> int:
    """Four steps of 1, 2 or 5 times a power of ten that reach `value`: round ticks."""
    raw = max(value / 4, 1)
    power = 10 ** math.floor(math.log10(raw))
    step = next(factor * power for factor in (1, 2, 5, 10) if factor * power >= raw)
    return 4 * step


def _clock(epoch_s: float, step_s: int) -> str:
    moment = datetime.datetime.fromtimestamp(epoch_s, datetime.timezone.utc)
    if step_s >= 86400:
        return f"{moment:%Y-%m-%d}"
    return f"{moment:%H:%M}" if step_s >= 60 else f"{moment:%H:%M:%S}"


def _duration(seconds: float) -> str:
    if seconds < 120:
        return f"{seconds:.0f} s"
    if seconds < 7200:
        return f"{seconds / 60:.0f} min"
    return f"{seconds / 3600:.1f} h"
