"""Thread-dump parsers: text in, model.ThreadDump out; streaming, total, bounded.

`read_dumps(path)` is the one entry point: it opens the file (gzip, stdin), detects or takes
the format, and yields dumps one at a time.
"""

from __future__ import annotations

import html
import itertools
import os
import re
from collections.abc import Callable, Iterable, Iterator

from kafkadiag.dumps import jsonlogs, marks
from kafkadiag.dumps.detect import (
    PYTHON_HEADER_ANYWHERE,
    SNIFF_LINES,
    detect_format,
    recognised_format,
    unsupported_format,
)
from kafkadiag.dumps.htmltext import PageText, is_html_page
from kafkadiag.dumps.lines import ReadStats, bounded_document, display_name, iter_line_batches
from kafkadiag.dumps.logprefix import PrefixStripper
from kafkadiag.errors import InputUnreadableError, KafkadiagError, NoDumpFoundError
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
    head, batches = _unwrapped(head, batches, stats)
    head, batches = _repaired(head, batches, stats)
    fmt, sample, head, batches = _format_of(head, batches, input_format)
    if fmt in _JSON_DOCUMENTS:
        batches = bounded_document(batches, source, sum(len(line) + 1 for batch in head for line in batch))
    found = 0
    empty_banner_line: int | None = None
    lines_read = [0]
    parsed = _parser_for(fmt)(_counted(itertools.chain(head, batches), lines_read), source)
    for dump in guarded(parsed, source, fmt, lines_read):
        if not dump.threads and not dump.jvm_deadlocks:
            # A banner with no thread after it is not a dump anyone can analyse. The JVM's deadlock
            # report without its stacks is: it names every thread and lock of each cycle.
            empty_banner_line = empty_banner_line or dump.line_no
            continue
        found += 1
        yield dump
    if found == 0:
        message = _nothing_found_message(source, fmt, stats, unsupported_format(sample))
        if empty_banner_line is not None:
            message = f"{source}: a thread dump starts at line {empty_banner_line} but holds no threads"
        raise NoDumpFoundError(message)


_Lines = tuple[list[list[str]], Iterator[list[str]]]  # the sampled head, and the batches after it


def _unwrapped(head: list[list[str]], batches: Iterator[list[str]], stats: ReadStats) -> _Lines:
    """The input's text out of what carried it: a byte-order mark, an HTTP response's headers, the
    records of a JSON log."""
    if head and head[0] and head[0][0].startswith("\ufeff"):
        head[0][0] = head[0][0][1:]  # the byte-order mark an editor wrote, not text
    if head and head[0] and _HTTP_STATUS.match(head[0][0]):
        # `curl -i .../actuator/threaddump > dump.json`: the response's status line and headers
        # come first. Blanked, not removed, so that line numbers hold.
        stats.http_header_lines = _blank_http_headers(head[0])
    field = jsonlogs.text_field(head[0]) if head and head[0] and head[0][0].lstrip().startswith("{") else None
    if field is not None:
        # A container's log file (Docker's json-file), journalctl -o json, a log shipper's export.
        record_text = jsonlogs.RecordText(field, stats)
        head = [record_text(batch) for batch in head]
        batches = map(record_text, batches)
    return head, batches


def _repaired(head: list[list[str]], batches: Iterator[list[str]], stats: ReadStats) -> _Lines:
    """The text as it was printed, from a web page, a terminal, a mail reply or Markdown."""
    # The sample as one text: the probes below run on every input, before any parser, and one
    # search of a joined text costs a fraction of a search per line. Joined again after a repair.
    text = _joined(head)
    if is_html_page(head):
        # A page's source saved from the browser or a static site: read as the browser shows it.
        stats.html_page = True
        shown = PageText()
        head = [shown(batch) for batch in head]
        batches = map(shown, batches)
        text = _joined(head)
    elif _escaped_markup(text):
        # Copied from a rendered web page or an HTML mail: `&quot;main&quot;`, `&lt;0x..&gt;`.
        head = [_unescaped(batch) for batch in head]
        batches = map(_unescaped, batches)
        text = _joined(head)
    if "\x1b" in text and "\x1b[" in text:  # one character is looked for many times faster
        # Saved from a terminal (script, tmux, a CI log): py-spy and loggers colour what they
        # print when their output is a terminal.
        head = [_uncoloured(batch) for batch in head]
        batches = map(_uncoloured, batches)
        text = _joined(head)
    if _quoted_reply(text, head):
        # A dump quoted in an e-mail reply ("> " before every line, "> > " for a reply to one).
        head = [_unquoted(batch) for batch in head]
        batches = map(_unquoted, batches)
    if marks.holds_block_markup(text):
        # "```\"main\" #1 ...", "...(Thread.java:750)```": a fence or {code} tag typed on the
        # dump's first or last line, which would hide a header or spoil a frame.
        head = [marks.unglued(batch) for batch in head]
        batches = map(marks.unglued, batches)
    indent = _code_block_indent(head)
    if indent:
        # The dump as a Markdown indented code block: every line shifted by the same indent.
        head = [_dedented(batch, indent) for batch in head]
        batches = (_dedented(batch, indent) for batch in batches)
    return head, batches


