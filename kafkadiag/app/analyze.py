"""Analyse dump files: read them (kafkadiag.collect.dumpfiles), run the rule catalogue over what
was read, with what reading repaired as the report's caveats."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

from kafkadiag.collect.dumpfiles import DumpsRead, Progress, read_dump_files
from kafkadiag.model import DumpFormat, ThreadDump
from kafkadiag.rules.engine import Report, analyze


@dataclass(frozen=True)
class DumpAnalysis:
    read: DumpsRead
    report: Report  # over no dump at all when none could be read


class DumpWatch(Protocol):
    """Told how reading and analysing go (kafkadiag.progress.AnalysisProgress shows it)."""

    def update(self, path: str, bytes_read: int) -> None: ...

    def analysing(self, dumps: int) -> None: ...


def analyze_dumps(
    paths: Sequence[str],
    input_format: DumpFormat | None = None,
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    progress: Progress | None = None,
    more_dumps: Sequence[ThreadDump] = (),
    analysing: Callable[[int], None] | None = None,
) -> DumpAnalysis:
    """The analysis of every dump in `paths`, and of `more_dumps` taken otherwise (a live
    process's, which `diagnose --pid` analyses with its bundles). `progress` is told the bytes
    read; `analysing`, the number of dumps when the rules start (the longer part on large logs)."""
    read = read_dump_files(paths, input_format, progress)
    dumps = [*more_dumps, *read.dumps]
    if analysing is not None:
        analysing(len(dumps))
    report = analyze(dumps, tuple(select), tuple(ignore), read.caveats if dumps else ())
    return DumpAnalysis(read, report)
