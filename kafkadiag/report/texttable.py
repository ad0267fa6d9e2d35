"""Plain aligned text tables, the way kafka-consumer-groups.sh and kubectl print them.

Rich's tables take about 20 ms each to lay out; a report of a 10,000-thread dump prints several,
and `kafkadiag dump parse` must finish in a third of a second. These tables never wrap: a cell
wider than its column's cap is cut with an ellipsis, so rows stay one line and grep-able.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TextIO

ELLIPSIS = "…"


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + ELLIPSIS


def render_table(
    out: TextIO,
    title: str,
    headers: Sequence[str],
    rows: Sequence[Sequence[str]],
    caps: Sequence[int] | None = None,
    right_aligned: Sequence[int] = (),
) -> None:
    """Write `title`, a header row, a rule and the rows, columns padded to their widest cell.

    A cell may hold several lines ("\n"); they are printed under each other in its column.
    """
    caps = caps or [60] * len(headers)
    split_rows = [[str(cell).split("\n") for cell in row] for row in rows]
    widths = [len(header) for header in headers]
    for row in split_rows:
        for column, lines in enumerate(row):
            widest = max((len(line) for line in lines), default=0)
            widths[column] = max(widths[column], min(widest, caps[column]))
    out.write(f"{title}\n")

    def line_of(cells: Sequence[str]) -> str:
        parts = []
        for column, cell in enumerate(cells):
            fitted = _fit(cell, widths[column])
            parts.append(
                fitted.rjust(widths[column]) if column in right_aligned else fitted.ljust(widths[column])
            )
        return "  ".join(parts).rstrip() + "\n"

    out.write("  " + line_of(headers))
    out.write("  " + "  ".join("─" * width for width in widths) + "\n")
    for row in split_rows:
        height = max(len(lines) for lines in row)
        for index in range(height):
            out.write("  " + line_of([lines[index] if index < len(lines) else "" for lines in row]))
    out.write("\n")
