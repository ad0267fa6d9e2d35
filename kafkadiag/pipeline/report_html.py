"""report.html: one self-contained page (inline CSS and SVG, no script, nothing fetched) with the
batch run's counts, per group its lag and status over time, the findings of every process with
their message, evidence and remedy, and the threads stuck across dumps. Every text from the inputs
is HTML-escaped; long paths are shown by their shortest unique ending, in full on hover."""

from __future__ import annotations

import collections
from collections.abc import Iterable, Sequence
from typing import Any

from kafkadiag.pipeline.report_chart import (
    STATUS_ORDER,
    SUM_COLOUR,
    TOPIC_COLOURS,
    Series,
    e,
    lag_chart,
    worst_status,
)

SEVERITY_ORDER = ("error", "warning", "info")
SEVERITY_COLOURS = {"error": "#c62828", "warning": "#e08600", "info": "#1e6fc4"}
# Bounds that keep the page readable in a browser; everything is in findings.jsonl and stuck.jsonl.
MAX_GROUPS = 50
MAX_PROCESSES = 100
MAX_FINDINGS_PER_PROCESS = 50
MAX_EPISODES = 30
LABEL_WIDTH = 44
BAR_LABEL_WIDTH = 50  # what fits left of the bars

STYLE = """
body{font-family:system-ui,sans-serif;margin:2em;color:#222;max-width:70em}h1{font-size:1.5em}
h2{font-size:1.2em;margin-top:2em;border-bottom:1px solid #ddd}h3{font-size:1em;margin:1.2em 0 .2em}
table{border-collapse:collapse;font-size:.9em}td,th{border:1px solid #ccc;padding:.2em .5em;text-align:left}
.num{text-align:right}svg{display:block;margin:.5em 0}.muted{color:#777}
.sev{display:inline-block;min-width:4.5em;padding:0 .4em;border-radius:3px;color:#fff;font-size:.85em;
text-align:center;margin-right:.4em}
.sev-error{background:#c62828}.sev-warning{background:#e08600}.sev-info{background:#1e6fc4}
details{margin:.3em 0}details.process{border:1px solid #ddd;border-radius:4px;padding:.3em .6em}
details.process>summary{font-weight:600;cursor:pointer}details.finding{margin-left:1em}
details.finding>summary{cursor:pointer}.body{margin:.3em 0 .6em 1.5em}
pre.evidence{background:#f6f6f6;padding:.4em;overflow-x:auto;font-size:.85em;margin:.2em 0}
.legend{font-size:.85em;margin:.2em 0}.key{margin-left:.9em;white-space:nowrap}
.swatch{display:inline-block;width:1.4em;height:.8em;margin-right:.3em;vertical-align:middle}
.swatch.dashed{height:.25em}
"""


def render(
    summary: dict[str, Any],
    findings: list[dict[str, Any]],
    episodes: list[dict[str, Any]],
    lag_over_time: list[dict[str, Any]],
    topic_lag_over_time: Sequence[dict[str, Any]] = (),
) -> str:
    """`lag_over_time`: per group and recording, the lag summed over its partitions and their
    statuses; `topic_lag_over_time`: the same lag per topic."""
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<title>kafkadiag batch report</title>",
        f"<style>{STYLE}</style></head><body><h1>kafkadiag batch report</h1>",
        _overview(summary),
        _lag_section(lag_over_time, topic_lag_over_time),
        _findings_section(summary, findings),
        _stuck_section(episodes),
        "</body></html>\n",
    ]
    return "".join(parts)


def _overview(summary: dict[str, Any]) -> str:
    counts = ", ".join(
        f"{e(name.replace('_', ' '))}: <b>{value:,}</b>" for name, value in summary["counts"].items()
    )
    by_severity = summary.get("findings_by_severity", {})
    badges = "".join(
        f"<span class='sev sev-{level}'>{by_severity.get(level, 0):,} {level}</span>"
        for level in SEVERITY_ORDER
    )
    return f"<p>{counts}</p><p>findings by severity: {badges}</p>"


def short_labels(names: Iterable[str]) -> dict[str, str]:
    """Each name by its shortest ending of path parts that no other name shares, cut to
    LABEL_WIDTH in the middle; labels that come out alike are cut keeping the end instead, then
    the beginning, then not cut at all."""
    endings = _unique_endings(set(names))
    labels = {name: shorten(ending, LABEL_WIDTH) for name, ending in endings.items()}
    for cut in (_keep_end, _keep_beginning, lambda ending, _: ending):
        uses = collections.Counter(labels.values())
        alike = [name for name, label in labels.items() if uses[label] > 1]
        if not alike:
            return labels
        labels.update({name: cut(endings[name], LABEL_WIDTH) for name in alike})
    if len(set(labels.values())) < len(labels):
        return {name: name for name in endings}
    return labels


def _unique_endings(names: set[str]) -> dict[str, str]:
    """Per name, its fewest last path parts that no other name ends with."""
    parts = {name: tuple(name.split("/")) for name in names}
    endings: dict[str, str] = {}
    count = 1
    while len(endings) < len(parts):
        pending = [name for name in parts if name not in endings]
        seen = collections.Counter(parts[name][-count:] for name in parts)
        for name in pending:
            if seen[parts[name][-count:]] == 1 or count >= len(parts[name]):
                endings[name] = "/".join(parts[name][-count:])
        count += 1
    return endings


