"""`kafkadiag dump parse` for people: one block per dump, most telling parts first."""

from __future__ import annotations

from typing import TextIO

from kafkadiag.dumps.summary import DumpSummary
from kafkadiag.jvmreport import JvmReport
from kafkadiag.report.dump_json import hex_id
from kafkadiag.report.textpage import wrap_plain
from kafkadiag.report.texttable import render_table, width_of

# Rows shown per section; the rest is counted, and --format json has everything.
MAX_ROWS = 10
MAX_NAMES = 4
TOP_FRAMES = 3


def short_class(name: str | None) -> str | None:
    """`java.util.concurrent.locks.ReentrantLock$NonfairSync` -> `j.u.c.l.ReentrantLock$NonfairSync`."""
    if not name or "." not in name:
        return name
    package, _, simple = name.rpartition(".")
    return ".".join(part[:1] for part in package.split(".")) + "." + simple


def _names(names: tuple[str, ...]) -> str:
    shown = ", ".join(names[:MAX_NAMES])
    return shown + (f" (+{len(names) - MAX_NAMES} more)" if len(names) > MAX_NAMES else "")


def render_dump(out: TextIO, summary: DumpSummary) -> None:
    dump = summary.dump
    width = width_of(out)
    heading = f"{dump.source}: dump {dump.index + 1}, lines {dump.line_no}-{dump.end_line_no}"
    out.write(wrap_plain(heading, width, "   ", first="== ") + "\n")
    facts = []
    if dump.timestamp:
        facts.append(f"taken {dump.timestamp}")
    facts.append(f"format {dump.format.value}" + (f" ({dump.producer})" if dump.producer else ""))
    if dump.pid is not None:
        facts.append(f"pid {dump.pid}")
    facts.append(f"{len(dump.threads)} threads")
    facts.append(f"{dump.unparsed_count} unparsed lines")
    facts.append("lock data (-l): " + ("yes" if dump.has_lock_data else "no"))
    out.write(wrap_plain(", ".join(facts), width, "   ") + "\n")
    if dump.banner:
        out.write(wrap_plain(dump.banner, width, "   ") + "\n")
    for note in dump.notes:
        out.write(wrap_plain(f"note: {note}", width, "   ") + "\n")
    out.write("\n")

    render_table(
        out,
        "Threads by status",
        ("status", "threads"),
        [(status, str(count)) for status, count in summary.by_status.items()],
        right_aligned=(1,),
    )
    if dump.jvm_deadlocks or summary.deadlocked:
        rows = [row for report in summary.jvm_reports for row in _jvm_rows(report)]
        rows += [("lock graph", " -> ".join(names)) for names in summary.deadlocked]
        render_table(out, "Deadlocks", ("reported by", "threads"), rows, caps=(12, 200), stacked=(1,))
    if summary.locks:
        _render_locks(out, summary)
    if summary.identical_stacks:
        _render_groups(out, summary)
    if dump.unparsed:
        out.write(f"Unparsed lines ({dump.unparsed_count}), the first:\n")
        for line in dump.unparsed[:5]:
            prefix = f"  {line.line_no}: "
            out.write(prefix + line.text[: max(width - len(prefix), 8)] + "\n")
        out.write("\n")


def _jvm_rows(report: JvmReport) -> list[tuple[str, str]]:
    """The JVM's report as its edges state it: the cycle, then each thread that only waits into it
    with the thread it waits for (the report lists them with the cycle, often first)."""
    names = [link.thread_name for link in report.links]
    if not report.cycle:
        return [("JVM, partial", " -> ".join([*names, report.links[-1].held_by]))]
    rows = [("JVM", " -> ".join(names[position] for position in report.cycle))]
    for position in (*report.behind, *report.unresolved):
        rows.append(("JVM, behind", f"{names[position]} -> {report.links[position].held_by}"))
    return rows


def _render_locks(out: TextIO, summary: DumpSummary) -> None:
    rows = [
        (
            hex_id(lock.lock_id) or "",
            short_class(lock.lock_class) or "?",
            _names(lock.holders) or ("not in the dump" if lock.blocked else "-"),
            str(len(lock.blocked)),
            str(len(lock.parked)),
            str(len(lock.waiting)),
            _names(lock.blocked + lock.parked + lock.waiting),
        )
        for lock in summary.locks[:MAX_ROWS]
    ]
    render_table(
        out,
        "Locks with waiters",
        ("lock", "class", "held by", "blocked", "parked", "in wait()", "waiters"),
        rows,
        caps=(18, 60, 60, 7, 6, 9, 90),
        right_aligned=(3, 4, 5),
        stacked=(6, 2),  # the names: on a line of their own rather than cut
    )
    if len(summary.locks) > MAX_ROWS:
        out.write(f"  ... {len(summary.locks) - MAX_ROWS} more locks (see --format json)\n\n")


def _render_groups(out: TextIO, summary: DumpSummary) -> None:
    rows = [
        (
            str(len(group.thread_names)),
            group.status,
            "\n".join(frame.text for frame in group.frames[:TOP_FRAMES]),
            _names(group.thread_names),
        )
        for group in summary.identical_stacks[:MAX_ROWS]
    ]
    render_table(
        out,
        "Threads with identical stacks",
        ("threads", "status", "top frames", "names"),
        rows,
        caps=(7, 20, 100, 80),
        right_aligned=(0,),
        stacked=(3,),
    )
    if len(summary.identical_stacks) > MAX_ROWS:
        out.write(f"  ... {len(summary.identical_stacks) - MAX_ROWS} more groups (see --format json)\n\n")
