"""The table for people: a verdict line per client, then each client's partitions, streams,
bound, evidence and what to do."""

from __future__ import annotations

from typing import TextIO

from kafkadiag.maxlag.columns import FetcherColumns
from kafkadiag.maxlag.model import VERDICT_FETCHER_ABSENT, BufferBound, ClientComparison, MaxLagReport
from kafkadiag.report.findings_text import coded_lead
from kafkadiag.report.textpage import Page
from kafkadiag.report.texttable import render_table

NONE = "-"


def _number(value: int | None) -> str:
    return NONE if value is None else str(value)


def render_maxlag(stream: TextIO, report: MaxLagReport) -> None:
    lag_from = ", ".join(f"{kind} {address}" for kind, address in report.lag_sources)
    checker = f"checker lag from {lag_from}" if lag_from else "checker lag not read"
    rows = []
    for client in report.clients:
        rows.append(
            [
                client.client_id,
                client.group or NONE,
                _verdict_cell(client),
                _number(client.max_lag),
                _number(client.fetcher_lag_total),
                _number(client.checker_lag_total),
                _number(client.gap_total),
                NONE if client.verdict == VERDICT_FETCHER_ABSENT else _bound_short(client.bound),
                _queues(client),
            ]
        )
    render_table(
        stream,
        f"MaxLag against checker lag: metrics from {report.metrics_source}, {checker}",
        ["CLIENT", "GROUP", "VERDICT", "MAX-LAG", "FETCHER-LAG", "CHECKER-LAG", "GAP", "BOUND", "QUEUES"],
        rows,
        caps=[40, 40, 30, 12, 12, 12, 12, 24, 40],
        right_aligned=(3, 4, 5, 6),
        stacked=(8, 7, 1),  # queues, bound, group: under the row when it is too wide
    )
    for client in report.clients:
        _render_client(stream, client)
    if report.errors:
        stream.write("Problems\n")
        for error in report.errors:
            stream.write(f"  {error}\n")
        stream.write("\n")
    if report.notes:
        stream.write(f"Notes on the metrics read from {report.metrics_source}\n")
        for note in report.notes:
            stream.write(f"  {note}\n")
        stream.write("\n")


def _verdict_cell(client: ClientComparison) -> str:
    """An unhealthy verdict shouts, with the code of its rule (`kafkadiag explain KD701`)."""
    if client.healthy:
        return client.verdict
    return f"{client.rule} {client.verdict.upper()}" if client.rule else client.verdict.upper()


def _bound_short(bound: BufferBound | None) -> str:
    if bound is None:
        return NONE
    if bound.records is not None:
        return f"{bound.records} records"
    return f"{bound.in_flight_bytes} bytes"


def _queues(client: ClientComparison) -> str:
    if not client.streams:
        return NONE
    return " ".join(
        f"{s.queue_size if s.queue_size is not None else '?'}/{s.capacity or '?'}" for s in client.streams
    )


def _render_client(stream: TextIO, client: ClientComparison) -> None:
    page = Page(stream)
    group = f" (group {client.group})" if client.group else ""
    # Without fetcher metrics the consumer's kind is not known: not said, and there is no bound.
    absent = client.verdict == VERDICT_FETCHER_ABSENT
    kind = "" if absent else f", {client.consumer} consumer, {client.naming} names"
    about = f"{client.title} -- client {client.client_id}{group}{kind}"
    page.paragraph(about, lead=coded_lead(page, client.rule, not client.healthy) if client.rule else "")
    page.paragraph(client.summary, indent=2)
    page.line()
    if client.partitions:
        _render_partitions(stream, client)
    if client.streams:
        _render_streams(stream, client)
    if client.bound is not None and not absent:
        stream.write(f"Bound on what {client.client_id} can hold between fetch and commit\n")
        for line in bound_lines(client.bound):
            stream.write(f"  {line}\n")
        stream.write("\n")
    stream.write("Settings\n")
    for setting in client.settings.settings:
        stream.write(f"  {setting.name}={setting.value} ({setting.source})\n")
    stream.write(
        f"  fetcher lag threshold {client.lag_threshold} records ({client.lag_threshold_source})\n\n"
    )
    stream.write("Evidence\n")
    for line in client.evidence:
        stream.write(f"  {line}\n")
    stream.write("\nWhat to do\n")
    page.paragraph(client.remedy, indent=2)
    page.line()
    if client.notes:
        stream.write(f"Notes on client {client.client_id}\n")
        for note in client.notes:
            page.paragraph(note, indent=2)
        page.line()