def shorten(text: str, width: int) -> str:
    """`text` cut in the middle to `width` characters: both ends of a path or name tell most."""
    if len(text) <= width:
        return text
    half = (width - 1) // 2
    return f"{text[:half]}…{text[-(width - 1 - half) :]}"


def _keep_end(text: str, width: int) -> str:
    return text if len(text) <= width else f"…{text[-(width - 1) :]}"


def _keep_beginning(text: str, width: int) -> str:
    return text if len(text) <= width else f"{text[: width - 1]}…"


def _labelled(name: str, labels: dict[str, str], kind: str = "label") -> str:
    """A short label with the full name as its tooltip."""
    return f"<span class='{kind}' title='{e(name)}'>{e(labels.get(name, name))}</span>"


def _lag_section(over_time: list[dict[str, Any]], by_topic: Sequence[dict[str, Any]]) -> str:
    """A chart per group, the worst first: past MAX_GROUPS, the rest are named by count only."""
    heading = "<h2>Lag and status over time, per group</h2>"
    if not over_time:
        return heading + "<p class='muted'>no lag history in the inputs</p>"
    groups: dict[tuple[str, str], list[dict[str, Any]]] = collections.defaultdict(list)
    for row in over_time:
        groups[(row["group"], row["source"])].append(row)
    topics: dict[tuple[str, str], dict[str, list[tuple[int, int]]]] = collections.defaultdict(
        lambda: collections.defaultdict(list)
    )
    for row in sorted(by_topic, key=lambda row: row["time_ms"]):
        topics[(row["group"], row["source"])][row["topic"]].append((row["time_ms"], row["lag"]))
    sections = [heading]
    for rows in groups.values():
        rows.sort(key=lambda row: row["time_ms"])
    ranked = sorted(groups.items(), key=_latest_first)
    for (group, source), rows in ranked[:MAX_GROUPS]:
        series = _group_series(rows, topics.get((group, source), {}))
        recordings = [(row["time_ms"], worst_status(row["statuses"])) for row in rows]
        sections.append(
            f"<h3>group {e(group)} <span class='muted'>({e(source)})</span></h3>"
            + lag_chart(series, recordings)
        )
    if len(ranked) > MAX_GROUPS:
        sections.append(f"<p class='muted'>{len(ranked) - MAX_GROUPS:,} more groups in lag.jsonl</p>")
    return "".join(sections)


def _latest_first(item: tuple[tuple[str, str], list[dict[str, Any]]]) -> tuple[Any, ...]:
    """The groups worst at their latest recording first, then by their lag then, then by name."""
    (group, source), rows = item
    latest = rows[-1]
    return (-STATUS_ORDER.index(worst_status(latest["statuses"])), -latest["lag"], group, source)


def _group_series(rows: list[dict[str, Any]], topics: dict[str, list[tuple[int, int]]]) -> list[Series]:
    """A line per topic; with several topics, their sum too (dashed)."""
    lines = [
        Series(f"topic {topic}", TOPIC_COLOURS[index % len(TOPIC_COLOURS)], points)
        for index, (topic, points) in enumerate(sorted(topics.items()))
    ]
    if len(lines) != 1:
        total = [(row["time_ms"], row["lag"]) for row in rows]
        lines.append(Series("all topics", SUM_COLOUR, total, dashed=bool(lines)))
    return lines


def _bars(items: list[tuple[str, float, str]], labels: dict[str, str], unit: str = "") -> str:
    """Horizontal bars: (name, value, colour) each, the name shown by its short label."""
    if not items:
        return "<p class='muted'>none</p>"
    width, row, label_width = 760, 18, 330
    top = max(value for _, value, _ in items) or 1
    rows = []
    for index, (name, value, colour) in enumerate(items):
        y = index * row
        length = max(1.0, (width - label_width - 80) * value / top)
        rows.append(
            f"<text x='0' y='{y + 13}' font-size='12'><title>{e(name)}</title>"
            f"{e(shorten(labels.get(name, name), BAR_LABEL_WIDTH))}</text>"
            f"<rect x='{label_width}' y='{y + 3}' width='{length:.1f}' height='{row - 6}' fill='{colour}'/>"
            f"<text x='{label_width + length + 4:.1f}' y='{y + 13}' font-size='12'>"
            f"{value:,.4g}{e(unit)}</text>"
        )
    return f"<svg width='{width}' height='{len(items) * row}' role='img'>{''.join(rows)}</svg>"


def _severity_legend() -> str:
    keys = "".join(
        f"<span class='key'><span class='swatch' style='background:{SEVERITY_COLOURS[level]}'></span>"
        f"{level}</span>"
        for level in SEVERITY_ORDER
    )
    return f"<div class='legend severity-legend'>colour: the rule's severity {keys}</div>"


