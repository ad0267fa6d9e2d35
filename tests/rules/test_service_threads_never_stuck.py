"""JDK and runtime service threads, and idle pool workers, are never reported as stuck.

A healthy JVM has threads that wait forever by design: the Reference Handler and Finalizer wait
for the collector, the Signal Dispatcher for a signal, the Attach Listener for jstack, a process
reaper or an idle pool worker for work, a stdin reader for input. Their stacks never change
between dumps, so a rule that reads "unchanged" as "stuck" would report them in every healthy
series. GIVEN every captured series of several dumps and every Java dump of the shared corpus
(files of one process over time read together), WHEN every rule runs, THEN no finding of warning
severity or worse names such a thread.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import Path

import pytest

from kafkadiag.dumps import read_dumps
from kafkadiag.errors import NoDumpFoundError
from kafkadiag.model import Thread, ThreadDump, ThreadStatus
from kafkadiag.rules import stacks, threadlabels
from kafkadiag.rules.base import Severity
from kafkadiag.rules.context import JAVA_FORMATS
from kafkadiag.rules.engine import analyze

from ..conftest import CAPTURED, CORPUS

# Threads the JVM or the JDK starts for itself (JDK 8 to 21 names).
SERVICE_NAMES = (
    "Reference Handler",
    "Finalizer",
    "Signal Dispatcher",
    "Common-Cleaner",
    "Attach Listener",
    "process reaper",
    "Service Thread",
    "Notification Thread",
    "Monitor Deflation Thread",
    "Sweeper thread",
    "C1 CompilerThread",
    "C2 CompilerThread",
    "JVMCI CompilerThread",
    "Surrogate Locker Thread",
)
# The captured series of the healthy scenarios must exist: the test is not vacuous. (The single
# worker's lane is busy, not stuck: nothing else of that consumer is.)
HEALTHY = (
    "healthy",
    "real-old-consumer-healthy-0.8.2.2",
    "real-new-consumer-healthy-4.1.1",
    "real-new-consumer-healthy-4.1.1-consumer-protocol",
    "real-new-consumer-single-worker-4.1.1",
)
# jstack -l, jstack and jcmd Thread.print -l of one JVM, taken in turn: a series of three dumps.
ONE_JVM = ("jstack-l.txt", "jstack.txt", "jcmd-thread-print-l.txt")


def is_service_thread(thread: Thread) -> bool:
    if thread.name.startswith(SERVICE_NAMES):
        return True
    if stacks.is_idle_pool_worker(thread):
        return True
    # A thread reading standard input waits in FileInputStream.readBytes for as long as nobody types.
    return (
        thread.status is ThreadStatus.RUNNABLE
        and bool(thread.frames)
        and (thread.frames[0].function == "java.io.FileInputStream.readBytes")
    )


def captured_series() -> list[list[Path]]:
    logs = sorted(CAPTURED.glob("*/kill3*.log")) + sorted(CAPTURED.glob("*/kill3*.log.gz"))
    in_turn = [
        [directory / name for name in ONE_JVM]
        for directory in sorted(CAPTURED.iterdir())
        if all((directory / name).is_file() for name in ONE_JVM)
    ]
    return [[path] for path in logs] + in_turn


def corpus_series() -> list[list[Path]]:
    """Corpus files, those of one process over time ("name-0.txt", "name-1.txt", ...) together."""
    files = sorted(CORPUS.glob("*/*.txt")) + sorted(CORPUS.glob("dumpling/*/*.log"))
    groups: dict[tuple[Path, str], list[tuple[int, Path]]] = defaultdict(list)
    for path in files:
        numbered = SERIES_MEMBER.match(path.stem)
        stem, position = (numbered["stem"], int(numbered["n"])) if numbered else (path.stem, 0)
        groups[(path.parent, stem)].append((position, path))
    return [[path for _, path in sorted(members)] for members in groups.values()]


SERIES_MEMBER = re.compile(r"^(?P<stem>.+)-(?P<n>\d+)$")


def threads_by_label(dumps: list[ThreadDump]) -> dict[str, list[Thread]]:
    found: dict[str, list[Thread]] = defaultdict(list)
    for dump in dumps:
        shared = threadlabels.shared_names(dump)
        for thread in dump.threads:
            found[threadlabels.label(thread, shared)].append(thread)
    return found


def service_threads_reported(paths: list[Path]) -> list[str]:
    try:
        dumps = [dump for path in paths for dump in read_dumps(str(path))]
    except NoDumpFoundError:
        return []
    dumps = [dump for dump in dumps if dump.format in JAVA_FORMATS]
    if not dumps:
        return []
    report = analyze(dumps)
    by_label = threads_by_label(dumps)
    wrong = []
    for finding in report.findings:
        if not finding.severity.at_least(Severity.WARNING):
            continue
        for label in finding.threads:
            if any(is_service_thread(thread) for thread in by_label.get(label, [])):
                wrong.append(f"{finding.rule} names {label!r}: {finding.message}")
    return wrong


def test_every_healthy_scenario_has_a_series_of_several_dumps() -> None:
    series = {paths[0].parent.name: paths for paths in captured_series()}
    assert set(HEALTHY) <= set(series)
    for name in HEALTHY:
        assert len([dump for path in series[name] for dump in read_dumps(str(path))]) >= 3


@pytest.mark.parametrize(
    "paths", captured_series(), ids=lambda ps: f"{ps[0].parent.name}/{ps[0].name}" + "+2" * (len(ps) > 1)
)
def test_no_captured_series_reports_a_service_thread(paths: list[Path]) -> None:
    assert service_threads_reported(paths) == []


@pytest.mark.parametrize(
    "paths",
    corpus_series(),
    ids=lambda ps: f"{ps[0].parent.name}/{ps[0].name}" + (f"+{len(ps) - 1}" if len(ps) > 1 else ""),
)
def test_no_corpus_series_reports_a_service_thread(paths: list[Path], corpus: Path) -> None:
    assert service_threads_reported(paths) == []


def test_the_check_recognises_service_threads_in_a_real_dump() -> None:
    """The predicate itself: a healthy capture has JDK service threads and idle pool workers."""
    (dump,) = read_dumps(str(CAPTURED / "healthy" / "jstack-l.txt"))
    service = {thread.name for thread in dump.threads if is_service_thread(thread)}
    assert {"Reference Handler", "Finalizer", "Signal Dispatcher", "Common-Cleaner"} <= service
    assert {f"pool-1-thread-{i}" for i in range(1, 5)} <= service
    assert "cpu-worker" not in service and "main" not in service
