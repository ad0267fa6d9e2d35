"""`kafkadiag dump parse` as rich tables: one block per dump, most telling parts first."""

from __future__ import annotations

from rich.console import Console
from rich.table import Table

from kafkadiag.dumps.summary import DumpSummary
from kafkadiag.report.dump_json import hex_id

# Rows shown per section; the rest is counted, and --format json has everything.
MAX_ROWS = 10
MAX_NAMES = 4
TOP_FRAMES = 3


def _names(names: tuple[str, ...]) -> str:
    shown = ", ".join(names[:MAX_NAMES])
    return shown + (f" (+{len(names) - MAX_NAMES} more)" if len(names) > MAX_NAMES else "")


def render_dump(console: Console, summary: DumpSummary) -> None:
    dump = summary.dump
    title = f"{dump.source} - dump {dump.index + 1} (lines {dump.line_no}-{dump.end_line_no})"
    console.rule(title)
    facts = [
        f"format: {dump.format.value}" + (f" ({dump.producer})" if dump.producer else ""),
        f"threads: {len(dump.threads)}",
        f"unparsed lines: {dump.unparsed_count}",
    ]
    if dump.timestamp:
        facts.insert(0, f"taken: {dump.timestamp}")
    if dump.pid is not None:
        facts.append(f"pid: {dump.pid}")
    facts.append("lock data (-l): " + ("yes" if dump.has_lock_data else "no"))
    console.print("  ".join(facts))
    if dump.banner:
        console.print(dump.banner)
    for note in dump.notes:
        console.print(f"note: {note}")

    states = Table(title="Threads by status", title_justify="left")
    states.add_column("status")
    states.add_column("threads", justify="right")
    for status, count in summary.by_status.items():
        states.add_row(status, str(count))
    console.print(states)

    if dump.jvm_deadlocks or summary.deadlocked:
        _render_deadlocks(console, summary)
    if summary.locks:
        _render_locks(console, summary)
    if summary.identical_stacks:
        _render_groups(console, summary)
    if dump.unparsed:
        console.print(f"Unparsed lines ({dump.unparsed_count}), first shown:")
        for line in dump.unparsed[:5]:
            console.print(f"  {line.line_no}: {line.text[:160]}")


def _render_deadlocks(console: Console, summary: DumpSummary) -> None:
    table = Table(title="Deadlocks", title_justify="left")
    table.add_column("reported by")
    table.add_column("threads")
    for cycle in summary.dump.jvm_deadlocks:
        table.add_row("JVM", " -> ".join(link.thread_name for link in cycle))
    for names in summary.deadlocked:
        table.add_row("lock graph", " -> ".join(names))
    console.print(table)


def _render_locks(console: Console, summary: DumpSummary) -> None:
    table = Table(title="Locks with waiters", title_justify="left")
    table.add_column("lock")
    table.add_column("class")
    table.add_column("held by")
    table.add_column("blocked", justify="right")
    table.add_column("parked", justify="right")
    table.add_column("in wait()", justify="right")
    table.add_column("waiters")
    for lock in summary.locks[:MAX_ROWS]:
        table.add_row(
            hex_id(lock.lock_id) or "",
            lock.lock_class or "?",
            _names(lock.holders) or "-",
            str(len(lock.blocked)),
            str(len(lock.parked)),
            str(len(lock.waiting)),
            _names(lock.blocked + lock.parked + lock.waiting),
        )
    console.print(table)
    if len(summary.locks) > MAX_ROWS:
        console.print(f"... {len(summary.locks) - MAX_ROWS} more locks (see --format json)")


def _render_groups(console: Console, summary: DumpSummary) -> None:
    table = Table(title="Threads with identical stacks", title_justify="left")
    table.add_column("threads", justify="right")
    table.add_column("status")
    table.add_column("top frames")
    table.add_column("names")
    for group in summary.identical_stacks[:MAX_ROWS]:
        table.add_row(
            str(len(group.thread_names)),
            group.status,
            "\n".join(frame.text for frame in group.frames[:TOP_FRAMES]),
            _names(group.thread_names),
        )
    console.print(table)
    if len(summary.identical_stacks) > MAX_ROWS:
        console.print(f"... {len(summary.identical_stacks) - MAX_ROWS} more groups (see --format json)")
