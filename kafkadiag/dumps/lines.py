"""Turn a file, a gzip file or stdin into a bounded stream of text lines.

Dumps arrive as whatever the user has: a jstack file, a 200 MB application log that kill -3
appended to, a gzip from a support bundle, a pipe. Reading is streaming (memory stays at one
chunk plus one line), decoding never fails (bytes that are not UTF-8 become U+FFFD and are
counted), and a "line" is capped so that binary garbage without newlines cannot become one
huge string. This is where the bounds of kafkadiag.readlimits apply to every dump input (files,
stdin, gzip, capture bundles, the batch job's units): the text read, the expansion of a gzip,
the length of a line and of a one-line JSON document.
"""

from __future__ import annotations

import codecs
import gzip
import io
import os
import sys
import zlib
from collections.abc import Iterator
from dataclasses import dataclass

from kafkadiag.errors import InputUnreadableError
from kafkadiag.readlimits import (
    DEFAULT_MAX_JSON_CHARS,
    DEFAULT_MAX_LINE_CHARS,
    ENV_MAX_EXPANSION,
    ENV_MAX_INPUT_SIZE,
    ENV_MAX_JSON_SIZE,
    EXPANSION_GRACE_BYTES,
    InputTooLargeError,
    MemoryWatch,
    ReadLimits,
    format_size,
    open_input,
)

# Longer lines are cut (kafkadiag.readlimits says why 1 MiB; --max-line-length raises it). A line
# within one chunk is shorter than the chunk anyway; only a line that runs on across chunks needs
# cutting, which keeps the per-line check out of the reading loop.
MAX_LINE_CHARS = DEFAULT_MAX_LINE_CHARS
# The encoding (and gzip) is told from this much of the start: a name with an accent may come late.
SNIFF_BYTES = 1 << 20
# Decoded and split this much at a time. A batch's lines are parsed right after the split, so a
# batch that fits in a core's L2 cache (with its line objects, about twice the bytes) is parsed
# from the cache: with 1 MiB chunks a 12 MB dump parsed about a tenth slower.
CHUNK_BYTES = 1 << 17
# A JSON document (py-spy --json, Spring Boot Actuator's thread dump) may be one line of megabytes:
# it is text, not garbage, and cut it would not parse: a longer one is an error, not cut.
MAX_JSON_LINE_CHARS = DEFAULT_MAX_JSON_CHARS
GZIP_MAGIC = b"\x1f\x8b"
STDIN_NAME = "-"


@dataclass
class ReadStats:
    """What the reader had to repair, reported beside the parse result."""

    bytes_read: int = 0
    replaced_characters: int = 0
    cut_lines: int = 0
    compressed: bool = False
    encoding: str = "utf-8"
    # The input was an HTML page's source, read as its text (line numbers count the text's lines).
    html_page: bool = False
    # The input was JSON log records, read as the text of this field of each (Docker's "log").
    log_records_field: str | None = None
    # Records whose text held several lines: line numbers then count the text's lines.
    multi_line_records: int = 0
    # An HTTP response saved whole (`curl -i`): its status line and headers, skipped.
    http_header_lines: int = 0


def display_name(path: str) -> str:
    return "<stdin>" if path == STDIN_NAME else path


def open_binary(path: str) -> io.BufferedIOBase:
    """Open a path (or "-" for stdin) for binary reading, with a clear error on failure."""
    if path == STDIN_NAME:
        return sys.stdin.buffer  # type: ignore[return-value]
    try:
        if os.path.isdir(path):
            raise InputUnreadableError(f"{path} is a directory, not a dump file")
        return open_input(path)  # type: ignore[return-value]  # closed by iter_lines
    except FileNotFoundError:
        raise InputUnreadableError(f"{path}: no such file") from None
    except PermissionError:
        raise InputUnreadableError(
            f"{path}: permission denied",
            help_text="Run as a user that can read the file, or copy it somewhere readable.",
        ) from None
    except OSError as error:
        raise InputUnreadableError(f"{path}: {error.strerror or error}") from None


class _Decompressing(io.RawIOBase):
    """A gzip reader that turns corruption into InputUnreadableError, not a traceback, and stops
    a stream that expands more than `max_expansion` times the compressed bytes it has consumed
    (a decompression bomb: a 10 MB gzip of newlines is 10 GiB of text)."""

    def __init__(self, raw: _Prepended, name: str, max_expansion: int) -> None:
        self._raw = raw
        self._gzip = gzip.GzipFile(fileobj=raw, mode="rb")
        self._name = name
        self._max_expansion = max_expansion
        self._expanded = 0

    def readable(self) -> bool:
        return True

    def read(self, size: int = -1) -> bytes:
        try:
            data = self._gzip.read(size)
        except (OSError, EOFError, zlib.error) as error:
            raise InputUnreadableError(
                f"{self._name}: the gzip stream is damaged ({error})",
                help_text="Check the download or copy; `gzip -t FILE` tests the archive.",
            ) from None
        self._expanded += len(data)
        consumed = self._raw.consumed
        if self._expanded > EXPANSION_GRACE_BYTES and self._expanded > self._max_expansion * consumed:
            raise InputTooLargeError(
                f"{self._name}: the gzip stream expands more than {self._max_expansion} times its size "
                f"({format_size(consumed)} compressed gave {format_size(self._expanded)} and more): "
                "a decompression bomb, or a log of nearly identical lines",
                "--max-expansion",
                ENV_MAX_EXPANSION,
                str(self._max_expansion * 10),
            )
        return data


