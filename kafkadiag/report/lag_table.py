"""The table for people: a summary line per group, then each group's partitions and findings."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TextIO

from kafkadiag.lag.model import GroupLag, LagReport, PartitionLag
from kafkadiag.report.texttable import render_table, stacked_columns

if TYPE_CHECKING:
    from kafkadiag.maxlag.model import MaxLagReport

NONE = "-"
# The columns that leave a row for the line under it when the row is wider than the terminal,
# least wanted first: what is long (notes, owners) before the numbers lag is judged by.
GROUP_COLUMNS_LEAST_WANTED = (
    "NOTES", "SOURCE", "PRODUCED", "CONSUMED", "MEMBERS", "CATCH-UP", "STATE", "PARTITIONS",
)  # fmt: skip
PARTITION_COLUMNS_LEAST_WANTED = (
    "NOTES", "OWNER", "CLIENT-ID", "HOST", "LOG-START", "VERDICT", "QUEUE", "STREAM", "GAP",
    "FETCHER-LAG", "TIME-LAG", "PRODUCED", "CONSUMED", "CATCH-UP", "SINCE-PROGRESS", "COMMITTED",
    "HIGH-WATERMARK",
)  # fmt: skip


def _number(value: int | None) -> str:
    return NONE if value is None else str(value)


def duration(seconds: float | None, at_least: bool = False) -> str:
    if seconds is None:
        return NONE
    prefix = "≥" if at_least else ""
    if seconds < 10:
        return f"{prefix}{seconds:.1f}s"
    if seconds < 120:
        return f"{prefix}{seconds:.0f}s"
    if seconds < 7200:
        return f"{prefix}{seconds / 60:.0f}m"
    if seconds < 172800:
        return f"{prefix}{seconds / 3600:.1f}h"
    return f"{prefix}{seconds / 86400:.1f}d"


def rate(value: float | None) -> str:
    return NONE if value is None else f"{value:.1f}/s"


def render_lag(stream: TextIO, report: LagReport, fetcher: MaxLagReport | None = None) -> None:
    """`fetcher`: the consumer's own metrics compared against this report (a metrics source was
    given): each partition row gets the fetcher's columns, and the clients' verdicts follow."""
    sampled = report.samples > 1
    headers = ["GROUP", "SOURCE", "STATE", "MEMBERS", "PARTITIONS", "TOTAL-LAG", "MAX-LAG"]
    if sampled:
        headers += ["STATUS", "CONSUMED", "PRODUCED", "CATCH-UP"]
    headers.append("NOTES")
    rows = []
    for group in report.groups:
        row = [
            group.group,
            group.source,
            group.state or NONE,
            str(len(group.members)),
            str(len(group.partitions)),
            _number(group.total_lag),
            _number(group.max_lag),
        ]
        if sampled:
            row += [
                group.status or NONE,
                rate(group.consumption_rate),
                rate(group.production_rate),
                _catch_up(group.catch_up_s, group.total_lag),
            ]
        row.append(_group_notes(group))
        rows.append(row)
    window = f", {report.samples} samples over {duration(report.window_s)}" if sampled else ""
    render_table(
        stream,
        f"Consumer groups ({len(report.groups)}{window})",
        headers,
        rows,
        caps=[60] * len(headers),
        right_aligned=(3, 4, 5, 6),
        stacked=stacked_columns(headers, GROUP_COLUMNS_LEAST_WANTED),
    )
    fetcher_cells = _fetcher_cells(fetcher)
    for group in report.groups:
        if group.exists and group.partitions:
            _render_partitions(stream, group, sampled, fetcher_cells)
        if group.findings:
            _render_findings(stream, group)
    if fetcher is not None:
        from kafkadiag.report.maxlag_table import render_client_verdicts

        render_client_verdicts(stream, fetcher)
    if report.errors:
        stream.write("Problems\n")
        for error in report.errors:
            stream.write(f"  {error}\n")
        stream.write("\n")


def _catch_up(seconds: float | None, lag: int | None) -> str:
    if lag == 0:
        return "0s"
    return duration(seconds) if seconds is not None else "never"


def _group_notes(group: GroupLag) -> str:
    notes = []
    if group.exists is False:
        notes.append("not found")
    notes += list(group.errors)[:2]
    errors = sum(1 for finding in group.findings if finding.severity == "error")
    warnings = sum(1 for finding in group.findings if finding.severity == "warning")
    if errors or warnings:
        notes.append(f"{errors} error(s), {warnings} warning(s)")
    unknown = sum(1 for partition in group.partitions if partition.lag is None)
    if unknown:
        notes.append(f"{unknown} partition(s) with unknown lag")
    return "; ".join(notes)


FetcherCells = Callable[[GroupLag, PartitionLag], list[str]]


def _fetcher_cells(fetcher: MaxLagReport | None) -> FetcherCells | None:
    """A partition's fetcher cells, or None when no metrics source was given (no such columns)."""
    if fetcher is None:
        return None
    from kafkadiag.maxlag.columns import columns_of, fetcher_columns
    from kafkadiag.report.maxlag_table import fetcher_cells

    columns = fetcher_columns(fetcher)
    return lambda group, partition: fetcher_cells(columns_of(columns, group, partition))


