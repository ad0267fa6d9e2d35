"""Dump files as they arrive: each file read, with what reading it found (its dumps, or why it
could not be read) and what reading it had to repair, said as caveats beside the findings.

`dump analyze`, `diagnose --from` and each task of `batch` read their files here, so a caveat
("decoded as UTF-16", "an HTML page, read as its text", "lines cut at 1 MiB", "JSON log
records") reaches every report that analyses the file.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass

from kafkadiag.dumps.lines import ReadStats, display_name
from kafkadiag.errors import KafkadiagError
from kafkadiag.model import DumpFormat, ThreadDump
from kafkadiag.readlimits import ReadLimits, format_size

# Called with (path, bytes read so far) while a file is read: a progress bar's update.
Progress = Callable[[str, int], None]


@dataclass(frozen=True)
class FileRead:
    path: str  # as named (a bundle's file, a local copy of a remote one)
    source: str  # as reported: "<stdin>" for "-"
    dumps: int
    error: KafkadiagError | None = None


@dataclass(frozen=True)
class DumpsRead:
    dumps: tuple[ThreadDump, ...]
    files: tuple[FileRead, ...]
    caveats: tuple[str, ...]  # what reading the files changed or could not read

    @property
    def failures(self) -> tuple[KafkadiagError, ...]:
        return tuple(read.error for read in self.files if read.error is not None)


def read_dump_files(
    paths: Sequence[str], input_format: DumpFormat | None = None, progress: Progress | None = None
) -> DumpsRead:
    """Every dump of every file, in order; a file that cannot be read is recorded with its error
    and the others are still read."""
    dumps: list[ThreadDump] = []
    files: list[FileRead] = []
    caveats: list[str] = []
    for path in paths:
        stats = ReadStats()
        before = len(dumps)
        on_progress = (lambda done, path=path: progress(path, done)) if progress else None
        try:
            # Extended dump by dump: what a parser yielded before it failed is kept and analysed.
            dumps.extend(_read(path, input_format, stats, on_progress))
        except KafkadiagError as error:
            files.append(FileRead(path, display_name(path), len(dumps) - before, error))
            continue
        files.append(FileRead(path, display_name(path), len(dumps) - before))
        caveats += reading_caveats(display_name(path), stats)
    return DumpsRead(tuple(dumps), tuple(files), tuple(caveats))


def _read(
    path: str, input_format: DumpFormat | None, stats: ReadStats, on_progress: Callable[[int], None] | None
) -> Iterator[ThreadDump]:
    # Imported here: the parsers are the heaviest import of an offline run, and only reading needs them.
    from kafkadiag.dumps import read_dumps

    return read_dumps(path, input_format, stats, on_progress)


def reading_caveats(source: str, stats: ReadStats) -> list[str]:
    """What reading the file changed or could not read, said beside the findings."""
    caveats = []
    if stats.cut_lines:
        bound = format_size(ReadLimits.from_environment().max_line_chars)
        caveats.append(
            f"{source}: {stats.cut_lines} line(s) over {bound} were cut (the line numbers hold; "
            "--max-line-length raises the bound)"
        )
    if stats.replaced_characters:
        caveats.append(f"{source}: {stats.replaced_characters} byte(s) that are not text were replaced")
    if stats.encoding != "utf-8":
        caveats.append(f"{source}: decoded as {stats.encoding}")
    if stats.log_records_field is not None:
        where = (
            "line numbers count the lines of those fields, not of the file"
            if stats.multi_line_records
            else "one record per line, so line numbers hold"
        )
        caveats.append(
            f"{source}: JSON log records (Docker's json-file, journalctl -o json, a log shipper's export), "
            f'read as the text of each record\'s "{stats.log_records_field}" field; {where}'
        )
    if stats.http_header_lines:
        caveats.append(
            f"{source}: an HTTP response saved whole (curl -i): its status line and headers "
            f"(lines 1-{stats.http_header_lines}) were skipped"
        )
    if stats.html_page:
        caveats.append(
            f"{source}: an HTML page, read as its text (tags dropped, entities decoded); "
            "line numbers count the lines of that text, not of the file"
        )
    return caveats