def iter_lines(path: str, stats: ReadStats | None = None, limits: ReadLimits | None = None) -> Iterator[str]:
    """Yield the lines of `path` one by one (see iter_line_batches)."""
    for batch in iter_line_batches(path, stats, limits):
        yield from batch


def iter_line_batches(
    path: str, stats: ReadStats | None = None, limits: ReadLimits | None = None
) -> Iterator[list[str]]:
    """Yield the lines of `path` (without terminators) in batches of about CHUNK_BYTES.

    Batches, not single lines, because a generator hop per line would cost more than the
    parser's own work on a frame line. Gzip is decompressed transparently. `limits` defaults to
    the bounds the environment sets (ReadLimits.from_environment).
    """
    stats = stats if stats is not None else ReadStats()
    limits = limits if limits is not None else ReadLimits.from_environment()
    name = display_name(path)
    binary = open_binary(path)
    try:
        first = _read(binary, SNIFF_BYTES, name)
        stream: io.RawIOBase | io.BufferedIOBase = binary
        if first.startswith(GZIP_MAGIC):
            stats.compressed = True
            stream = _Decompressing(_Prepended(first, binary), name, limits.max_expansion)
            first = stream.read(SNIFF_BYTES)
        yield from _split(first, stream, stats, name, limits)
    finally:
        if path != STDIN_NAME:
            binary.close()


def _read(stream: io.RawIOBase | io.BufferedIOBase, size: int, name: str) -> bytes:
    try:
        return stream.read(size) or b""
    except IsADirectoryError:
        raise InputUnreadableError(f"{name} is a directory, not a dump file") from None
    except OSError as error:
        raise InputUnreadableError(f"{name}: read failed: {error.strerror or error}") from None


def _split(
    first: bytes, stream: io.RawIOBase | io.BufferedIOBase, stats: ReadStats, name: str, limits: ReadLimits
) -> Iterator[list[str]]:
    stats.encoding, bom = sniff_encoding(first)
    decoder = codecs.getincrementaldecoder(stats.encoding)(errors="replace")
    json_input = first[bom:].lstrip()[:1] in (b"{", b"[")
    max_line = limits.max_json_chars if json_input else limits.max_line_chars
    # The start of a line that runs on past the chunk read so far: a list of parts, joined once
    # its end is read (a one-line document of many chunks is not copied again at every chunk).
    carry: list[str] = []
    carried = 0
    stats.bytes_read += bom
    skipping = False  # inside a line already cut at the cap: drop the rest of it
    for text in _texts(_chunks(first[bom:], stream, stats, name, limits), decoder):
        if skipping:
            newline = text.find("\n")
            if newline < 0:
                continue
            text, skipping = text[newline + 1 :], False
        if "\ufffd" in text:
            stats.replaced_characters += text.count("\ufffd")
        if "\x00" in text:
            text = text.replace("\x00", "")
        if "\n" not in text:
            carry.append(text)
            carried += len(text)
            if carried > max_line:
                if json_input:
                    raise _json_too_long(name, max_line)
                # One line, cut: its rest is dropped, not read as further lines, so that every
                # later line keeps its number.
                stats.cut_lines += 1
                yield ["".join(carry)[:max_line]]
                carry, carried, skipping = [], 0, True
            continue
        carry.append(text)
        lines = "".join(carry).split("\n")
        rest = lines.pop()
        carry, carried = [rest], len(rest)
        # Only the first line can have grown past the cap (it starts with the carry); every other
        # line lies within one chunk.
        if len(lines[0]) > max_line:
            if json_input:
                raise _json_too_long(name, max_line)
            stats.cut_lines += 1
            lines[0] = lines[0][:max_line]
        yield lines
    tail = "" if skipping else "".join(carry)
    if tail:
        if len(tail) > max_line:
            if json_input:
                raise _json_too_long(name, max_line)
            stats.cut_lines += 1
            tail = tail[:max_line]
        yield [tail]


def bounded_document(
    batches: Iterator[list[str]], name: str, read_chars: int, limits: ReadLimits | None = None
) -> Iterator[list[str]]:
    """The batches of an input read as one JSON document, which is held whole while it is parsed:
    InputTooLargeError once it passes the bound on one JSON document (`read_chars` were read
    before these batches). A pretty-printed document (jcmd's) is many lines, each short."""
    limit = (limits if limits is not None else ReadLimits.from_environment()).max_json_chars
    if read_chars > limit:
        raise _json_too_long(name, limit)
    for batch in batches:
        read_chars += sum(map(len, batch)) + len(batch)
        if read_chars > limit:
            raise _json_too_long(name, limit)
        yield batch