def _findings_section(summary: dict[str, Any], findings: list[dict[str, Any]]) -> str:
    rules = [
        (f"{code} {entry['name']}", float(entry["findings"]), SEVERITY_COLOURS.get(entry["severity"], "#888"))
        for code, entry in summary["rules"].items()
    ]
    return (
        "<h2>Findings by rule</h2>"
        + _bars(rules, {})
        + _severity_legend()
        + "<h2>Findings by process</h2>"
        + _by_process(findings)
    )


def _by_process(findings: list[dict[str, Any]]) -> str:
    if not findings:
        return "<p class='muted'>no findings</p>"
    by_process: dict[str, list[dict[str, Any]]] = collections.defaultdict(list)
    for row in findings:
        by_process[row["process"] or row["unit"]].append(row)
    labels = short_labels(by_process)
    ranked = sorted(by_process.items(), key=lambda item: (_severity_key(item[1]), item[0]))
    blocks = [
        _process_block(process, rows, labels, first=index == 0)
        for index, (process, rows) in enumerate(ranked[:MAX_PROCESSES])
    ]
    if len(ranked) > MAX_PROCESSES:
        more = len(ranked) - MAX_PROCESSES
        blocks.append(f"<p class='muted'>{more:,} more processes in findings.jsonl</p>")
    return "".join(blocks)


def _severity_key(rows: list[dict[str, Any]]) -> tuple[int, ...]:
    counts = collections.Counter(row["severity"] for row in rows)
    return tuple(-counts[level] for level in SEVERITY_ORDER)


def _process_block(process: str, rows: list[dict[str, Any]], labels: dict[str, str], first: bool) -> str:
    """A process's findings, worst first; its worst finding is open when it is the page's worst."""
    counts = collections.Counter(row["severity"] for row in rows)
    badges = "".join(
        f"<span class='sev sev-{level}'>{counts[level]} {level}</span>"
        for level in SEVERITY_ORDER
        if counts[level]
    )
    host = rows[0].get("host")
    where = f" <span class='muted'>on {e(host)}</span>" if host else ""
    shown = sorted(rows, key=lambda row: (SEVERITY_ORDER.index(row["severity"]), row["rule"], row["id"]))
    body = "".join(
        _finding_block(row, is_open=first and index == 0)
        for index, row in enumerate(shown[:MAX_FINDINGS_PER_PROCESS])
    )
    if len(shown) > MAX_FINDINGS_PER_PROCESS:
        body += f"<p class='muted'>{len(shown) - MAX_FINDINGS_PER_PROCESS:,} more in findings.jsonl</p>"
    is_open = " open" if counts["error"] else ""
    return (
        f"<details class='process'{is_open}><summary>{badges}"
        f"{_labelled(process, labels, 'process-label')}{where}</summary>"
        f"{body}</details>"
    )


def _finding_block(row: dict[str, Any], is_open: bool) -> str:
    level = row["severity"]
    evidence = "\n".join(
        f"{item['source'].rsplit('/', 1)[-1]}:{item['line']}: {item['text']}" for item in row["evidence"]
    )
    threads = ", ".join(row["threads"])
    return (
        f"<details class='finding finding-{e(level)}'{' open' if is_open else ''}>"
        f"<summary><span class='sev sev-{e(level)}'>{e(level)}</span>"
        f"<b>{e(row['rule'])}</b> {e(row['title'])}</summary><div class='body'>"
        f"<p class='message'>{e(row['message'])}</p>"
        + (f"<p>threads: {e(threads)}</p>" if threads else "")
        + (f"<pre class='evidence'>{e(evidence)}</pre>" if evidence else "")
        + (f"<p class='remedy'><b>What to do:</b> {e(row['remedy'])}</p>" if row.get("remedy") else "")
        + "</div></details>"
    )


def _stuck_section(episodes: list[dict[str, Any]]) -> str:
    ranked = sorted(
        episodes, key=lambda ep: (-(ep["stuck_s"] or 0), -ep["dumps"], ep["process"], ep["thread"])
    )[:MAX_EPISODES]
    labels = short_labels(ep["process"] for ep in ranked)
    names = [f"{ep['thread']} ({labels[ep['process']]})" for ep in ranked]
    bars = [(name, float(ep["stuck_s"] or 0), "#4a7bd0") for name, ep in zip(names, ranked)]
    rows = "".join(
        f"<tr><td>{_labelled(ep['process'], labels)}</td><td>{e(ep['thread'])}</td><td>{e(ep['why'])}</td>"
        f"<td class='num'>{ep['dumps']}</td><td class='num'>{_seconds(ep['stuck_s'])}</td>"
        f"<td>{e(ep['top_frame'])}</td></tr>"
        for ep in ranked
    )
    return (
        "<h2>Stall episodes: threads stuck in the same frames across dumps (seconds)</h2>"
        + _bars(bars, {})
        + "<table><tr><th>process</th><th>thread</th><th>why</th><th>dumps</th><th>seconds</th>"
        + "<th>frame</th></tr>"
        + rows
        + "</table>"
    )


def _seconds(value: float | None) -> str:
    return "" if value is None else f"{value:.0f}"
