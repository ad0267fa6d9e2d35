"""report.html: one self-contained page (inline CSS and SVG, no script, nothing fetched) with the
batch run's counts, findings by rule and host, stuck threads, and lag and status over time per
group. Every text from the inputs is HTML-escaped."""

from __future__ import annotations

import collections
import html
from typing import Any

STATUS_COLOURS = {
    "OK": "#3a3",
    "WARN": "#e90",
    "STALL": "#d33",
    "STOP": "#a00",
    "REWIND": "#90c",
    None: "#bbb",
}
STYLE = """
body{font-family:system-ui,sans-serif;margin:2em;color:#222}h1{font-size:1.5em}h2{font-size:1.2em;margin-top:2em}
table{border-collapse:collapse;font-size:.9em}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left}
.num{text-align:right}svg{display:block;margin:.5em 0}.muted{color:#777}
"""


def e(value: object) -> str:
    return html.escape(str(value), quote=True)


def render(
    summary: dict[str, Any],
    findings: list[dict[str, Any]],
    episodes: list[dict[str, Any]],
    lag_over_time: list[dict[str, Any]],
) -> str:
    counts = summary["counts"]
    parts = [
        "<!DOCTYPE html><html><head><meta charset='utf-8'><title>kafkadiag batch report</title>",
        f"<style>{STYLE}</style></head><body><h1>kafkadiag batch report</h1>",
        "<p>"
        + ", ".join(f"{e(name.replace('_', ' '))}: <b>{value:,}</b>" for name, value in counts.items())
        + "</p>",
        _findings_section(summary, findings),
        _stuck_section(episodes),
        _lag_section(lag_over_time),
        "</body></html>\n",
    ]
    return "".join(parts)


def _bars(items: list[tuple[str, float]], unit: str = "") -> str:
    if not items:
        return "<p class='muted'>none</p>"
    width, row, label = 720, 18, 300
    top = max(value for _, value in items) or 1
    rows = []
    for index, (name, value) in enumerate(items):
        y = index * row
        length = max(1.0, (width - label - 80) * value / top)
        rows.append(
            f"<text x='0' y='{y + 13}' font-size='12'>{e(name[:48])}</text>"
            f"<rect x='{label}' y='{y + 3}' width='{length:.1f}' height='{row - 6}' fill='#4a7bd0'/>"
            f"<text x='{label + length + 4:.1f}' y='{y + 13}' font-size='12'>{value:,.4g}{e(unit)}</text>"
        )
    return f"<svg width='{width}' height='{len(items) * row}' role='img'>{''.join(rows)}</svg>"


def _findings_section(summary: dict[str, Any], findings: list[dict[str, Any]]) -> str:
    by_rule = [
        (f"{code} {entry['name']}", float(entry["findings"])) for code, entry in summary["rules"].items()
    ]
    hosts = collections.Counter(row["host"] or row["process"] for row in findings)
    table = "".join(
        f"<tr><td>{e(entry['host'])}</td>"
        + "".join(
            f"<td class='num'>{entry['findings'].get(level, 0)}</td>"
            for level in ("error", "warning", "info")
        )
        + "</tr>"
        for entry in summary["worst_hosts"]
    )
    return (
        "<h2>Findings by rule</h2>"
        + _bars(by_rule)
        + "<h2>Findings by host</h2>"
        + _bars(sorted(((h, float(c)) for h, c in hosts.items()), key=lambda i: -i[1])[:30])
        + "<table><tr><th>host or process</th><th>error</th><th>warning</th><th>info</th></tr>"
        + table
        + "</table>"
    )


def _stuck_section(episodes: list[dict[str, Any]]) -> str:
    ranked = sorted(
        episodes, key=lambda ep: (-(ep["stuck_s"] or 0), -ep["dumps"], ep["process"], ep["thread"])
    )[:30]
    bars = [(f"{ep['thread']} ({ep['process']})", float(ep["stuck_s"] or 0)) for ep in ranked]
    rows = "".join(
        f"<tr><td>{e(ep['process'])}</td><td>{e(ep['thread'])}</td><td>{e(ep['why'])}</td>"
        f"<td class='num'>{ep['dumps']}</td><td class='num'>{_seconds(ep['stuck_s'])}</td>"
        f"<td>{e(ep['top_frame'])}</td></tr>"
        for ep in ranked
    )
    return (
        "<h2>Stall episodes: threads stuck in the same frames across dumps (seconds)</h2>"
        + _bars(bars, " s")
        + "<table><tr><th>process</th><th>thread</th><th>why</th><th>dumps</th><th>seconds</th>"
        + "<th>frame</th></tr>"
        + rows
        + "</table>"
    )


def _seconds(value: float | None) -> str:
    return "" if value is None else f"{value:.0f}"


def _lag_section(over_time: list[dict[str, Any]]) -> str:
    if not over_time:
        return "<h2>Lag over time</h2><p class='muted'>no lag history in the inputs</p>"
    by_group: dict[tuple[str, str], list[dict[str, Any]]] = collections.defaultdict(list)
    for row in over_time:
        by_group[(row["group"], row["source"])].append(row)
    sections = ["<h2>Lag and status over time, per group</h2>"]
    for (group, source), rows in sorted(by_group.items())[:50]:
        sections.append(f"<h3>{e(group)} <span class='muted'>({e(source)})</span></h3>" + _lag_chart(rows))
    return "".join(sections)


def _lag_chart(rows: list[dict[str, Any]]) -> str:
    width, height, strip = 720, 160, 12
    times = [row["time_ms"] for row in rows]
    totals = [row["lag"] for row in rows]
    worst = [_worst_status(row["statuses"]) for row in rows]
    span = (times[-1] - times[0]) or 1
    top = max(totals) or 1

    def x(t: int) -> float:
        return 40 + (width - 50) * (t - times[0]) / span

    points = " ".join(
        f"{x(t):.1f},{10 + (height - 20) * (1 - total / top):.1f}" for t, total in zip(times, totals)
    )
    cells = "".join(
        f"<rect x='{x(t):.1f}' y='{height + 4}' width='{max(2.0, (width - 50) / max(len(times), 1)):.1f}' "
        f"height='{strip}' fill='{STATUS_COLOURS.get(status, '#bbb')}'><title>{e(status)}</title></rect>"
        for t, status in zip(times, worst)
    )
    return (
        f"<svg width='{width}' height='{height + strip + 8}' role='img'>"
        f"<text x='0' y='14' font-size='11'>{top:,}</text>"
        f"<text x='0' y='{height - 4}' font-size='11'>0</text>"
        f"<polyline fill='none' stroke='#4a7bd0' stroke-width='2' points='{points}'/>{cells}</svg>"
    )


def _worst_status(statuses: Any) -> str | None:
    order = ["OK", "WARN", "STALL", "STOP", "REWIND"]
    known = [status for status in statuses if status in order]
    return max(known, key=order.index) if known else None