def _format_of(
    head: list[list[str]], batches: Iterator[list[str]], input_format: DumpFormat | None
) -> tuple[DumpFormat, list[str], list[list[str]], Iterator[list[str]]]:
    """The format to read the input as, its sample lines, and the lines (a log prefix taken off a
    Python dump's)."""
    sample = list(itertools.chain.from_iterable(head))[:SNIFF_LINES]
    recognised = None if input_format else recognised_format(sample)
    fmt = input_format or recognised or DumpFormat.HOTSPOT
    if input_format is None and recognised is None:
        # No line marks a format at its start. HotSpot's parser learns a log pipeline's prefix
        # itself; the Python parsers read lines as the tools print them, so a Python dump behind
        # such a prefix is unwrapped here.
        stripper = _python_log_prefix(sample)
        if stripper is not None:
            unwrapped = [stripper.strip(line) for line in sample]
            unwrapped_format = detect_format(unwrapped)
            if unwrapped_format in _PYTHON_TEXT_FORMATS:
                fmt, sample = unwrapped_format, unwrapped
                head = [[stripper.strip(line) for line in batch] for batch in head]
                batches = ([stripper.strip(line) for line in batch] for batch in batches)
    return fmt, sample, head, batches


_PARSER_FAILURE_HELP = (
    "This is a bug in kafkadiag: please report it with the input (or the lines near the place "
    "named). Meanwhile --input-format may read the input as another format."
)


def guarded(
    parsed: Iterator[ThreadDump], source: str, fmt: DumpFormat, lines_read: list[int]
) -> Iterator[ThreadDump]:
    """The dumps a parser yields until it fails, if it does; then an input error naming the failure.

    Parsers are meant to be total (a line they do not understand is kept as unparsed), but an
    input nobody foresaw may still find a line they choke on. The dumps yielded before it stay
    with the caller (`list.extend` keeps what it was given before the error), so they are still
    analysed, and the failure is an error naming where reading stopped (exit 3), not a traceback
    that loses everything (exit 4).
    """
    try:
        yield from parsed
    except KafkadiagError:
        raise
    except Exception as error:  # noqa: BLE001 - any parser's unforeseen failure, named below
        raise InputUnreadableError(
            f"{source}: the {fmt.value} parser failed ({type(error).__name__}: {str(error)[:200]}) "
            f"within the first {lines_read[0]:,} lines; what follows was not read",
            help_text=_PARSER_FAILURE_HELP,
        ) from None


def _counted(batches: Iterable[list[str]], lines_read: list[int]) -> Iterator[list[str]]:
    for batch in batches:
        lines_read[0] += len(batch)
        yield batch


# Formats whose parser reads the input as one JSON document, held whole while it is parsed.
_JSON_DOCUMENTS = frozenset({DumpFormat.PYSPY_JSON, DumpFormat.JCMD_JSON, DumpFormat.ACTUATOR_JSON})


# A prefix is the log pipeline's when it starts (nearly) every line, not a few.
PREFIXED_SHARE = 0.8


def _python_log_prefix(sample: list[str]) -> PrefixStripper | None:
    """The prefix a log pipeline put before a Python dump's lines, learned from its first thread
    header that does not start its line, when most non-blank lines carry the same prefix."""
    for line in sample:
        header = PYTHON_HEADER_ANYWHERE.search(line)
        if header is None or header.start() == 0:
            continue
        stripper = PrefixStripper()
        stripper.learn(line, header.start())
        written = [text for text in sample if text.strip()]
        carrying = sum(1 for text in written if stripper.strip(text) != text)
        return stripper if carrying >= PREFIXED_SHARE * len(written) else None
    return None


def _joined(head: list[list[str]]) -> str:
    return "\n".join(itertools.chain.from_iterable(head))


_ENTITIES = ("&quot;", "&lt;", "&gt;", "&#34;", "&#x22;")