def _render_partitions(stream: TextIO, client: ClientComparison) -> None:
    render_table(
        stream,
        f"Partitions of {client.client_id}",
        [
            "TOPIC",
            "PARTITION",
            "FETCHER-LAG",
            "CHECKER-LAG",
            "COMMITTED",
            "HIGH-WATERMARK",
            "GAP",
            "STREAM",
            "OWNER",
            "NOTES",
        ],
        [
            [
                p.topic,
                str(p.partition),
                _number(p.fetcher_lag) if p.fetched or p.fetcher_source is None else "never",
                _number(p.checker_lag),
                _number(p.committed_offset),
                _number(p.high_watermark),
                _number(p.gap),
                p.stream or NONE,
                p.owner or NONE,
                "; ".join(p.problems),
            ]
            for p in client.partitions
        ],
        caps=[40, 9, 12, 12, 14, 14, 12, 30, 60, 80],
        right_aligned=(1, 2, 3, 4, 5, 6),
        stacked=(9, 8, 7, 4, 5),  # notes, owner, stream, committed, high watermark
    )


def _render_streams(stream: TextIO, client: ClientComparison) -> None:
    render_table(
        stream,
        f"Streams of {client.client_id} (FetchQueueSize)",
        ["TOPIC", "THREAD", "QUEUE", "CAPACITY", "STATE", "PARTITIONS", "OWNER"],
        [
            [
                s.topic,
                s.thread_id,
                _number(s.queue_size),
                _number(s.capacity),
                s.state,
                ",".join(str(p) for p in s.partitions) or NONE,
                s.owner or NONE,
            ]
            for s in client.streams
        ],
        caps=[40, 8, 8, 8, 8, 30, 60],
        right_aligned=(2, 3),
        stacked=(6, 5),  # owner, partitions
    )


def bound_lines(bound: BufferBound) -> list[str]:
    lines = [
        f"queued: {bound.streams} stream(s) x {bound.queued_max_message_chunks} chunks "
        f"(queued.max.message.chunks) x {bound.fetch_message_max_bytes} bytes (fetch.message.max.bytes) "
        f"= {bound.queued_bytes} bytes",
        f"in flight: {bound.streams} x ({bound.queued_max_message_chunks} + 1 being iterated) + "
        f"{bound.fetchers} fetcher(s) putting = {bound.in_flight_chunks} chunks "
        f"= {bound.in_flight_bytes} bytes"
        + (
            f" = {bound.in_flight_records} records at {bound.average_record_bytes:.1f} bytes per record"
            if bound.in_flight_records is not None and bound.average_record_bytes
            else ""
        ),
    ]
    if bound.uncommitted_records is not None and bound.consume_rate is not None:
        lines.append(
            f"uncommitted: {bound.consume_rate:.3g} records/s x {bound.auto_commit_interval_ms} ms "
            f"(auto.commit.interval.ms) + 1 = {bound.uncommitted_records} records"
        )
    if bound.records is not None:
        lines.append(f"total: {bound.records} records")
    lines += list(bound.notes)
    return lines


FETCHER_COLUMNS = ("FETCHER-LAG", "GAP", "STREAM", "QUEUE", "VERDICT")


def fetcher_cells(columns: FetcherColumns | None) -> list[str]:
    """The FETCHER_COLUMNS cells of one partition row ("-" where the fetcher says nothing)."""
    if columns is None:
        return [NONE] * len(FETCHER_COLUMNS)
    never = columns.measured and not columns.fetched
    queue = (
        f"{_number(columns.queue_size)}/{_number(columns.queue_capacity)}"
        if columns.queue_size is not None or columns.queue_capacity is not None
        else NONE
    )
    return [
        "never" if never else _number(columns.fetcher_lag),
        _number(columns.gap),
        columns.stream or NONE,
        queue,
        columns.verdict,
    ]


def render_client_verdicts(stream: TextIO, report: MaxLagReport) -> None:
    """A short verdict per client: what `kafkadiag lag` prints under its tables."""
    stream.write(f"Fetcher metrics from {report.metrics_source}\n")
    if not report.clients:
        stream.write("  no consumer fetcher metrics found\n")
    page = Page(stream)
    for client in report.clients:
        group = f"group {client.group}" if client.group else "no group matched"
        lead = coded_lead(page, client.rule, not client.healthy) if client.rule else ""
        page.paragraph(f"{client.title} -- client {client.client_id} ({group})", indent=2, lead=lead)
        page.paragraph(client.summary, indent=4)
        page.paragraph(f"what to do: {client.remedy}", indent=4)
    for error in report.errors:
        stream.write(f"  problem: {error}\n")
    for note in report.notes:
        stream.write(f"  note: {note}\n")
    stream.write("\n")