def _json_too_long(name: str, limit: int) -> InputTooLargeError:
    # Cut, a JSON document would not parse; read whole, a 1.2 MB gzip of one `{...` line was 3 GB.
    return InputTooLargeError(
        f"{name}: a JSON document longer than {format_size(limit)}, the bound on one",
        "--max-json-size",
        ENV_MAX_JSON_SIZE,
        format_size(limit * 4).replace(" ", ""),
    )


def _chunks(
    first: bytes, stream: io.RawIOBase | io.BufferedIOBase, stats: ReadStats, name: str, limits: ReadLimits
) -> Iterator[bytes]:
    """The sniffed start in pieces of CHUNK_BYTES, then the rest of the stream read as much; at
    most `limits.max_input_bytes` of them (after decompression), and while the memory the
    parsing of the chunks before took stays within `limits.max_memory_bytes`: else
    InputTooLargeError. The chunks are parsed between two of them, so the check of the memory
    sees what the parser kept."""
    memory = MemoryWatch(name, limits.max_memory_bytes)
    for start in range(0, len(first), CHUNK_BYTES):
        chunk = first[start : start + CHUNK_BYTES]
        stats.bytes_read += len(chunk)
        _check_size(stats.bytes_read, limits.max_input_bytes, name)
        yield chunk
        memory.check()
    while chunk := _read(stream, CHUNK_BYTES, name):
        stats.bytes_read += len(chunk)
        _check_size(stats.bytes_read, limits.max_input_bytes, name)
        yield chunk
        memory.check()


def _check_size(size: int, max_bytes: int, name: str) -> None:
    if size > max_bytes:
        raise InputTooLargeError(
            f"{name}: more than {format_size(max_bytes)} of text (after decompression), "
            "the bound on one input",
            "--max-input-size",
            ENV_MAX_INPUT_SIZE,
            format_size(max_bytes * 4).replace(" ", ""),
        )


def _texts(chunks: Iterator[bytes], decoder: codecs.IncrementalDecoder) -> Iterator[str]:
    """The decoded text of each chunk, every line end made "\n".

    CRLF comes from Windows hosts and support tools; a lone CR (old Mac) ends a line too. A CR
    that ends a chunk waits for the next one: when that starts with LF, the two are one line end,
    not an empty line between.
    """
    held = ""
    for chunk in chunks:
        text = held + decoder.decode(chunk)
        held = ""
        if text[-1:] == "\r":
            text, held = text[:-1], "\r"
        if "\r" in text:
            text = text.replace("\r\n", "\n").replace("\r", "\n")
        yield text
    yield (held + decoder.decode(b"", final=True)).replace("\r", "\n")


# Bytes no text file holds (tab, newline and carriage return aside): their share tells binary data.
_CONTROL_BYTES = bytes(byte for byte in range(0x20) if byte not in (9, 10, 13))
_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def sniff_encoding(head: bytes) -> tuple[str, int]:
    """The encoding of a dump from its first bytes, and the length of its byte-order mark.

    Dumps are ASCII in practice, UTF-8 when a thread name is not. A Windows editor or PowerShell's
    `>` writes UTF-16 (with a BOM, or without one: then every other byte of ASCII text is NUL);
    an old terminal or editor writes Latin-1 (not valid UTF-8, and no control bytes: binary data,
    which is neither, stays UTF-8 so that its replacement characters say what it is).
    """
    for bom, encoding in _BOMS:
        if head.startswith(bom):
            return encoding, len(bom)
    sample = head[:4096]
    if len(sample) >= 4 and sample.count(0) * 3 >= len(sample):
        odd_nuls = sample[1::2].count(0)
        return ("utf-16-le" if odd_nuls >= sample[0::2].count(0) else "utf-16-be"), 0
    try:
        head.decode("utf-8")  # the whole first chunk: a name with an accent may come late
    except UnicodeDecodeError as error:
        if error.start < len(head) - 4:  # not only a character cut at the chunk's end
            controls = len(head) - len(head.translate(None, _CONTROL_BYTES))
            if controls * 20 < len(head):
                return "latin-1", 0
    return "utf-8", 0


class _Prepended(io.RawIOBase):
    """A binary stream that first replays bytes already read (to sniff the gzip magic), and
    counts what it gave (the compressed bytes a gzip reader consumed)."""

    def __init__(self, head: bytes, rest: io.BufferedIOBase) -> None:
        self._head = head
        self._rest = rest
        self.consumed = 0

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray) -> int:  # type: ignore[override]
        if self._head:
            count = min(len(buffer), len(self._head))
            buffer[:count] = self._head[:count]
            self._head = self._head[count:]
        else:
            data = self._rest.read(len(buffer))
            count = len(data)
            buffer[:count] = data
        self.consumed += count
        return count