def _escaped_markup(text: str) -> bool:
    return "&" in text and any(entity in text for entity in _ENTITIES)


def _unescaped(batch: list[str]) -> list[str]:
    return [html.unescape(line) if "&" in line else line for line in batch]


# A terminal's colour and style sequences (SGR) and the erase-line one some tools add.
_TERMINAL_SEQUENCE = re.compile(r"\x1b\[[0-9;]*[mK]")


def _uncoloured(batch: list[str]) -> list[str]:
    return [_TERMINAL_SEQUENCE.sub("", line) if "\x1b[" in line else line for line in batch]


_QUOTE_MARKERS = re.compile(r"^(?:> ?)+")
# A line that starts with ">": the regex engine finds it in half the time `"\n>" in text` takes.
_QUOTED_LINE = re.compile(r"\n>")


_HTTP_STATUS = re.compile(r"^HTTP/\d(?:\.\d)? \d{3}\b")
_HTTP_HEADER = re.compile(r"^[A-Za-z][A-Za-z0-9-]*:")


def _blank_http_headers(batch: list[str]) -> int:
    """Blank an HTTP response's status line and headers, up to the blank line that ends them; how
    many lines that was (none when what follows the status line is not headers)."""
    end = 1
    while end < len(batch) and batch[end].strip() and _HTTP_HEADER.match(batch[end]):
        end += 1
    if end < len(batch) and batch[end].strip():
        return 0  # no blank line after the headers: not an HTTP response's head
    batch[:end] = [""] * end
    return end


def _quoted_reply(text: str, head: list[list[str]]) -> bool:
    """Most lines of the sample start with '>': no dump format starts lines that way."""
    if not text.startswith(">") and _QUOTED_LINE.search(text) is None:
        return False  # nearly every input: the lines need not be counted one by one
    quoted = text.count("\n>") + text.startswith(">")  # a quoted line is never blank
    written = sum(sum(map(bool, map(str.strip, batch))) for batch in head)
    return quoted * 2 >= written


def _unquoted(batch: list[str]) -> list[str]:
    return [_QUOTE_MARKERS.sub("", line) if line.startswith(">") else line for line in batch]


def _code_block_indent(head: list[list[str]]) -> str:
    """The indent every non-blank line of the sample shares, if it is a code block's (four
    spaces or more, or a tab); no dump format indents its first line."""
    indent: str | None = None
    for batch in head:
        for line in batch:
            body = line.lstrip(" \t")
            if not body:
                continue
            own = line[: len(line) - len(body)]
            indent = own if indent is None else os.path.commonprefix([indent, own])
            if not indent:
                return ""
    if indent is None or not (indent.startswith("\t") or indent.startswith("    ")):
        return ""
    return indent


def _dedented(batch: list[str], indent: str) -> list[str]:
    size = len(indent)
    return [line[size:] if line.startswith(indent) else line for line in batch]


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
        from kafkadiag.dumps.pyspyjson import parse_pyspy_json

        return parse_pyspy_json
    if fmt in _PYTHON_FORMATS:
        return _python_parser_for(fmt)
    from kafkadiag.dumps.otherjvms import parser_for_other_jvm

    return parser_for_other_jvm(fmt)


_PYTHON_FORMATS = frozenset(
    {
        DumpFormat.FAULTHANDLER,
        DumpFormat.PY_TRACEBACK,
        DumpFormat.GDB_PY_BT,
        DumpFormat.GEVENT,
        DumpFormat.ASYNCIO,
        DumpFormat.GURU_MEDITATION,
    }
)


# The Python dumps that are lines of text, as a log pipeline may carry them.
_PYTHON_TEXT_FORMATS = _PYTHON_FORMATS | {DumpFormat.PYSPY}


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
    if fmt is DumpFormat.GURU_MEDITATION:
        from kafkadiag.dumps.gurumeditation import parse_guru_meditation

        return parse_guru_meditation
    from kafkadiag.dumps.pytraceback import parse_py_traceback

    return parse_py_traceback


def _nothing_found_message(source: str, fmt: DumpFormat, stats: ReadStats, unsupported: str | None) -> str:
    if stats.bytes_read == 0:
        return f"{source} is empty: there is no thread dump in it"
    binary = stats.replaced_characters > stats.bytes_read // 10
    if unsupported is not None and not binary:
        return f"{source} looks like {unsupported}, which kafkadiag does not read: no thread dump found in it"
    detail = f"read {stats.bytes_read:,} bytes as {fmt.value}"
    if binary:
        detail += ", most of it not text (binary data?)"
    return f"no thread dump found in {source} ({detail})"