def _render_partitions(
    stream: TextIO, group: GroupLag, sampled: bool, fetcher_cells: FetcherCells | None = None
) -> None:
    headers = [
        "TOPIC",
        "PARTITION",
        "COMMITTED",
        "HIGH-WATERMARK",
        "LAG",
        "LOG-START",
        "OWNER",
    ]
    # The coordinator's view of the owning member, as kafka-consumer-groups --describe prints it.
    with_clients = any(partition.owner_client_id or partition.owner_host for partition in group.partitions)
    if with_clients:
        headers += ["HOST", "CLIENT-ID"]
    headers.append("SINCE-PROGRESS")
    if sampled:
        headers += ["STATUS", "CONSUMED", "PRODUCED", "TIME-LAG", "CATCH-UP"]
    fetcher_headers: tuple[str, ...] = ()
    if fetcher_cells is not None:
        from kafkadiag.report.maxlag_table import FETCHER_COLUMNS

        fetcher_headers = FETCHER_COLUMNS
    headers += fetcher_headers
    headers.append("NOTES")
    rows = [
        _partition_row(group, partition, with_clients, sampled, fetcher_cells)
        for partition in group.partitions
    ]
    for topic in group.topics:
        if len(group.topics) > 1 or topic.partitions > 1:
            row = [topic.topic, "total", "", "", str(topic.total_lag), "", "", ""]
            if sampled:
                row += ["", "", "", "", ""]
            row += [""] * len(fetcher_headers)
            row.append(f"{topic.unknown} unknown" if topic.unknown else "")
            rows.append(row)
    state = group.state or "state unknown"
    title = f"Group {group.group} ({group.source}, {state}, {len(group.members)} member(s))"
    render_table(
        stream,
        title,
        headers,
        rows,
        caps=[60] * len(headers),
        right_aligned=(1, 2, 3, 4, 5),
        stacked=stacked_columns(headers, PARTITION_COLUMNS_LEAST_WANTED),
        every_row="all partitions",  # one owner of every partition is said once, not per row
    )


def _partition_row(
    group: GroupLag,
    partition: PartitionLag,
    with_clients: bool,
    sampled: bool,
    fetcher_cells: FetcherCells | None,
) -> list[str]:
    row = [
        partition.topic,
        str(partition.partition),
        _number(partition.committed_offset),
        _number(partition.high_watermark),
        _number(partition.lag),
        _number(partition.log_start_offset),
        partition.owner or NONE,
    ]
    if with_clients:
        row += [partition.owner_host or NONE, partition.owner_client_id or NONE]
    row.append(duration(partition.since_progress_s, partition.since_progress_at_least))
    if sampled:
        row += [
            partition.status or NONE,
            rate(partition.consumption_rate),
            rate(partition.production_rate),
            duration(partition.time_lag_s),
            _catch_up(partition.catch_up_s, partition.lag),
        ]
    if fetcher_cells is not None:
        row += fetcher_cells(group, partition)
    row.append(_partition_notes(partition))
    return row


def _partition_notes(partition: PartitionLag) -> str:
    notes = list(partition.problems)
    committed = partition.committed_offset
    if (
        committed is not None
        and partition.log_start_offset is not None
        and committed < partition.log_start_offset
    ):
        notes.append(f"below log start: {partition.log_start_offset - committed} record(s) skipped")
    if (
        committed is not None
        and partition.high_watermark is not None
        and committed > partition.high_watermark
    ):
        notes.append("above high watermark")
    if partition.commits_without_lag:
        # The status was judged on these commits without knowing their lag: say so beside it.
        notes.append(f"{partition.commits_without_lag} commit(s) without lag (high watermark unknown)")
    return "; ".join(notes)


def _render_findings(stream: TextIO, group: GroupLag) -> None:
    """Each finding as dump analyze prints one: its severity in colour, its code, its message
    wrapped at the report's width; its evidence under it."""
    from kafkadiag.report.findings_text import BODY_INDENT, coded_lead
    from kafkadiag.report.textpage import Page

    page = Page(stream)
    page.line(f"Findings for {group.group}")
    for finding in group.findings:
        lead = coded_lead(page, finding.rule, severity=finding.severity.value)
        page.paragraph(f"{finding.name}: {finding.message}", indent=2, lead=lead)
        for line in finding.evidence:
            page.paragraph(line.text, indent=BODY_INDENT)
    page.line()
