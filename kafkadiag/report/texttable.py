"""Plain aligned text tables, the way kafka-consumer-groups.sh and kubectl print them.

Rich's tables take about 20 ms each to lay out; a report of a 10,000-thread dump prints several,
and `kafkadiag dump parse` must finish in a third of a second. These tables never wrap: a cell
wider than its column's cap is cut with an ellipsis, so rows stay one line and grep-able.
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import zip_longest
from typing import TextIO

ELLIPSIS = "…"


def _fit(text: str, width: int) -> str:
    return text if len(text) <= width else text[: max(width - 1, 0)] + ELLIPSIS


def _column_width(header: str, cells: Sequence[str], cap: int) -> int:
    if "\n" in "".join(cells):
        widest = max((len(line) for cell in cells for line in cell.split("\n")), default=0)
    else:
        widest = max(map(len, cells), default=0)
    return max(len(header), min(widest, cap))


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
    caps = list(caps or ()) + [60] * (len(headers) - len(caps or ()))
    cells = [[str(cell) for cell in row] for row in rows]
    if any(len(row) > len(headers) for row in cells):
        raise ValueError(f"a row has more cells than the {len(headers)} headers of table {title!r}")
    # A short row leaves its last columns empty.
    columns = list(zip_longest(*cells, fillvalue="")) if cells else []
    columns += [()] * (len(headers) - len(columns))
    widths = [_column_width(header, column, cap) for header, column, cap in zip(headers, columns, caps)]
    # (width, right-aligned) per column: a table of 10,000 partitions formats 100,000s of cells.
    layout = [(width, column in right_aligned) for column, width in enumerate(widths)]

    def line_of(row: Sequence[str]) -> str:
        return (
            "  "
            + "  ".join(
                [
                    (cell if len(cell) <= width else _fit(cell, width)).rjust(width)
                    if right
                    else (cell if len(cell) <= width else _fit(cell, width)).ljust(width)
                    for cell, (width, right) in zip(row, layout)
                ]
            ).rstrip()
            + "\n"
        )

    lines = [f"{title}\n", line_of(headers), "  " + "  ".join("─" * width for width in widths) + "\n"]
    for row in cells:
        if "\n" not in "".join(row):
            lines.append(line_of(row))
            continue
        split = [cell.split("\n") for cell in row]
        for index in range(max(len(parts) for parts in split)):
            lines.append(line_of([parts[index] if index < len(parts) else "" for parts in split]))
    lines.append("\n")
    out.write("".join(lines))
