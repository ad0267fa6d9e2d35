"""Thread-dump parsers: text in, model.ThreadDump out; streaming, total, bounded.

`read_dumps(path)` is the one entry point: it opens the file (gzip, stdin), detects or takes
the format, and yields dumps one at a time.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Iterator

from kafkadiag.dumps.detect import SNIFF_LINES, detect_format
from kafkadiag.dumps.lines import ReadStats, display_name, iter_line_batches
from kafkadiag.errors import NoDumpFoundError
from kafkadiag.model import DumpFormat, ThreadDump

FORMAT_NAMES = tuple(fmt.value for fmt in DumpFormat)


def read_dumps(
    path: str,
    input_format: DumpFormat | None = None,
    stats: ReadStats | None = None,
    on_progress: Callable[[int], None] | None = None,
) -> Iterator[ThreadDump]:
    """Yield every dump in `path`. Raises NoDumpFoundError when the input holds none.

    `on_progress`, if given, is called after each batch of lines with the bytes read so far.
    """
    stats = stats if stats is not None else ReadStats()
    source = display_name(path)
    batches: Iterator[list[str]] = iter_line_batches(path, stats)
    if on_progress is not None:
        batches = _reporting(batches, stats, on_progress)
    head: list[list[str]] = []
    sampled = 0
    for batch in batches:
        head.append(batch)
        sampled += len(batch)
        if sampled >= SNIFF_LINES:
            break
    fmt = input_format or detect_format(list(itertools.chain.from_iterable(head))[:SNIFF_LINES])
    found = 0
    empty_banner_line: int | None = None
    for dump in _parser_for(fmt)(itertools.chain(head, batches), source):
        if not dump.threads:
            # A banner with no thread after it is not a dump anyone can analyse.
            empty_banner_line = empty_banner_line or dump.line_no
            continue
        found += 1
        yield dump
    if found == 0:
        message = _nothing_found_message(source, fmt, stats)
        if empty_banner_line is not None:
            message = f"{source}: a thread dump starts at line {empty_banner_line} but holds no threads"
        raise NoDumpFoundError(message)


def _reporting(
    batches: Iterable[list[str]], stats: ReadStats, on_progress: Callable[[int], None]
) -> Iterator[list[str]]:
    for batch in batches:
        yield batch
        on_progress(stats.bytes_read)


def _parser_for(fmt: DumpFormat):  # type: ignore[no-untyped-def]
    if fmt is DumpFormat.HOTSPOT:
        from kafkadiag.dumps.hotspot import parse_hotspot

        return parse_hotspot
    if fmt is DumpFormat.NETBEANS:
        from kafkadiag.dumps.netbeans import parse_netbeans

        return parse_netbeans
    if fmt is DumpFormat.PYSPY:
        from kafkadiag.dumps.pyspy import parse_pyspy_text

        return parse_pyspy_text
    if fmt is DumpFormat.PYSPY_JSON:
        from kafkadiag.dumps.pyspy import parse_pyspy_json

        return parse_pyspy_json
    return _python_parser_for(fmt)


def _python_parser_for(fmt: DumpFormat):  # type: ignore[no-untyped-def]
    """The parsers of Python dumps taken without py-spy."""
    if fmt is DumpFormat.FAULTHANDLER:
        from kafkadiag.dumps.faulthandler import parse_faulthandler

        return parse_faulthandler
    if fmt is DumpFormat.GDB_PY_BT:
        from kafkadiag.dumps.gdbpybt import parse_gdb_py_bt

        return parse_gdb_py_bt
    if fmt is DumpFormat.GEVENT:
        from kafkadiag.dumps.geventinfo import parse_gevent_run_info

        return parse_gevent_run_info
    if fmt is DumpFormat.ASYNCIO:
        from kafkadiag.dumps.asynciotasks import parse_asyncio_tasks

        return parse_asyncio_tasks
    from kafkadiag.dumps.pytraceback import parse_py_traceback

    return parse_py_traceback


def _nothing_found_message(source: str, fmt: DumpFormat, stats: ReadStats) -> str:
    if stats.bytes_read == 0:
        return f"{source} is empty: there is no thread dump in it"
    detail = f"read {stats.bytes_read:,} bytes as {fmt.value}"
    if stats.replaced_characters > stats.bytes_read // 10:
        detail += ", most of it not text (binary data?)"
    return f"no thread dump found in {source} ({detail})"
