"""What a rule sees: one dump, the other dumps of the same process, and ways to quote them."""

from __future__ import annotations

import operator
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from kafkadiag.lockgraph import LockGraph
from kafkadiag.model import DumpFormat, LockEvent, LockRef, Thread, ThreadDump
from kafkadiag.rules import threadlabels
from kafkadiag.rules.base import Evidence, Requirement

T = TypeVar("T")

# Lists of threads this long have their labels kept (shorter ones are labelled again, cheaply).
LONG_LIST = 64

JAVA_FORMATS = frozenset(
    {
        DumpFormat.HOTSPOT,
        DumpFormat.NETBEANS,
        DumpFormat.JCMD_TEXT,
        DumpFormat.JCMD_JSON,
        DumpFormat.INTELLIJ,
        DumpFormat.JAVACORE,
        DumpFormat.ANDROID_ANR,
        DumpFormat.STACK_TRACES,
        DumpFormat.JCONSOLE,
        DumpFormat.ACTUATOR_JSON,
        DumpFormat.GOCD_SUPPORT,
    }
)
PYTHON_FORMATS = frozenset(
    {
        DumpFormat.PYSPY,
        DumpFormat.PYSPY_JSON,
        DumpFormat.FAULTHANDLER,
        DumpFormat.PY_TRACEBACK,
        DumpFormat.GDB_PY_BT,
        DumpFormat.GEVENT,
        DumpFormat.ASYNCIO,
        DumpFormat.GURU_MEDITATION,
    }
)


def available_requirements(dump: ThreadDump, series_length: int) -> frozenset[Requirement]:
    found: set[Requirement] = set()
    if dump.format in JAVA_FORMATS:
        found.add(Requirement.JAVA)
        if dump.has_lock_data:
            found.add(Requirement.LOCK_DATA)
        if any(thread.cpu_ms is not None for thread in dump.threads[:50]):
            found.add(Requirement.CPU_TIMES)
    if dump.format in PYTHON_FORMATS:
        found.add(Requirement.PYTHON)
        if any(frame.locals for thread in dump.threads for frame in thread.frames):
            found.add(Requirement.PYSPY_LOCALS)
        if any(frame.native for thread in dump.threads for frame in thread.frames):
            found.add(Requirement.PYSPY_NATIVE)
    if dump.os_threads:
        found.add(Requirement.OS_THREAD_CPU)
    if series_length > 1:
        found.add(Requirement.SEVERAL_DUMPS)
    return frozenset(found)


@dataclass
class AnalysisContext:
    """One dump under analysis (`dump`), within the series of dumps of its process."""

    series: Sequence[ThreadDump]
    position: int  # index of `dump` within `series`
    series_name: str = ""
    # Shared by every rule that runs on the series: lock graphs and other per-dump results.
    memo: dict[tuple[str, int], object] = field(default_factory=dict)

    @property
    def dump(self) -> ThreadDump:
        return self.series[self.position]

    @property
    def available(self) -> frozenset[Requirement]:
        return available_requirements(self.dump, len(self.series))

    def graph(self, dump: ThreadDump | None = None) -> LockGraph:
        return self.cached("lock-graph", dump or self.dump, LockGraph)

    def cached(self, name: str, dump: ThreadDump, compute: Callable[[ThreadDump], T]) -> T:
        """`compute(dump)`, computed once per dump for all the rules of an analysis."""
        key = (name, id(dump))
        if key not in self.memo:
            self.memo[key] = compute(dump)
        return self.memo[key]  # type: ignore[return-value]

    def label(self, thread: Thread, dump: ThreadDump | None = None) -> str:
        """The thread's name in findings; with its nid when other threads share the name."""
        return self.labels((thread,), dump)[0]

    def labels(self, threads: Iterable[Thread], dump: ThreadDump | None = None) -> list[str]:
        # Kept per thread: a finding about a lock with thousands of waiters names all of them,
        # and every putter holding that lock names them again.
        # A rule that keeps its thread lists (KD107: one list of waiters for all the putters of a
        # lock) has each long list labelled once, then copies of those labels while it still holds
        # the same threads.
        dump = dump or self.dump
        listed = self.cached("list-labels", dump, _no_list_labels)
        if isinstance(threads, list):
            entry = listed.get(id(threads))
            if entry is not None and _same_threads(entry, threads):
                return list(entry[2])
        shared = self.cached("shared-thread-names", dump, threadlabels.shared_names)
        known = self.cached("thread-labels", dump, _no_labels)
        found = []
        for thread in threads:
            text = known.get(id(thread))
            if text is None:
                text = known[id(thread)] = threadlabels.label(thread, shared)
            found.append(text)
        if isinstance(threads, list) and len(threads) >= LONG_LIST:
            listed[id(threads)] = (threads, tuple(threads), found)
            return list(found)
        return found

    # -- quoting the input ----------------------------------------------------------------------

    def header(self, thread: Thread, dump: ThreadDump | None = None) -> Evidence:
        dump = dump or self.dump
        return Evidence(dump.source, thread.line_no, thread.header)

    def frame(self, thread: Thread, index: int, dump: ThreadDump | None = None) -> Evidence:
        dump = dump or self.dump
        frame = thread.frames[index]
        prefix = "at " if dump.format in JAVA_FORMATS else ""
        line_no = thread.frame_line_no(index)
        text = f"{prefix}{frame.text}"
        if line_no is None:
            text = f"{text}   (frame {index} of {thread.name})"
        return Evidence(dump.source, line_no, text)

    def waiting(self, thread: Thread) -> list[Evidence]:
        """The thread's header and, when it waits for a lock, the line that says which."""
        evidence = [self.header(thread)]
        event = thread.waits_for()
        if event is not None:
            evidence.append(self.event(thread, event))
        return evidence

    def event(self, thread: Thread, event: LockEvent, dump: ThreadDump | None = None) -> Evidence:
        dump = dump or self.dump
        text = event.text or f"- {event.kind.value} <0x{event.lock_id or 0:x}> (a {event.lock_class})"
        return Evidence(dump.source, event.line_no if dump.format in JAVA_FORMATS else None, text)

    def held(self, thread: Thread, lock: LockRef, dump: ThreadDump | None = None) -> Evidence:
        dump = dump or self.dump
        text = lock.text or f"- <0x{lock.lock_id:x}> (a {lock.lock_class})"
        return Evidence(dump.source, lock.line_no or None, text)


def _no_list_labels(_: ThreadDump) -> dict[int, tuple[list[Thread], tuple[Thread, ...], list[str]]]:
    return {}


def _same_threads(kept: tuple[list[Thread], tuple[Thread, ...], list[str]], threads: list[Thread]) -> bool:
    """The very list labelled before, still holding the same threads in the same order."""
    listed, snapshot, _ = kept
    return listed is threads and len(snapshot) == len(threads) and all(map(operator.is_, snapshot, threads))


def _no_labels(_: ThreadDump) -> dict[int, str]:
    """An empty label memo for a dump (its threads live as long as the analysis, so ids hold)."""
    return {}
