"""Plain aligned text tables, the way kafka-consumer-groups.sh and kubectl print them, fitted to
the report's width.

Rich's tables take about 20 ms each to lay out; a report of a 10,000-thread dump prints several,
and `kafkadiag dump parse` must finish in a third of a second: these tables are laid out here.
A row stays one line, grep-able. When the columns do not fit the width, the low-priority columns
a table names (`stacked`, least wanted first) leave the row for a line of their own under it
("OWNER: consumer-1-..."); then the widest text columns are narrowed, their cells shortened in
the middle so that a name keeps its start and its end. With room to spare, cells are shown
whole up to their column's cap.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Sequence
from itertools import zip_longest
from typing import TextIO

from kafkadiag.report.safe_text import printable
from kafkadiag.report.textpage import SGR, STYLES, fit_words, shorten_middle, wrap_plain

MARGIN = "  "
GAP = "  "
STACK_INDENT = "      "
# Columns of names (a group, a topic, a client): copied into the next command, so shortened only
# when the row cannot fit otherwise.
NAME_HEADERS = frozenset({"GROUP", "TOPIC", "CLIENT", "CLIENT-ID", "OWNER", "HOST", "USER", "THREAD"})
COMFORTABLE = 20  # a text column narrowed to this still reads as what it is
NARROWEST = 6  # a text column is not narrowed below this (or its header)


def _column_width(header: str, cells: Sequence[str], cap: int) -> int:
    if "\n" in "".join(cells):
        widest = max((len(line) for cell in cells for line in cell.split("\n")), default=0)
    else:
        widest = max(map(len, cells), default=0)
    return max(len(header), min(widest, cap))


def width_of(out: TextIO) -> int:
    """The columns a report written to `out` is laid out in."""
    width = getattr(out, "width", None)
    if isinstance(width, int):
        return width
    from kafkadiag.console import width_of

    # A buffer shown later on the terminal (`lag --watch`), or a test's StringIO.
    return width_of(sys.stdout)


def _line_width(widths: Sequence[int]) -> int:
    return len(MARGIN) + sum(widths) + len(GAP) * max(len(widths) - 1, 0)


def fit_columns(
    headers: Sequence[str],
    widths: list[int],
    width: int,
    stacked: Sequence[int],
    right_aligned: Sequence[int],
) -> tuple[list[int], list[int]]:
    """(the columns kept in the row, their widths). A `stacked` column is shown whole or not at
    all in the row: it leaves the row, least wanted first, while the row would not fit with the
    other text columns narrowed to COMFORTABLE (a column of names, NAME_HEADERS, stays whole);
    then those are narrowed; names last, and only if nothing else can give."""

    def floor(column: int, least: int) -> int:
        if column in stacked or column in right_aligned:
            return widths[column]
        if headers[column] in NAME_HEADERS and least == COMFORTABLE:
            return widths[column]
        return min(widths[column], max(len(headers[column]), least))

    kept = list(range(len(headers)))
    for column in stacked:
        if _line_width([floor(c, COMFORTABLE) for c in kept]) <= width:
            break
        kept.remove(column)
    fitted = [widths[c] for c in kept]
    for least in (COMFORTABLE, NARROWEST):
        while _line_width(fitted) > width:
            narrowable = [i for i, c in enumerate(kept) if fitted[i] > floor(c, least)]
            if not narrowable:
                break  # numbers that cannot go: wider than the width, never cut
            widest = max(narrowable, key=lambda i: fitted[i])
            fitted[widest] -= min(fitted[widest] - floor(kept[widest], least), _line_width(fitted) - width)
    return kept, fitted


def render_table(
    out: TextIO,
    title: str,
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    caps: Sequence[int] | None = None,
    right_aligned: Sequence[int] = (),
    stacked: Sequence[int] = (),
    every_row: str = "",
) -> None:
    """Write `title`, a header row, a rule and the rows, columns padded to their widest cell.

    A cell may hold several lines ("\n"); they are printed under each other in its column.
    `stacked`: the columns (least wanted first) that go under their row when the row is too wide,
    on one line of "HEADER: cell" pairs. `every_row` names the rows ("all partitions"): a stacked
    column with one value in every row that has one is said once under the title instead.
    """
    caps = list(caps or ()) + [60] * (len(headers) - len(caps or ()))
    cells = [[str(cell) for cell in row] for row in rows]
    if any(len(row) > len(headers) for row in cells):
        raise ValueError(f"a row has more cells than the {len(headers)} headers of table {title!r}")
    cells = [row + [""] * (len(headers) - len(row)) for row in cells]
    columns = list(zip_longest(*cells, fillvalue="")) if cells else []
    columns += [()] * (len(headers) - len(columns))
    widths = [_column_width(header, column, cap) for header, column, cap in zip(headers, columns, caps)]
    width = width_of(out)
    kept, fitted = fit_columns(headers, widths, width, stacked, right_aligned)
    raw = bool(getattr(out, "colour", False)) and hasattr(out, "write_raw")
    # Written raw (colour codes and all), the outside text in it is escaped here, cell by cell.
    escaped = printable if raw else str
    line_of = _line_maker([(w, c in right_aligned) for c, w in zip(kept, fitted)], raw)
    heading = escaped(fit_words(title, width))
    lines = [
        f"\x1b[{SGR['bold']}m{heading}\x1b[0m\n" if raw else heading + "\n",
        line_of([headers[c] for c in kept]),
    ]
    lines.append(MARGIN + GAP.join("─" * w for w in fitted) + "\n")
    gone = [c for c in range(len(headers)) if c not in kept]
    once = _same_in_every_row(cells, gone) if every_row else []
    if once:
        pairs = [f"{headers[c]}: {next(row[c] for row in cells if row[c])} ({every_row})" for c in once]
        lines.insert(1, escaped(_stacked_lines(pairs, width)))
        gone = [c for c in gone if c not in once]
    for row in cells:
        shown = [row[c] for c in kept]
        if "\n" not in "".join(shown):
            lines.append(line_of(shown))
        else:
            split = [cell.split("\n") for cell in shown]
            for index in range(max(len(parts) for parts in split)):
                lines.append(line_of([parts[index] if index < len(parts) else "" for parts in split]))
        below = [f"{headers[c]}: {row[c]}" for c in gone if row[c].strip(" -")]
        if below:
            lines.append(escaped(_stacked_lines(below, width)))
    lines.append("\n")
    text = "".join(lines)
    if raw:
        out.write_raw(text)  # type: ignore[attr-defined]  # a ReportStream (kafkadiag.report.output)
    else:
        out.write(text)


def _same_in_every_row(cells: Sequence[Sequence[str]], columns: Sequence[int]) -> list[int]:
    """The `columns` whose non-empty cells, two or more, are all one value other than "-" (an
    old consumer's one owner of every partition, which stacked would be repeated under each)."""
    same = []
    for column in columns:
        values = [row[column] for row in cells if row[column]]
        if len(values) > 1 and len(set(values)) == 1 and values[0].strip(" -"):
            same.append(column)
    return same


def _stacked_lines(pairs: list[str], width: int) -> str:
    """The "HEADER: cell" pairs of a row's stacked columns: on one line if they fit it, else one
    pair a line, so that a header is never parted from its cell."""
    joined = STACK_INDENT + "; ".join(pairs)
    if len(joined) <= width:
        return joined + "\n"
    return "".join(wrap_plain(pair, width, STACK_INDENT + "  ", first=STACK_INDENT) + "\n" for pair in pairs)


def stacked_columns(headers: Sequence[str], least_wanted_first: Sequence[str]) -> tuple[int, ...]:
    """The `stacked` argument of render_table from header names (those absent are left out)."""
    return tuple(headers.index(name) for name in least_wanted_first if name in headers)


def _line_maker(layout: list[tuple[int, bool]], colour: bool) -> Callable[[Sequence[str]], str]:
    """The function that lays out one row: (width, right-aligned) per column. A table of 10,000
    partitions formats 100,000s of cells: the plain case does no more than pad."""

    def fit(cell: str, width: int) -> str:
        return cell if len(cell) <= width else shorten_middle(cell, width)

    def plain(row: Sequence[str]) -> str:
        return (
            MARGIN
            + GAP.join(
                [
                    fit(cell, width).rjust(width) if right else fit(cell, width).ljust(width)
                    for cell, (width, right) in zip(row, layout)
                ]
            ).rstrip()
            + "\n"
        )

    def coloured(row: Sequence[str]) -> str:
        parts = []
        for cell, (width, right) in zip(row, layout):
            shown = printable(fit(cell, width))
            padded = shown.rjust(width) if right else shown.ljust(width)
            style = STYLES.get(cell.strip())
            parts.append(f"\x1b[{SGR[style]}m{padded}\x1b[0m" if style in SGR else padded)
        return MARGIN + GAP.join(parts).rstrip() + "\n"

    return coloured if colour else plain
