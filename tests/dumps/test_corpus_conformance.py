"""Conformance of the HotSpot parser and the lock graph with the shared thread-dump corpus.

The corpus (`tests/corpus`, copied unedited with each project's licence; see its SOURCES) holds
real thread dumps from the test suites of two thread-dump tools, olivergondza/dumpling and
parttimenerd/jthreaddump. `EXPECTED.md` there records what those projects' own tests assert
about each file; every test below cites the row it checks. Sections 4 (dumpling) and 5
(jthreaddump) are covered row by row; sections 6 and 7 name files that are not in this snapshot
of the corpus, which `test_sections_6_and_7_files_are_not_in_this_corpus` pins down.

Vocabulary mapping (dumpling -> kafkadiag):
  status RUNNABLE/SLEEPING/IN_OBJECT_WAIT(_TIMED)/PARKED(_TIMED)/BLOCKED -> ThreadStatus of the same name
  waitingToLock  -> Thread.waits_for() of kind WAITING_TO_LOCK or WAITING_TO_RELOCK
  waitingOnLock  -> Thread.waits_for() of kind WAITING_ON or PARKING
  acquired locks -> Thread.held_locks(); acquired synchronizers -> Thread.held_synchronizers
  lock ids       -> unsigned ints from hex; dumpling's signed 64-bit longs are converted (issue-71)

Expectations come from EXPECTED.md (and the peer tests it summarises). Where EXPECTED only says
"exact set of N threads", the names were read from the dump file itself as a cross-check and are
spelled out here; the counts are EXPECTED's.
"""

from __future__ import annotations

import functools
import re
from collections import Counter
from pathlib import Path
from typing import TypeVar

import pytest

from kafkadiag.dumps import read_dumps
from kafkadiag.errors import NoDumpFoundError
from kafkadiag.lockgraph import LockGraph
from kafkadiag.model import (
    LockEventKind,
    LockRef,
    Thread,
    ThreadDump,
    ThreadState,
    ThreadStatus,
)
from kafkadiag.threadheader import header_fields

# --------------------------------------------------------------------------------------------
# Where the corpus lives. Absent corpus = loud failure of the whole module, never a skip.
# --------------------------------------------------------------------------------------------

REPO_ROOT = Path(__file__).resolve().parents[2]
CORPUS = REPO_ROOT / "tests" / "corpus"

if not CORPUS.is_dir():
    pytest.fail(
        f"The thread-dump corpus is missing: the conformance tests expect it at {CORPUS}.",
        pytrace=False,
    )

FACTORY = "dumpling/factory/"
JSTACK = "dumpling/jstack/"
QUERY = "dumpling/query/"
JTD = "jthreaddump/"

S = ThreadStatus
K = LockEventKind
TO_LOCK_KINDS = (K.WAITING_TO_LOCK, K.WAITING_TO_RELOCK)  # dumpling's "waitingToLock"
ON_LOCK_KINDS = (K.WAITING_ON, K.PARKING)  # dumpling's "waitingOnLock"

# Classes that recur in the expectations.
RQ_LOCK = "java.lang.ref.ReferenceQueue$Lock"
REF_LOCK = "java.lang.ref.Reference$Lock"
UNIX_PROCESS = "java.lang.UNIXProcess"
RL_SYNC = "java.util.concurrent.locks.ReentrantLock$NonfairSync"
RRWL_SYNC = "java.util.concurrent.locks.ReentrantReadWriteLock$NonfairSync"
QUEUE = "hudson.model.Queue"


# --------------------------------------------------------------------------------------------
# Helpers
# --------------------------------------------------------------------------------------------


@functools.cache
def parse(rel: str) -> tuple[ThreadDump, ...]:
    """All dumps of one corpus file (cached: the model is immutable)."""
    return tuple(read_dumps(str(CORPUS / rel)))


def only_dump(rel: str) -> ThreadDump:
    dumps = parse(rel)
    assert len(dumps) == 1, f"{rel}: expected exactly one dump, got {len(dumps)}"
    return dumps[0]


def named(dump: ThreadDump, name: str) -> Thread:
    matches = [t for t in dump.threads if t.name == name]
    assert len(matches) == 1, f"{dump.source}: expected one thread named {name!r}, found {len(matches)}"
    return matches[0]


def index_of(dump: ThreadDump, name: str) -> int:
    indexes = [i for i, t in enumerate(dump.threads) if t.name == name]
    assert len(indexes) == 1, f"{dump.source}: expected one thread named {name!r}, found {len(indexes)}"
    return indexes[0]


T = TypeVar("T")


def must(value: T | None) -> T:
    """The value, which the expectation needs to be there."""
    assert value is not None
    return value


def lock(lock_class: str, lock_id: int) -> LockRef:
    return LockRef(lock_id, lock_class)


def waiting_to_lock(thread: Thread) -> LockRef | None:
    """dumpling's getWaitingToLock()."""
    event = thread.waits_for()
    if event is None or event.kind not in TO_LOCK_KINDS:
        return None
    return LockRef(must(event.lock_id), event.lock_class)


def waiting_on_lock(thread: Thread) -> LockRef | None:
    """dumpling's getWaitingOnLock()."""
    event = thread.waits_for()
    if event is None or event.kind not in ON_LOCK_KINDS:
        return None
    return LockRef(must(event.lock_id), event.lock_class)


def acquired(thread: Thread) -> set[LockRef]:
    """dumpling's getAcquiredLocks(): monitors and ownable synchronizers."""
    return set(thread.held_locks())


def acquired_monitors(thread: Thread) -> set[LockRef]:
    synchronizer_ids = {s.lock_id for s in thread.held_synchronizers or ()}
    return {held for held in thread.held_locks() if held.lock_id not in synchronizer_ids}


def signed64(value: int | None) -> int | None:
    """dumpling stores ids as Java longs: 0xffffffffe2875c0a is -494445558 there."""
    if value is None:
        return None
    return value - (1 << 64) if value >= (1 << 63) else value


def frame_shape(thread: Thread) -> list[tuple]:
    """(function, file, line, native) per frame: what dumpling's StackTraceElement compares."""
    return [(f.function, f.file, f.line, f.native) for f in thread.frames]


def names_tree(graph: LockGraph, tree: dict) -> dict:
    """LockGraph.tree() with thread indexes replaced by thread names."""
    return {graph.thread(index).name: names_tree(graph, sub) for index, sub in tree.items()}


def forest(graph: LockGraph) -> dict:
    trees: dict = {}
    for root in graph.roots():
        trees.update(names_tree(graph, graph.tree(root)))
    return trees


def cycle_names(dump: ThreadDump, graph: LockGraph) -> list[frozenset[str]]:
    return sorted((frozenset(dump.threads[i].name for i in cycle) for cycle in graph.cycles()), key=sorted)


def blockers_of_anyone(graph: LockGraph) -> list[str]:
    """TopContenders' "blockers": every thread that blocks at least one other thread."""
    return [graph.thread(i).name for i in range(len(graph.threads)) if graph.blocked_by(i)]


def text_of(rel: str) -> str:
    return (CORPUS / rel).read_text(encoding="utf-8", errors="replace")


def header_names(rel: str) -> list[str]:
    """Independent oracle: the names of the thread header lines of a HotSpot dump.

    A header is a line opening with a quote that is not a `"name":` line of the JVM's deadlock
    report (those only repeat threads already dumped). The name runs to the last quote.
    """
    names = []
    for line in text_of(rel).splitlines():
        if line.startswith('"') and not line.rstrip().endswith('":'):
            names.append(line[1 : line.rindex('"')])
    return names


def all_corpus_files() -> list[str]:
    return sorted(
        str(p.relative_to(CORPUS))
        for p in CORPUS.rglob("*")
        if p.is_file() and p.name not in ("EXPECTED.md", "README.md", "SOURCES", "LICENSE")
    )


ALL_FILES = all_corpus_files()
JTD_FILES = sorted(f for f in ALL_FILES if f.startswith(JTD))
# Every file with thread headers (no-threads.log has none and must be refused).
FILES_WITH_THREADS = [f for f in ALL_FILES if f != FACTORY + "no-threads.log"]


# --------------------------------------------------------------------------------------------
# The corpus inventory
# --------------------------------------------------------------------------------------------

EXPECTED_SECTION_4_AND_5_FILES = [
    *(
        FACTORY + n
        for n in (
            "openjdk-1.7.0_60.log",
            "oraclejdk-1.7.0_51.log",
            "oraclejdk-1.7.log",
            "oraclejdk-1.8.log",
            "oraclejdk-1.9.log",
            "openjdk-1.6.log",
            "openjdk-1.7.log",
            "openjdk-1.8.log",
            "openjdk-11.0.2.log",
            "self-lock.log",
            "ownable-synchronizers.log",
            "crlf.log",
            "no_blank_lines.log",
            "in-object-wait.log",
            "in_wait_without_monitor.log",
            "blocked-without-monitor.log",
            "runnable-in-object-wait.log",
            "runnable_in_unsafe_park.log",
            "inconsistent-locks-and-state.log",
            "multiple-monitors-on-single-frame.log",
            "no-tabs.log",
            "issue-46.log",
            "issue-59.log",
            "issue-71.log",
            "unprefixed-synchronizers.log",
            "unknown-chunks.log",
            "no-threads.log",
            "broken-synchronizers.log",
            "jrockit-1.5.log",
            "jrockit-1.6.log",
        )
    ),
    *(
        JSTACK + n
        for n in (
            "blocking-tree.log",
            "blocking-chain.log",
            "producer-consumer.log",
            "contention.log",
            "deadlock.log",
            "deadlock-and-friends.log",
            "ReentrantLock-parking-blockage.log",
            "ReentrantReadWriteLock-parking-blockage-read.log",
            "ReentrantReadWriteLock-parking-blockage-write.log",
        )
    ),
    QUERY + "synchronizer_deadlock.log",
    *(
        JTD + n
        for n in (
            "thread-dump-jstack.txt",
            "thread-dump-jcmd.txt",
            "thread-dump-deadlock.txt",
            "thread-dump-minimal.txt",
            "thread-dump-multi-deadlock.txt",
            "multi-deadlock-test.txt",
            "deadlock.txt",
            "deadlock-detailed.txt",
            "three-way-deadlock.txt",
            "three-way-deadlock-detailed.txt",
            "reentrant-lock.txt",
            "read-write-lock.txt",
            "virtual-threads.txt",
            "many-virtual-threads.txt",
            "virtual-thread-deadlock.txt",
            "thread-pool.txt",
            "thread-pool-detailed.txt",
            "complex.txt",
            "complex-detailed.txt",
            "minimal-threads.txt",
            "gc-activity.txt",
            *(f"deadlock-formation-{i}.txt" for i in range(6)),
            *(f"deadlock-progression-{i}.txt" for i in range(6)),
            *(f"thread-pool-load-{i}.txt" for i in range(5)),
            *(f"thread-pool-progression-{i}.txt" for i in range(5)),
            *(f"gc-over-time-{i}.txt" for i in range(5)),
            *(f"gc-progression-{i}.txt" for i in range(5)),
            *(f"virtual-over-time-{i}.txt" for i in range(4)),
        )
    ),
]


@pytest.mark.parametrize("rel", EXPECTED_SECTION_4_AND_5_FILES)
def test_every_file_named_in_expected_sections_4_and_5_is_in_the_corpus(rel: str) -> None:
    """GIVEN a file EXPECTED.md sections 4/5 make assertions about
    THEN it is present in the corpus (otherwise the rows below would silently test nothing)."""
    assert (CORPUS / rel).is_file(), f"{rel} is named in EXPECTED.md but missing from {CORPUS}"


@pytest.mark.parametrize(
    "name",
    [
        "sapdump.log",
        "jrockit_15_dump.txt",
        "jrockit_14_dump.txt",
        "javacore.20230830.134339.30220.0001.txt",
        "javacore.20230830.134339.30220.0002.txt",
    ],
)
def test_sections_6_and_7_files_are_not_in_this_corpus(name: str) -> None:
    """GIVEN the files of EXPECTED.md sections 6 (threadlogic) and 7 (javacore-analyser)
    THEN none of them is in this snapshot of the corpus, so there is nothing to check for them.
    (If one is added, this test fails and the row must get a real test.)"""
    assert not list(CORPUS.rglob(name)), f"{name} appeared in the corpus: write its conformance test"


# --------------------------------------------------------------------------------------------
# Every file parses (or is refused for the documented reason)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("rel", ALL_FILES)
def test_every_corpus_file_parses_without_exception(rel: str) -> None:
    """GIVEN any dump file of the corpus
    WHEN it is read with read_dumps
    THEN it yields at least one dump with threads, without raising;
    except no-threads.log, a banner with no thread, which must raise NoDumpFoundError
    (dumpling: "No threads found in threaddump")."""
    if rel == FACTORY + "no-threads.log":
        with pytest.raises(NoDumpFoundError):
            list(read_dumps(str(CORPUS / rel)))
        return
    dumps = list(read_dumps(str(CORPUS / rel)))
    assert dumps, f"{rel}: no dump"
    assert all(d.threads for d in dumps), f"{rel}: a dump without threads"


def test_unknown_chunks_are_counted_as_unparsed_not_turned_into_threads() -> None:
    """GIVEN unknown-chunks.log: one real thread, then the words "This is not a threaddump no
    matter how hard you try to parse it", one per line, before the JNI footer
    WHEN parsed (lenient mode: dumpling must parse it, strict mode must report the chunk)
    THEN there is exactly the one thread, and each of the 14 words is an unparsed line."""
    dump = only_dump(FACTORY + "unknown-chunks.log")
    assert [t.name for t in dump.threads] == ["Attach Listener"]
    words = "This is not a threaddump no matter how hard you try to parse it".split()
    assert dump.unparsed_count == len(words) == 14
    assert [u.text for u in dump.unparsed] == words


def test_no_threads_log_raises_no_dump_found() -> None:
    """GIVEN no-threads.log: timestamp, banner, JNI footer and no thread
    THEN read_dumps raises NoDumpFoundError ("No threads found in threaddump")."""
    with pytest.raises(NoDumpFoundError):
        list(read_dumps(str(CORPUS / FACTORY / "no-threads.log")))


def test_broken_synchronizer_line_is_counted_as_unparsed() -> None:
    """GIVEN broken-synchronizers.log, whose synchronizer line is `- <0XXXXX>< Woohoo, I'm a fish!`
    THEN the dump parses, the thread is there, the line (8) is counted as unparsed
    ("Unable to parse ownable synchronizer") and no bogus synchronizer is invented."""
    dump = only_dump(FACTORY + "broken-synchronizers.log")
    attach = named(dump, "Attach Listener")
    assert dump.unparsed_count == 1
    assert dump.unparsed[0].line_no == 8
    assert "Woohoo, I'm a fish!" in dump.unparsed[0].text
    assert attach.held_locks() == ()


# --------------------------------------------------------------------------------------------
# dumpling/factory: thread counts, names, header fields, statuses, stacks
# --------------------------------------------------------------------------------------------


def test_openjdk_1_7_0_60() -> None:
    """EXPECTED: 35 threads; `main`: RUNNABLE, tid 139675222183936, nid 24597, prio 10, 27 frames,
    frame0 `org.eclipse.swt.internal.gtk.OS.Call` native, frame1 `Display.sleep(Display.java:4233)`."""
    dump = only_dump(FACTORY + "openjdk-1.7.0_60.log")
    assert len(dump.threads) == 35
    main = named(dump, "main")
    assert main.status is S.RUNNABLE
    assert main.state is ThreadState.RUNNABLE
    assert main.tid == 139675222183936
    assert main.nid == 24597
    assert main.priority == 10
    assert len(main.frames) == 27
    assert frame_shape(main)[:2] == [
        ("org.eclipse.swt.internal.gtk.OS.Call", None, None, True),
        ("org.eclipse.swt.widgets.Display.sleep", "Display.java", 4233, False),
    ]
    assert main.frames[0].class_name == "org.eclipse.swt.internal.gtk.OS"
    assert main.frames[0].method == "Call"


def test_oraclejdk_1_7_0_51_channel_reader_thread() -> None:
    """EXPECTED: 143 threads; `Channel reader thread: jenkins_slave_02` RUNNABLE, 13 frames, top
    `FileInputStream.readBytes` native, bottom `SynchronousCommandTransport$ReaderThread.run(…:48)`."""
    dump = only_dump(FACTORY + "oraclejdk-1.7.0_51.log")
    assert len(dump.threads) == 143
    reader = named(dump, "Channel reader thread: jenkins_slave_02")
    assert reader.status is S.RUNNABLE
    assert len(reader.frames) == 13
    assert frame_shape(reader)[0] == ("java.io.FileInputStream.readBytes", None, None, True)
    assert frame_shape(reader)[-1] == (
        "hudson.remoting.SynchronousCommandTransport$ReaderThread.run",
        "SynchronousCommandTransport.java",
        48,
        False,
    )
    assert reader.frames[-1].class_name == "hudson.remoting.SynchronousCommandTransport$ReaderThread"


def test_oraclejdk_1_7_0_51_process_reaper_stack_with_dollar_signs() -> None:
    """EXPECTED: `process reaper` stack (tests `$` in class names `access$200`, `UNIXProcess$3`).
    The dump really has four threads named `process reaper`, all with this stack."""
    dump = only_dump(FACTORY + "oraclejdk-1.7.0_51.log")
    reapers = [t for t in dump.threads if t.name == "process reaper"]
    assert len(reapers) == 4
    expected = [
        ("java.lang.UNIXProcess.waitForProcessExit", None, None, True),
        ("java.lang.UNIXProcess.access$200", "UNIXProcess.java", 54, False),
        ("java.lang.UNIXProcess$3.run", "UNIXProcess.java", 174, False),
        ("java.util.concurrent.ThreadPoolExecutor.runWorker", "ThreadPoolExecutor.java", 1145, False),
        ("java.util.concurrent.ThreadPoolExecutor$Worker.run", "ThreadPoolExecutor.java", 615, False),
        ("java.lang.Thread.run", "Thread.java", 744, False),
    ]
    for reaper in reapers:
        assert frame_shape(reaper) == expected
    assert reapers[0].frames[1].class_name == "java.lang.UNIXProcess"
    assert reapers[0].frames[1].method == "access$200"
    assert reapers[0].frames[2].class_name == "java.lang.UNIXProcess$3"


def test_oraclejdk_1_7_0_51_msc_service_thread_parks_on_condition() -> None:
    """EXPECTED: `MSC service thread 1-2` prints `parking to wait for <0x7007d87c8>`:
    PARKED, waitingOnLock = that AbstractQueuedSynchronizer$ConditionObject; a condition has no
    owner, so nobody blocks it in the lock graph."""
    dump = only_dump(FACTORY + "oraclejdk-1.7.0_51.log")
    msc = named(dump, "MSC service thread 1-2")
    assert msc.status is S.PARKED
    condition = lock("java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject", 0x7007D87C8)
    assert waiting_on_lock(msc) == condition
    assert must(msc.waits_for()).kind is K.PARKING
    assert waiting_to_lock(msc) is None
    assert LockGraph(dump).blockers(index_of(dump, "MSC service thread 1-2")) == []


# The peer's exact thread sets (dumpling ThreadDumpFactoryTest.sameThreadsAs):
# (name, daemon, tid, nid, priority, java_id, status, waitingOnLock)
# status None: the thread has no "java.lang.Thread.State" line and dumpling leaves its status at
# its default, so there is nothing to compare. sameThreadsAs also compares waitingToLock (null for
# all) and acquired locks (empty for all): every waiter released the monitor it waits on.
ExactRow = tuple  # (str, bool, int, int, int | None, int | None, ThreadStatus | None, LockRef | None)

EXACT_SETS: dict[str, list[ExactRow]] = {
    "oraclejdk-1.7.log": [
        ("Attach Listener", True, 194867200, 18909, 10, None, S.RUNNABLE, None),
        ("GC task thread#0 (ParallelGC)", False, 191416320, 18882, 10, None, None, None),
        ("GC task thread#1 (ParallelGC)", False, 191424512, 18883, 10, None, None, None),
        ("GC task thread#2 (ParallelGC)", False, 191430656, 18884, 10, None, None, None),
        ("GC task thread#3 (ParallelGC)", False, 191438848, 18885, 10, None, None, None),
        ("VM Periodic Task Thread", False, 192006144, 18893, 10, None, None, None),
        ("Signal Dispatcher", True, 191895552, 18889, 10, None, S.RUNNABLE, None),
        ("process reaper", True, 47867348480000, 18895, 10, None, S.RUNNABLE, None),
        ("C2 CompilerThread0", True, 191905792, 18890, 10, None, S.RUNNABLE, None),
        ("C2 CompilerThread1", True, 191952896, 18891, 10, None, S.RUNNABLE, None),
        ("VM Thread", False, 191717376, 18886, 10, None, None, None),
        ("Service Thread", True, 191963136, 18892, 10, None, S.RUNNABLE, None),
        ("Finalizer", True, 191744000, 18888, 10, None, S.IN_OBJECT_WAIT, lock(RQ_LOCK, 33678346384)),
        (
            "Reference Handler",
            True,
            191727616,
            18887,
            10,
            None,
            S.IN_OBJECT_WAIT,
            lock(REF_LOCK, 33678167272),
        ),
        ("main", False, 191326208, 18881, 10, None, S.IN_OBJECT_WAIT, lock(UNIX_PROCESS, 33649075520)),
    ],
    "oraclejdk-1.8.log": [
        ("Attach Listener", True, 1716535296, 8144, 9, 11, S.RUNNABLE, None),
        ("GC task thread#0 (ParallelGC)", False, 3059810304, 8115, None, None, None, None),
        ("GC task thread#1 (ParallelGC)", False, 3059815424, 8116, None, None, None, None),
        ("GC task thread#2 (ParallelGC)", False, 3059820544, 8117, None, None, None, None),
        ("GC task thread#3 (ParallelGC)", False, 3059825664, 8118, None, None, None, None),
        ("VM Periodic Task Thread", False, 1718347776, 8127, None, None, None, None),
        ("Signal Dispatcher", True, 1718240256, 8122, 9, 4, S.RUNNABLE, None),
        ("process reaper", True, 1697889280, 8129, 10, 10, S.RUNNABLE, None),
        ("C2 CompilerThread0", True, 1718247424, 8123, 9, 5, S.RUNNABLE, None),
        ("C2 CompilerThread1", True, 1718254592, 8124, 9, 6, S.RUNNABLE, None),
        ("C1 CompilerThread2", True, 1718260736, 8125, 9, 7, S.RUNNABLE, None),
        ("VM Thread", False, 1718094848, 8119, None, None, None, None),
        ("Service Thread", True, 1718273024, 8126, 9, 8, S.RUNNABLE, None),
        ("Finalizer", True, 1718118400, 8121, 8, 3, S.IN_OBJECT_WAIT, lock(RQ_LOCK, 2495908272)),
        ("Reference Handler", True, 1718108160, 8120, 10, 2, S.IN_OBJECT_WAIT, lock(REF_LOCK, 2495922552)),
        ("main", False, 3059771392, 8114, 5, 1, S.IN_OBJECT_WAIT, lock(UNIX_PROCESS, 2468857072)),
    ],
    "openjdk-1.6.log": [
        ("Attach Listener", True, 507363328, 28597, 10, None, S.RUNNABLE, None),
        ("GC task thread#0 (ParallelGC)", False, 504647680, 28568, 10, None, None, None),
        ("GC task thread#1 (ParallelGC)", False, 504655872, 28569, 10, None, None, None),
        ("GC task thread#2 (ParallelGC)", False, 504662016, 28570, 10, None, None, None),
        ("GC task thread#3 (ParallelGC)", False, 504670208, 28571, 10, None, None, None),
        ("VM Periodic Task Thread", False, 505618432, 28579, 10, None, None, None),
        ("Signal Dispatcher", True, 505575424, 28575, 10, None, S.RUNNABLE, None),
        ("process reaper", True, 47702392721408, 28582, 10, None, S.RUNNABLE, None),
        ("C2 CompilerThread0", True, 505583616, 28576, 10, None, S.RUNNABLE, None),
        ("C2 CompilerThread1", True, 505595904, 28577, 10, None, S.RUNNABLE, None),
        ("VM Thread", False, 505159680, 28572, 10, None, None, None),
        ("Low Memory Detector", True, 505606144, 28578, 10, None, S.RUNNABLE, None),
        ("Finalizer", True, 505229312, 28574, 10, None, S.IN_OBJECT_WAIT, lock(RQ_LOCK, 3773522592)),
        ("Reference Handler", True, 505221120, 28573, 10, None, S.IN_OBJECT_WAIT, lock(REF_LOCK, 3773521872)),
        ("main", False, 504590336, 28567, 10, None, S.IN_OBJECT_WAIT, lock(UNIX_PROCESS, 3791474536)),
    ],
    "openjdk-1.7.log": [
        ("Attach Listener", True, 1740638208, 32404, 10, None, S.RUNNABLE, None),
        ("GC task thread#0 (ParallelGC)", False, 3075542016, 32366, 10, None, None, None),
        ("GC task thread#1 (ParallelGC)", False, 3075547136, 32367, 10, None, None, None),
        ("GC task thread#2 (ParallelGC)", False, 3075553280, 32368, 10, None, None, None),
        ("GC task thread#3 (ParallelGC)", False, 3075559424, 32369, 10, None, None, None),
        ("GC task thread#4 (ParallelGC)", False, 3075564544, 32370, 10, None, None, None),
        ("GC task thread#5 (ParallelGC)", False, 3075570688, 32371, 10, None, None, None),
        ("GC task thread#6 (ParallelGC)", False, 3075576832, 32372, 10, None, None, None),
        ("GC task thread#7 (ParallelGC)", False, 3075581952, 32373, 10, None, None, None),
        ("VM Periodic Task Thread", False, 1748556800, 32381, 10, None, None, None),
        ("Signal Dispatcher", True, 1748527104, 32377, 10, None, S.RUNNABLE, None),
        ("process reaper", True, 1734433792, 32385, 10, None, S.RUNNABLE, None),
        ("C2 CompilerThread0", True, 1748534272, 32378, 10, None, S.RUNNABLE, None),
        ("C2 CompilerThread1", True, 1748542464, 32379, 10, None, S.RUNNABLE, None),
        ("VM Thread", False, 1748436992, 32374, 10, None, None, None),
        ("Service Thread", True, 1748549632, 32380, 10, None, S.RUNNABLE, None),
        ("Finalizer", True, 1748454400, 32376, 10, None, S.IN_OBJECT_WAIT, lock(RQ_LOCK, 2683571272)),
        (
            "Reference Handler",
            True,
            1748448256,
            32375,
            10,
            None,
            S.IN_OBJECT_WAIT,
            lock(REF_LOCK, 2683601000),
        ),
        ("main", False, 3075500032, 32365, 10, None, S.IN_OBJECT_WAIT, lock(UNIX_PROCESS, 2672107728)),
    ],
    "openjdk-1.8.log": [
        ("Attach Listener", True, 1733312512, 7829, 9, 11, S.RUNNABLE, None),
        ("GC task thread#0 (ParallelGC)", False, 3076587520, 7798, None, None, None, None),
        ("GC task thread#1 (ParallelGC)", False, 3076592640, 7799, None, None, None, None),
        ("GC task thread#2 (ParallelGC)", False, 3076597760, 7800, None, None, None, None),
        ("GC task thread#3 (ParallelGC)", False, 3076602880, 7801, None, None, None, None),
        ("VM Periodic Task Thread", False, 1735156736, 7811, None, None, None, None),
        ("Signal Dispatcher", True, 1735017472, 7806, 9, 4, S.RUNNABLE, None),
        ("process reaper", True, 1724858368, 7813, 10, 10, S.RUNNABLE, None),
        ("C2 CompilerThread0", True, 1735023616, 7807, 9, 5, S.RUNNABLE, None),
        ("C2 CompilerThread1", True, 1735031808, 7808, 9, 6, S.RUNNABLE, None),
        ("C1 CompilerThread2", True, 1735036928, 7809, 9, 7, S.RUNNABLE, None),
        ("VM Thread", False, 1734872064, 7802, None, None, None, None),
        ("Service Thread", True, 1735050240, 7810, 9, 8, S.RUNNABLE, None),
        ("Finalizer", True, 1734894592, 7804, 8, 3, S.IN_OBJECT_WAIT, lock(RQ_LOCK, 2493779712)),
        ("Reference Handler", True, 1734884352, 7803, 10, 2, S.IN_OBJECT_WAIT, lock(REF_LOCK, 2493780128)),
        ("main", False, 3076548608, 7797, 5, 1, S.IN_OBJECT_WAIT, lock(UNIX_PROCESS, 2485805968)),
    ],
}
# EXPECTED.md's counts for these files.
EXACT_SET_COUNTS = {
    "oraclejdk-1.7.log": 15,
    "oraclejdk-1.8.log": 16,
    "openjdk-1.6.log": 15,
    "openjdk-1.7.log": 19,
    "openjdk-1.8.log": 16,
}


@pytest.mark.parametrize("file_name", sorted(EXACT_SETS))
def test_exact_thread_set(file_name: str) -> None:
    """GIVEN the peer's exact thread set for a JDK 6/7/8 dump (EXPECTED: 15/16/15/19/16 threads)
    THEN the parsed threads are exactly those names, each once."""
    dump = only_dump(FACTORY + file_name)
    expected_names = [row[0] for row in EXACT_SETS[file_name]]
    assert len(expected_names) == EXACT_SET_COUNTS[file_name]
    assert len(dump.threads) == EXACT_SET_COUNTS[file_name]
    assert Counter(t.name for t in dump.threads) == Counter(expected_names)


@pytest.mark.parametrize(
    "file_name, row",
    [(f, row) for f in sorted(EXACT_SETS) for row in EXACT_SETS[f]],
    ids=[f"{f}::{row[0]}" for f in sorted(EXACT_SETS) for row in EXACT_SETS[f]],
)
def test_exact_thread_set_member(file_name: str, row: ExactRow) -> None:
    """GIVEN one thread of a peer's exact thread set
    THEN daemon, tid, nid, prio, #id, status and waitingOnLock are the peer's; it waits to lock
    nothing and holds nothing (a waiter's own `- locked` of the monitor it waits on is released)."""
    name, daemon, tid, nid, priority, java_id, status, waiting_on = row
    thread = named(only_dump(FACTORY + file_name), name)
    assert (thread.daemon, thread.tid, thread.nid, thread.priority, thread.java_id) == (
        daemon,
        tid,
        nid,
        priority,
        java_id,
    )
    if status is not None:
        assert thread.status is status
    assert waiting_on_lock(thread) == waiting_on
    assert waiting_to_lock(thread) is None
    assert acquired(thread) == set()


# dumpling ThreadDumpFactoryTest.oracleJdk7: main's stack, frame by frame.
ORACLE_1_7_MAIN_STACK = [
    ("java.lang.Object.wait", None, None, True),
    ("java.lang.Object.wait", "Object.java", 503, False),
    ("java.lang.UNIXProcess.waitFor", "UNIXProcess.java", 210, False),
    ("sun.reflect.NativeMethodAccessorImpl.invoke0", None, None, True),
    ("sun.reflect.NativeMethodAccessorImpl.invoke", "NativeMethodAccessorImpl.java", 57, False),
    ("sun.reflect.DelegatingMethodAccessorImpl.invoke", "DelegatingMethodAccessorImpl.java", 43, False),
    ("java.lang.reflect.Method.invoke", "Method.java", 606, False),
    (
        "org.codehaus.groovy.runtime.callsite.PojoMetaMethodSite$PojoCachedMethodSiteNoUnwrapNoCoerce.invoke",
        "PojoMetaMethodSite.java",
        230,
        False,
    ),
    ("org.codehaus.groovy.runtime.callsite.PojoMetaMethodSite.call", "PojoMetaMethodSite.java", 53, False),
    ("org.codehaus.groovy.runtime.callsite.CallSiteArray.defaultCall", "CallSiteArray.java", 45, False),
    ("org.codehaus.groovy.runtime.callsite.AbstractCallSite.call", "AbstractCallSite.java", 108, False),
    ("org.codehaus.groovy.runtime.callsite.AbstractCallSite.call", "AbstractCallSite.java", 112, False),
    ("hudson5336955934972498423.run", "hudson5336955934972498423.groovy", 9, False),
    ("groovy.lang.GroovyShell.runScriptOrMainOrTestOrRunnable", "GroovyShell.java", 257, False),
    ("groovy.lang.GroovyShell.run", "GroovyShell.java", 220, False),
    ("groovy.lang.GroovyShell.run", "GroovyShell.java", 150, False),
    ("groovy.ui.GroovyMain.processOnce", "GroovyMain.java", 588, False),
    ("groovy.ui.GroovyMain.run", "GroovyMain.java", 375, False),
    ("groovy.ui.GroovyMain.process", "GroovyMain.java", 361, False),
    ("groovy.ui.GroovyMain.processArgs", "GroovyMain.java", 120, False),
    ("groovy.ui.GroovyMain.main", "GroovyMain.java", 100, False),
    ("sun.reflect.NativeMethodAccessorImpl.invoke0", None, None, True),
    ("sun.reflect.NativeMethodAccessorImpl.invoke", "NativeMethodAccessorImpl.java", 57, False),
    ("sun.reflect.DelegatingMethodAccessorImpl.invoke", "DelegatingMethodAccessorImpl.java", 43, False),
    ("java.lang.reflect.Method.invoke", "Method.java", 606, False),
    ("org.codehaus.groovy.tools.GroovyStarter.rootLoader", "GroovyStarter.java", 106, False),
    ("org.codehaus.groovy.tools.GroovyStarter.main", "GroovyStarter.java", 128, False),
]


def test_oraclejdk_1_7_main_stack() -> None:
    """EXPECTED: oraclejdk-1.7.log, main's 27-frame stack verified (frame by frame)."""
    main = named(only_dump(FACTORY + "oraclejdk-1.7.log"), "main")
    assert len(ORACLE_1_7_MAIN_STACK) == 27
    assert frame_shape(main) == ORACLE_1_7_MAIN_STACK


@pytest.mark.parametrize(
    "file_name", ["openjdk-1.6.log", "openjdk-1.7.log", "openjdk-1.8.log", "oraclejdk-1.8.log"]
)
def test_main_waits_in_object_wait_on_unix_process(file_name: str) -> None:
    """EXPECTED: `main` IN_OBJECT_WAIT on `java.lang.UNIXProcess` (top frame the native Object.wait,
    then UNIXProcess.waitFor two frames below)."""
    main = named(only_dump(FACTORY + file_name), "main")
    assert main.status is S.IN_OBJECT_WAIT
    assert must(waiting_on_lock(main)).lock_class == UNIX_PROCESS
    assert frame_shape(main)[0] == ("java.lang.Object.wait", None, None, True)
    assert main.frames[2].function == "java.lang.UNIXProcess.waitFor"


ORACLE_1_9_NAMES = [
    "Attach Listener", "Service Thread", "Common-Cleaner", "Sweeper thread", "C1 CompilerThread3",
    "C2 CompilerThread2", "C2 CompilerThread1", "C2 CompilerThread0", "Signal Dispatcher",
    "Reference Pending List Locker", "Finalizer", "Reference Handler", "main", "VM Thread",
    *(f"GC Thread#{i}" for i in range(8)),
    "G1 Main Marker", "G1 Marker#0", "G1 Marker#1",
    *(f"G1 Refine#{i}" for i in range(8)),
    "G1 Young RemSet Sampling", "VM Periodic Task Thread",
]  # fmt: skip

# Statuses of the threads that have a java.lang.Thread.State line.
ORACLE_1_9_STATUSES = {
    "Attach Listener": S.RUNNABLE,
    "Service Thread": S.RUNNABLE,
    "Common-Cleaner": S.IN_OBJECT_WAIT_TIMED,
    "Sweeper thread": S.RUNNABLE,
    "C1 CompilerThread3": S.RUNNABLE,
    "C2 CompilerThread2": S.RUNNABLE,
    "C2 CompilerThread1": S.RUNNABLE,
    "C2 CompilerThread0": S.RUNNABLE,
    "Signal Dispatcher": S.RUNNABLE,
    "Reference Pending List Locker": S.RUNNABLE,
    "Finalizer": S.IN_OBJECT_WAIT,
    "Reference Handler": S.IN_OBJECT_WAIT,
    "main": S.SLEEPING,
}


def test_oraclejdk_1_9_exact_thread_set() -> None:
    """EXPECTED: exact set of 35 threads (G1 threads included; JDK 9 `No compile task` lines under
    compiler threads are not threads)."""
    dump = only_dump(FACTORY + "oraclejdk-1.9.log")
    assert len(ORACLE_1_9_NAMES) == 35
    assert len(dump.threads) == 35
    assert Counter(t.name for t in dump.threads) == Counter(ORACLE_1_9_NAMES)


@pytest.mark.parametrize("name, status", sorted(ORACLE_1_9_STATUSES.items()))
def test_oraclejdk_1_9_statuses(name: str, status: ThreadStatus) -> None:
    """EXPECTED: `main` SLEEPING, `Common-Cleaner` IN_OBJECT_WAIT_TIMED; the others as their state
    lines say (RUNNABLE / WAITING on object monitor)."""
    assert named(only_dump(FACTORY + "oraclejdk-1.9.log"), name).status is status


@pytest.mark.parametrize(
    "name, expected_lock",
    [
        ("Common-Cleaner", lock(RQ_LOCK, 0x6D8B47EA0)),
        ("Finalizer", lock(RQ_LOCK, 0x6D8B47E90)),
        ("Reference Handler", lock(REF_LOCK, 0x6D8B47E80)),
    ],
)
def test_oraclejdk_1_9_object_waiters_wait_on_their_lock(name: str, expected_lock: LockRef) -> None:
    """EXPECTED: `Common-Cleaner` IN_OBJECT_WAIT_TIMED on `ReferenceQueue$Lock` (same relation for
    Finalizer / Reference Handler).
    GIVEN a JDK 9 thread in Object.wait(), whose outer frame prints
    `- waiting to re-lock in wait() <X>` where older JDKs printed `- locked <X>`
    THEN it is waiting ON X (waitingOnLock), not waiting TO LOCK it, and holds nothing: the thread is
    WAITING, not BLOCKED, so it is not re-acquiring anything yet."""
    thread = named(only_dump(FACTORY + "oraclejdk-1.9.log"), name)
    assert waiting_on_lock(thread) == expected_lock
    assert waiting_to_lock(thread) is None
    assert acquired(thread) == set()


def test_oraclejdk_1_9_g1_young_remset_sampling_nid() -> None:
    """EXPECTED: `G1 Young RemSet Sampling` nid written `0x307c`."""
    thread = named(only_dump(FACTORY + "oraclejdk-1.9.log"), "G1 Young RemSet Sampling")
    assert thread.nid == 0x307C
    assert thread.tid == 0x00007FB980044000


OPENJDK_11_NAMES = [
    "main", "Reference Handler", "Finalizer", "Signal Dispatcher", "C2 CompilerThread0",
    "C1 CompilerThread0", "Sweeper thread", "Service Thread", "Common-Cleaner", "Attach Listener",
    "VM Thread", *(f"GC Thread#{i}" for i in range(8)), "G1 Main Marker", "G1 Conc#0",
    "G1 Refine#0", "G1 Young RemSet Sampling", "VM Periodic Task Thread",
]  # fmt: skip


def test_openjdk_11_exact_thread_set() -> None:
    """EXPECTED: openjdk-11.0.2.log, exact set of 24 threads (its SMR block is not threads)."""
    dump = only_dump(FACTORY + "openjdk-11.0.2.log")
    assert len(OPENJDK_11_NAMES) == 24
    assert len(dump.threads) == 24
    assert Counter(t.name for t in dump.threads) == Counter(OPENJDK_11_NAMES)


def test_openjdk_11_main_sleeping() -> None:
    """EXPECTED: `main` SLEEPING."""
    main = named(only_dump(FACTORY + "openjdk-11.0.2.log"), "main")
    assert main.status is S.SLEEPING
    assert main.waits_for() is None


def test_openjdk_11_finalizer_in_object_wait_on_reference_queue_lock() -> None:
    """EXPECTED: `Finalizer` IN_OBJECT_WAIT on `ReferenceQueue$Lock` 26562553064 (0x62f4064e8),
    although its outer frame prints `- waiting to re-lock in wait()` for that lock."""
    finalizer = named(only_dump(FACTORY + "openjdk-11.0.2.log"), "Finalizer")
    assert finalizer.status is S.IN_OBJECT_WAIT
    assert waiting_on_lock(finalizer) == lock(RQ_LOCK, 26562553064)
    assert waiting_to_lock(finalizer) is None
    assert acquired(finalizer) == set()


def test_openjdk_11_common_cleaner() -> None:
    """EXPECTED: `Common-Cleaner` IN_OBJECT_WAIT_TIMED; stack = 5 frames (`Object.wait` native,
    `ReferenceQueue.remove(…:155)`, `CleanerImpl.run(…:148)`, `Thread.run(…:834)`,
    `InnocuousThread.run(…:134)`)."""
    cleaner = named(only_dump(FACTORY + "openjdk-11.0.2.log"), "Common-Cleaner")
    assert cleaner.status is S.IN_OBJECT_WAIT_TIMED
    assert frame_shape(cleaner) == [
        ("java.lang.Object.wait", None, None, True),
        ("java.lang.ref.ReferenceQueue.remove", "ReferenceQueue.java", 155, False),
        ("jdk.internal.ref.CleanerImpl.run", "CleanerImpl.java", 148, False),
        ("java.lang.Thread.run", "Thread.java", 834, False),
        ("jdk.internal.misc.InnocuousThread.run", "InnocuousThread.java", 134, False),
    ]
    assert cleaner.frames[0].module == "java.base@11.0.2"
    assert waiting_on_lock(cleaner) == lock(RQ_LOCK, 0x62F405D48)
    assert waiting_to_lock(cleaner) is None


def test_self_lock_thread_order_preserved() -> None:
    """EXPECTED: self-lock.log, thread order preserved (12 threads).
    Also (dumpling drops the "self lock" a thread in Object.wait() prints for the monitor it
    waits on): Finalizer and Reference Handler hold no lock."""
    dump = only_dump(FACTORY + "self-lock.log")
    assert [t.name for t in dump.threads] == [
        "Service Thread",
        "C2 CompilerThread1",
        "C2 CompilerThread0",
        "Signal Dispatcher",
        "Finalizer",
        "Reference Handler",
        "VM Thread",
        "GC task thread#0 (ParallelGC)",
        "GC task thread#1 (ParallelGC)",
        "GC task thread#2 (ParallelGC)",
        "GC task thread#3 (ParallelGC)",
        "VM Periodic Task Thread",
    ]
    for name in ("Finalizer", "Reference Handler"):
        thread = named(dump, name)
        assert acquired(thread) == set()
        assert waiting_on_lock(thread) is not None


# --------------------------------------------------------------------------------------------
# dumpling/factory: lock relations and HotSpot's known slips
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("file_name", ["ownable-synchronizers.log", "crlf.log"])
def test_ownable_synchronizers(file_name: str) -> None:
    """EXPECTED: `main` acquired lock = {`ReentrantLock$NonfairSync` 32296902960}, waitingToLock
    null; `blockedThread` PARKED, waitingOnLock = that lock, waitingToLock null, no acquired locks.
    (crlf.log is the same dump with CRLF line endings.) In the lock graph, main blocks it."""
    dump = only_dump(FACTORY + file_name)
    synchronizer = lock(RL_SYNC, 32296902960)
    main = named(dump, "main")
    blocked = named(dump, "blockedThread")
    assert acquired(main) == {synchronizer}
    assert main.held_synchronizers == (synchronizer,)
    assert waiting_to_lock(main) is None
    assert blocked.status is S.PARKED
    assert waiting_on_lock(blocked) == synchronizer
    assert waiting_to_lock(blocked) is None
    assert acquired(blocked) == set()
    graph = LockGraph(dump)
    assert graph.blockers(index_of(dump, "blockedThread")) == [index_of(dump, "main")]


def test_crlf() -> None:
    """EXPECTED: crlf.log has CRLF line endings; 2 threads; runtime header `2014-08-23 15:51:50` /
    `Full thread dump OpenJDK 64-Bit Server VM (24.65-b04 mixed mode):`; no carriage return may
    leak into names, headers or frames."""
    assert b"\r\n" in (CORPUS / FACTORY / "crlf.log").read_bytes()
    dump = only_dump(FACTORY + "crlf.log")
    assert len(dump.threads) == 2
    assert [t.name for t in dump.threads] == ["blockedThread", "main"]
    assert dump.timestamp == "2014-08-23 15:51:50"
    assert dump.banner is not None
    assert dump.banner.rstrip(":") == "Full thread dump OpenJDK 64-Bit Server VM (24.65-b04 mixed mode)"
    for thread in dump.threads:
        assert "\r" not in thread.name and "\r" not in thread.header
        assert all("\r" not in f.text and "\r" not in (f.file or "") for f in thread.frames)
    assert len(named(dump, "blockedThread").frames) == 7
    assert len(named(dump, "main").frames) == 31


NO_BLANK_LINES_NAMES = [
    "Service Thread", "C2 CompilerThread1", "C2 CompilerThread0", "Signal Dispatcher", "Finalizer",
    "VM Thread", "GC task thread#0 (ParallelGC)", "GC task thread#1 (ParallelGC)", "VM Periodic Task Thread",
]  # fmt: skip


def test_no_blank_lines() -> None:
    """EXPECTED: threads with no blank line between them (as HotSpot prints around deadlocks);
    9 threads; header `2015-05-13 03:27:18` / `Full thread dump Java HotSpot(TM) 64-Bit Server VM
    (24.65-b04 mixed mode):`."""
    dump = only_dump(FACTORY + "no_blank_lines.log")
    assert len(dump.threads) == 9
    assert [t.name for t in dump.threads] == NO_BLANK_LINES_NAMES
    assert dump.timestamp == "2015-05-13 03:27:18"
    assert (
        must(dump.banner).rstrip(":")
        == "Full thread dump Java HotSpot(TM) 64-Bit Server VM (24.65-b04 mixed mode)"
    )
    finalizer = named(dump, "Finalizer")
    assert len(finalizer.frames) == 4
    assert waiting_on_lock(finalizer) == lock(RQ_LOCK, 0xF01E1EE8)
    # The next header follows the last frame directly: it must not be swallowed into the stack.
    assert frame_shape(finalizer)[-1][0] == "java.lang.ref.Finalizer$FinalizerThread.run"
    assert all(t.frames == () for t in dump.threads if t.name != "Finalizer")


@pytest.mark.parametrize("name", ["blockedReacquiringWaitingOn", "blockedReacquiringLocked"])
def test_in_object_wait_blocked_reacquiring(name: str) -> None:
    """EXPECTED: `blockedReacquiringWaitingOn` and `blockedReacquiringLocked`: BLOCKED, no acquired
    locks, waitingToLock `java.lang.Object` 33677620560 (woke from wait() and re-acquiring)."""
    thread = named(only_dump(FACTORY + "in-object-wait.log"), name)
    assert thread.status is S.BLOCKED
    assert acquired(thread) == set()
    assert waiting_to_lock(thread) == lock("java.lang.Object", 33677620560)


def test_in_wait_without_monitor_blocked() -> None:
    """EXPECTED (JDK 6 bug): `blocked_without_lock` waitingToLock `hudson.model.Queue` 17233414264;
    no acquired locks.
    GIVEN a BLOCKED thread in Object.wait() with no `waiting on` line, whose only monitor is the
    Queue it `- locked` three times further down
    THEN that Queue is the monitor it waited on and is now re-acquiring."""
    thread = named(only_dump(FACTORY + "in_wait_without_monitor.log"), "blocked_without_lock")
    assert waiting_to_lock(thread) == lock(QUEUE, 17233414264)
    assert thread.status is S.BLOCKED
    assert acquired(thread) == set()


@pytest.mark.parametrize(
    "name, monitor",
    [
        ("waiting_without_lock", lock(QUEUE, 0x403310878)),
        ("timed_waiting_without_lock", lock("hudson.remoting.UserRequest", 0x7ED875E20)),
    ],
)
def test_in_wait_without_monitor_waiting(name: str, monitor: LockRef) -> None:
    """EXPECTED (JDK 6 bug): `waiting_without_lock` / `timed_waiting_without_lock` waitingToLock
    null; none acquire locks.
    GIVEN a thread in Object.wait() whose `waiting on` line is missing and whose only `- locked`
    monitor is printed a frame or two below wait()
    THEN that monitor is the one it waits on (released by wait()), not one it holds.
    (The last assertion is dumpling's rule that yields EXPECTED's "none acquire locks":
    in Object.wait() without `waiting on` and with exactly one distinct monitor => waitingOnLock.)"""
    thread = named(only_dump(FACTORY + "in_wait_without_monitor.log"), name)
    assert waiting_to_lock(thread) is None
    assert acquired(thread) == set()
    assert waiting_on_lock(thread) == monitor


def test_blocked_without_monitor_is_runnable() -> None:
    """EXPECTED: BLOCKED state with no monitor line => status RUNNABLE (fix-up), no acquired monitors."""
    dump = only_dump(FACTORY + "blocked-without-monitor.log")
    [thread] = dump.threads
    assert thread.state is ThreadState.BLOCKED
    assert thread.status is S.RUNNABLE
    assert acquired_monitors(thread) == set()
    assert thread.waits_for() is None


def test_runnable_in_object_wait() -> None:
    """EXPECTED: RUNNABLE inside `Object.wait` => RUNNABLE; acquired lock `hudson.remoting.UserRequest`
    22040315832."""
    [thread] = only_dump(FACTORY + "runnable-in-object-wait.log").threads
    assert thread.status is S.RUNNABLE
    assert thread.held_locks() == (lock("hudson.remoting.UserRequest", 22040315832),)
    assert thread.waits_for() is None


def test_runnable_in_unsafe_park() -> None:
    """EXPECTED: RUNNABLE in `Unsafe.park` => RUNNABLE, no lock relations (no acquired lock, not
    waiting on nor waiting to lock the SynchronousQueue it printed `parking to wait for`)."""
    dump = only_dump(FACTORY + "runnable_in_unsafe_park.log")
    runnable = named(dump, "runnable")
    assert runnable.status is S.RUNNABLE
    assert acquired(runnable) == set()
    assert waiting_on_lock(runnable) is None
    assert waiting_to_lock(runnable) is None
    graph = LockGraph(dump)
    assert graph.blockers(0) == [] and graph.blocked_by(0) == []


def test_inconsistent_locks_and_state() -> None:
    """EXPECTED: (test @Ignore'd in dumpling) RUNNABLE with `parking to wait for`.
    THEN the thread is RUNNABLE, the `parking to wait for` line is kept as a lock event (the dump
    said it), but the RUNNABLE thread waits for nothing; the file's second thread,
    `blocked-without-monitor`, is BLOCKED without a monitor => RUNNABLE, as in
    blocked-without-monitor.log."""
    dump = only_dump(FACTORY + "inconsistent-locks-and-state.log")
    assert [t.name for t in dump.threads] == ["runnable-parking-to-wait", "blocked-without-monitor"]
    parking = named(dump, "runnable-parking-to-wait")
    assert parking.status is S.RUNNABLE
    condition_id = 21032260640  # 0x4e59ed420, the id of dumpling's @Ignore'd expectation
    assert [(e.kind, e.lock_id) for e in parking.lock_events] == [(K.PARKING, condition_id)]
    assert parking.waits_for() is None
    assert named(dump, "blocked-without-monitor").status is S.RUNNABLE


def test_multiple_monitors_on_single_frame() -> None:
    """EXPECTED: several `- locked` on one frame (used via the groovy CLI test).
    THEN all four lock lines hang on frame 2 (`ProcessTheadTest$1.run`), and the thread holds the
    three distinct monitors once each (the String is locked twice)."""
    [thread] = only_dump(FACTORY + "multiple-monitors-on-single-frame.log").threads
    assert thread.name == "multipleMonitors"
    assert thread.status is S.SLEEPING
    assert [(e.kind, e.lock_id, e.frame_index) for e in thread.lock_events] == [
        (K.LOCKED, 0x7D7531890, 2),
        (K.LOCKED, 0x7D7531890, 2),
        (K.LOCKED, 0x7D7531880, 2),
        (K.LOCKED, 0x7D7531870, 2),
    ]
    assert thread.frames[2].function == "com.github.olivergondza.dumpling.model.ProcessTheadTest$1.run"
    assert thread.held_locks() == (
        lock("java.lang.String", 0x7D7531890),
        lock("java.lang.Object", 0x7D7531880),
        lock("sun.misc.Lock", 0x7D7531870),
    )


def test_no_tabs_main() -> None:
    """EXPECTED: frames indented with spaces not tabs: `main` 3 frames + waitingToLock set
    (BLOCKED in Object.wait() with `- locked` under wait(): re-acquiring that Object)."""
    main = named(only_dump(FACTORY + "no-tabs.log"), "main")
    assert len(main.frames) == 3
    assert frame_shape(main)[0] == ("java.lang.Object.wait", None, None, True)
    assert waiting_to_lock(main) == lock("java.lang.Object", 0x7D757B550)
    assert main.status is S.BLOCKED


def test_no_tabs_finalizer() -> None:
    """EXPECTED: `Finalizer` 4 frames + waitingOnLock set.
    GIVEN Finalizer in Object.wait() indented with two spaces, with no `waiting on` line and its
    ReferenceQueue$Lock printed as `- locked` under ReferenceQueue.remove (frame 1)
    THEN it waits on that lock and does not hold it."""
    finalizer = named(only_dump(FACTORY + "no-tabs.log"), "Finalizer")
    assert len(finalizer.frames) == 4
    assert finalizer.status is S.IN_OBJECT_WAIT
    assert waiting_on_lock(finalizer) == lock(RQ_LOCK, 0x5D203EEA8)
    assert acquired(finalizer) == set()


def test_issue_46_blocked_with_locked_line() -> None:
    """EXPECTED: issue-46.log, `Jenkins-cron-thread-8`: blocked; waitingOnLock null; waitingToLock
    `hudson.model.Queue`; 0 acquired monitors, 1 acquired synchronizer (HotSpot updated the state
    non-atomically: the monitor it waits for is printed as `- locked`)."""
    thread = named(only_dump(FACTORY + "issue-46.log"), "Jenkins-cron-thread-8")
    assert thread.status is S.BLOCKED
    assert waiting_on_lock(thread) is None
    assert waiting_to_lock(thread) == lock(QUEUE, 0x407008AB8)
    assert acquired_monitors(thread) == set()
    assert thread.held_synchronizers == (lock(RL_SYNC, 0x40D21A940),)


def test_issue_59_hex_ids_without_prefix() -> None:
    """EXPECTED: tid/nid hex without `0x`: `process reaper` tid 140685595015168, nid 5199638528."""
    reaper = named(only_dump(FACTORY + "issue-59.log"), "process reaper")
    assert reaper.tid == 140685595015168
    assert reaper.nid == 5199638528
    assert len(reaper.frames) == 3  # indented with 8 spaces


def test_issue_71_upper_long_range() -> None:
    """EXPECTED: 64-bit values in upper long range: `SUT` tid -494445558, waitingToLock id
    -494445557, synchronizer -494445556, nid -494445555 (dumpling's signed longs)."""
    sut = named(only_dump(FACTORY + "issue-71.log"), "SUT")
    assert signed64(sut.tid) == -494445558
    assert signed64(must(waiting_to_lock(sut)).lock_id) == -494445557
    assert [signed64(s.lock_id) for s in must(sut.held_synchronizers)] == [-494445556]
    assert signed64(sut.nid) == -494445555
    assert sut.status is S.BLOCKED


@pytest.mark.parametrize("file_name, headers", [("jrockit-1.5.log", 12), ("jrockit-1.6.log", 13)])
def test_jrockit_dumps(file_name: str, headers: int) -> None:
    """EXPECTED: jrockit-1.5.log / jrockit-1.6.log, JRockit format (dumpling's tests are @Ignore'd;
    they "would expect 15 threads"). That 15 is not what the files hold: they have 12 and 13 quoted
    thread headers, so it is not asserted. What is asserted: the files are read without error and
    yield their threads, the JRockit `Main Thread` first (names checked for every file in
    test_threads_are_exactly_the_header_lines)."""
    rel = FACTORY + file_name
    assert len(header_names(rel)) == headers
    threads = [t for d in parse(rel) for t in d.threads]
    assert len(threads) == headers
    assert threads[0].name == "Main Thread"


def test_unprefixed_synchronizers() -> None:
    """EXPECTED: ownable synchronizer id without `0x` (OS X JDK 6): one synchronizer id 34151939696."""
    attach = named(only_dump(FACTORY + "unprefixed-synchronizers.log"), "Attach Listener")
    assert attach.held_synchronizers == (lock(RL_SYNC, 34151939696),)


# --------------------------------------------------------------------------------------------
# dumpling/jstack and dumpling/query: lock-graph queries
# --------------------------------------------------------------------------------------------


def test_blocking_tree() -> None:
    """EXPECTED: blocking forest = {a -> {aa -> {aaa}, ab}, b -> {ba}}; roots = {a, b}
    (`c` holds a lock nobody wants: not a root)."""
    dump = only_dump(JSTACK + "blocking-tree.log")
    graph = LockGraph(dump)
    assert sorted(graph.thread(i).name for i in graph.roots()) == ["a", "b"]
    assert forest(graph) == {"a": {"aa": {"aaa": {}}, "ab": {}}, "b": {"ba": {}}}
    assert graph.cycles() == []


def test_blocking_chain() -> None:
    """EXPECTED: `root` blocks threads matching `blocked1` and is blocked by threads matching `blocking1`."""
    dump = only_dump(JSTACK + "blocking-chain.log")
    graph = LockGraph(dump)
    root = index_of(dump, "root")
    assert [graph.thread(i).name for i in graph.blocked_by(root)] == ["blocked1"]
    assert [graph.thread(i).name for i in graph.blockers(root)] == ["blocking1"]


def test_producer_consumer_top_contenders() -> None:
    """EXPECTED: 1 blocker; `owning_thread` blocks exactly `blocked_thread` (waiting to lock
    `hudson.model.Queue` `0x4063a9378`, which `owning_thread` holds 3x in different frames)."""
    dump = only_dump(JSTACK + "producer-consumer.log")
    graph = LockGraph(dump)
    queue = lock(QUEUE, 0x4063A9378)
    owning = named(dump, "owning_thread")
    assert blockers_of_anyone(graph) == ["owning_thread"]
    assert [graph.thread(i).name for i in graph.blocked_by(index_of(dump, "owning_thread"))] == [
        "blocked_thread"
    ]
    assert waiting_to_lock(named(dump, "blocked_thread")) == queue
    assert owning.held_locks() == (queue,)
    assert sorted({e.frame_index for e in owning.lock_events if e.lock_id == queue.lock_id}) == [5, 6, 8]


def test_contention_top_contenders() -> None:
    """EXPECTED: 1 blocker; `producer` blocks 3 threads."""
    dump = only_dump(JSTACK + "contention.log")
    graph = LockGraph(dump)
    assert blockers_of_anyone(graph) == ["producer"]
    victims = graph.blocked_by(index_of(dump, "producer"))
    assert sorted(graph.thread(i).name for i in victims) == ["consumerA", "consumerB", "consumerC"]
    [contended] = list(graph.contended(2))
    assert contended.lock_id == 0x7D74DE4C0 and contended.waiter_count == 3


N133 = "Handling GET /hudson/job/some_job/ : ajp-127.0.0.1-8009-133"
N24 = "Handling POST /hudson/job/some_other_job/doRename : ajp-127.0.0.1-8009-24"
N107 = "Handling POST /hudson/view/some_view/configSubmit : ajp-127.0.0.1-8009-107"


def test_deadlock_log_jvm_section() -> None:
    """EXPECTED: deadlock.log contains a JVM "Found one Java-level deadlock" section.
    THEN it is parsed into one jvm_deadlocks entry with the three links exactly as printed, and
    "Java stack information for the threads listed above" adds no thread: 18 threads, names unique."""
    dump = only_dump(JSTACK + "deadlock.log")
    assert len(dump.threads) == 18
    assert len({t.name for t in dump.threads}) == 18
    [report] = dump.jvm_deadlocks
    assert [(link.thread_name, link.lock_id, link.held_by) for link in report] == [
        (N133, 0x49C5F7990, N24),
        (N24, 0x40DCE6960, N107),
        (N107, 0x404325338, N24),
    ]
    assert "hudson.model.FreeStyleProject" in report[0].waiting_for
    assert "monitor 0x000000005e85c920" in report[0].waiting_for


def test_deadlock_log_blocking_tree_and_waiting_to_lock_line() -> None:
    """EXPECTED: blocking tree = {`ajp-127.0.0.1-8009-24` -> {`ajp-127.0.0.1-8009-133`}}; printing
    preserves `- waiting to lock <0x404325338> (a hudson.model.Hudson)`."""
    dump = only_dump(JSTACK + "deadlock.log")
    graph = LockGraph(dump)
    assert [graph.thread(i).name for i in graph.roots()] == [N24]
    assert forest(graph) == {N24: {N133: {}}}
    assert cycle_names(dump, graph) == [frozenset({N24, N107})]
    t107 = named(dump, N107)
    event = must(t107.waits_for())
    assert (event.kind, event.lock_id, event.lock_class) == (
        K.WAITING_TO_LOCK,
        0x404325338,
        "hudson.model.Hudson",
    )
    source_line = text_of(JSTACK + "deadlock.log").splitlines()[event.line_no - 1]
    assert source_line.strip() == "- waiting to lock <0x0000000404325338> (a hudson.model.Hudson)"
    # The line is the thread's own, not the copy in "Java stack information for the threads listed above".
    assert event.line_no < 312


F103 = (
    "Handling POST /view/OuterNestedView/view/NestedView/view/ListView/job/a_job/doRename"
    " : ajp-127.0.0.1-8009-103"
)
F94 = "Handling GET /view/IrrelevantNestedView/view/IrrelevantListView/api/xml : ajp-127.0.0.1-8009-94"
F50 = "Handling POST /view/OuterNestedView/view/NestedView/view/ListView/configSubmit : ajp-127.0.0.1-8009-50"
F46 = "Handling POST /view/IrrelevantNestedView/view/IrrelevantListView/configSubmit : ajp-127.0.0.1-8009-46"


def test_deadlock_and_friends_monitor_deadlock_from_lock_graph() -> None:
    """EXPECTED: no JVM deadlock section, yet the Deadlocks query finds 1 monitor deadlock of 2
    threads (`-50` waiting to <0x4033105e0> Hudson, holding <0x40e73a1c8> ListView; `-103` waiting
    to <0x40e73a1c8>, holding <0x4033105e0> + 3 others); involved threads = 2 (bystanders excluded)."""
    dump = only_dump(JSTACK + "deadlock-and-friends.log")
    assert dump.jvm_deadlocks == ()
    graph = LockGraph(dump)
    cycles = graph.cycles()
    assert len(cycles) == 1
    assert cycle_names(dump, graph) == [frozenset({F50, F103})]
    assert len({member for cycle in cycles for member in cycle}) == 2
    hudson, list_view = lock("hudson.model.Hudson", 0x4033105E0), lock("hudson.model.ListView", 0x40E73A1C8)
    t50, t103 = named(dump, F50), named(dump, F103)
    assert waiting_to_lock(t50) == hudson
    assert acquired(t50) == {list_view}
    assert waiting_to_lock(t103) == list_view
    assert hudson in acquired(t103)
    assert len(acquired(t103)) == 4


def test_deadlock_and_friends_blocking_tree() -> None:
    """EXPECTED: blocking tree = {`-103` -> {`-46` -> {`-94`}}} (`-50`, in the cycle, is not a child)."""
    dump = only_dump(JSTACK + "deadlock-and-friends.log")
    graph = LockGraph(dump)
    assert [graph.thread(i).name for i in graph.roots()] == [F103]
    assert forest(graph) == {F103: {F46: {F94: {}}}}


@pytest.mark.parametrize(
    "file_name, synchronizer",
    [
        ("ReentrantLock-parking-blockage.log", lock(RL_SYNC, 0x71C21CDE8)),
        ("ReentrantReadWriteLock-parking-blockage-read.log", lock(RRWL_SYNC, 0x71C221578)),
        ("ReentrantReadWriteLock-parking-blockage-write.log", lock(RRWL_SYNC, 0x71C221578)),
    ],
)
def test_juc_lock_parking_blockage(file_name: str, synchronizer: LockRef) -> None:
    """EXPECTED: j.u.c. lock blockage via `parking to wait for` + `Locked ownable synchronizers`:
    `Thread-1` blocks exactly `main` (single tree root `Thread-1`, leaf `main`)."""
    dump = only_dump(JSTACK + file_name)
    graph = LockGraph(dump)
    main = named(dump, "main")
    assert main.status is S.PARKED
    assert waiting_on_lock(main) == synchronizer
    assert named(dump, "Thread-1").held_synchronizers == (synchronizer,)
    assert [graph.thread(i).name for i in graph.blocked_by(index_of(dump, "Thread-1"))] == ["main"]
    assert [graph.thread(i).name for i in graph.roots()] == ["Thread-1"]
    assert forest(graph) == {"Thread-1": {"main": {}}}
    assert graph.cycles() == []


EXECUTING = "Executing labels(hudson.slaves.NodeProvisionerTest)"
ATMOST = "AtmostOneTaskExecutor[hudson.model.Queue$1@2f485891] [#15]"


def test_synchronizer_deadlock() -> None:
    """EXPECTED: query/synchronizer_deadlock.log, no JVM deadlock section; Deadlocks query report
    "Deadlock #1": `Executing labels(hudson.slaves.NodeProvisionerTest)` (tid 139758839826432,
    nid 27543) waiting on <0xf1cf3470> ReentrantLock$NonfairSync, holding <0xf253d388>
    ReentrantReadWriteLock$NonfairSync; `AtmostOneTaskExecutor[…] [#15]` (tid 139757837897728,
    nid 28180) waiting on <0xf253d388>, holding <0xf1cf3470> (ownable-synchronizer cycle).
    The Timer threads parked on <0xf1cf3470> are bystanders, not part of the deadlock."""
    dump = only_dump(QUERY + "synchronizer_deadlock.log")
    assert dump.jvm_deadlocks == ()
    graph = LockGraph(dump)
    assert cycle_names(dump, graph) == [frozenset({EXECUTING, ATMOST})]
    rl, rrwl = lock(RL_SYNC, 0xF1CF3470), lock(RRWL_SYNC, 0xF253D388)
    executing, atmost = named(dump, EXECUTING), named(dump, ATMOST)
    assert (executing.tid, executing.nid, executing.priority, executing.daemon) == (
        139758839826432,
        27543,
        10,
        False,
    )
    assert (atmost.tid, atmost.nid, atmost.priority, atmost.daemon) == (139757837897728, 28180, 10, True)
    assert waiting_on_lock(executing) == rl and rrwl in acquired(executing)
    assert waiting_on_lock(atmost) == rrwl and rl in acquired(atmost)
    bystanders = sorted(graph.thread(i).name for i in graph.blocked_by(index_of(dump, ATMOST)))
    assert bystanders == sorted(
        [EXECUTING, "jenkins.util.Timer [#9]", "jenkins.util.Timer [#4]", "jenkins.util.Timer [#3]"]
    )


# --------------------------------------------------------------------------------------------
# jthreaddump: hand-written samples
# --------------------------------------------------------------------------------------------


def test_thread_dump_jstack_reversed_headers() -> None:
    """EXPECTED: thread-dump-jstack.txt: 5 threads (`main` #1, nid 0x2803, cpu 0.1255 s, elapsed
    10.25 s, ...), but the file is stored LINE-REVERSED in this snapshot (banner last, frames above
    their headers), so only what survives the reversal is asserted: the 5 thread headers are found
    with their header fields. Stacks, states and "source jstack" are not honest here."""
    lines = text_of(JTD + "thread-dump-jstack.txt").splitlines()
    assert lines[0] == "2024-01-15 10:30:45" and lines[-1].startswith("Full thread dump")  # still reversed
    threads = [t for d in parse(JTD + "thread-dump-jstack.txt") for t in d.threads]
    assert len(threads) == 5
    assert sorted(t.name for t in threads) == sorted(
        ["main", "Reference Handler", "Finalizer", "Worker-1", "Worker-2"]
    )
    main = next(t for t in threads if t.name == "main")
    assert main.java_id == 1
    assert main.nid == 0x2803
    assert main.priority == 5 and main.os_priority == 31
    assert main.cpu_ms == pytest.approx(125.50)  # 0.1255 s
    assert main.elapsed_s == pytest.approx(10.25)
    assert main.tid == 0x00007F8A1F008000


def test_thread_dump_jcmd() -> None:
    """EXPECTED: thread-dump-jcmd.txt: 4 threads; source "jcmd" (first line
    `Thread dump from jcmd 12345 Thread.print:`)."""
    dump = only_dump(JTD + "thread-dump-jcmd.txt")
    assert [t.name for t in dump.threads] == ["main", "GC Thread#0", "VM Thread", "Service Thread"]
    assert dump.producer == "jcmd"
    main = named(dump, "main")
    assert main.status is S.RUNNABLE
    assert frame_shape(main) == [
        ("java.io.FileInputStream.readBytes", None, None, True),
        ("java.io.FileInputStream.read", "FileInputStream.java", 276, False),
    ]


def test_thread_dump_deadlock_hand_written() -> None:
    """EXPECTED: thread-dump-deadlock.txt: 2 threads `Thread-A`/`Thread-B` BLOCKED, frames
    `DeadlockExample.methodA:20`/`run:10`; locks waiting for 0x00000007ffc11111 + locked
    0x00000007ffc22222 (and mirror). No JVM section: the deadlock is found by the lock graph."""
    dump = only_dump(JTD + "thread-dump-deadlock.txt")
    assert [t.name for t in dump.threads] == ["Thread-A", "Thread-B"]
    a, b = named(dump, "Thread-A"), named(dump, "Thread-B")
    one, two = lock("java.lang.Object", 0x7FFC11111), lock("java.lang.Object", 0x7FFC22222)
    assert a.status is S.BLOCKED and b.status is S.BLOCKED
    assert frame_shape(a) == [
        ("com.example.DeadlockExample.methodA", "DeadlockExample.java", 20, False),
        ("com.example.DeadlockExample.run", "DeadlockExample.java", 10, False),
    ]
    assert frame_shape(b) == [
        ("com.example.DeadlockExample.methodB", "DeadlockExample.java", 30, False),
        ("com.example.DeadlockExample.run", "DeadlockExample.java", 15, False),
    ]
    assert waiting_to_lock(a) == one and acquired(a) == {two}
    assert waiting_to_lock(b) == two and acquired(b) == {one}
    assert dump.jvm_deadlocks == ()
    assert cycle_names(dump, LockGraph(dump)) == [frozenset({"Thread-A", "Thread-B"})]


def test_thread_dump_minimal() -> None:
    """EXPECTED: thread-dump-minimal.txt: 1 thread; source "unknown" (`"Minimal-Thread" #1 runnable`
    header only, no banner)."""
    dump = only_dump(JTD + "thread-dump-minimal.txt")
    [thread] = dump.threads
    assert thread.name == "Minimal-Thread"
    assert thread.java_id == 1
    assert thread.state is ThreadState.RUNNABLE
    assert dump.producer is None


@pytest.mark.parametrize("file_name", ["thread-dump-multi-deadlock.txt", "multi-deadlock-test.txt"])
def test_multi_deadlock(file_name: str) -> None:
    """EXPECTED: scenario threads `DeadlockThread-A..` + `WorkerThread-1` (5), all BLOCKED except
    the worker; JDK 21, no JVM deadlock section. Their lock lines make two cycles: A<->B, C<->D."""
    dump = only_dump(JTD + file_name)
    assert [t.name for t in dump.threads] == [
        "DeadlockThread-A",
        "DeadlockThread-B",
        "DeadlockThread-C",
        "DeadlockThread-D",
        "WorkerThread-1",
    ]
    for thread in dump.threads:
        assert thread.status is (S.RUNNABLE if thread.name == "WorkerThread-1" else S.BLOCKED)
    assert dump.jvm_deadlocks == ()
    assert cycle_names(dump, LockGraph(dump)) == [
        frozenset({"DeadlockThread-A", "DeadlockThread-B"}),
        frozenset({"DeadlockThread-C", "DeadlockThread-D"}),
    ]


# --------------------------------------------------------------------------------------------
# jthreaddump: real JDK 25 jstack output
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "file_name, a_waits, b_waits",
    [
        ("deadlock.txt", ("0x0000600002f9dba0", 0x52C830070), ("0x0000600002fbfe90", 0x52C830078)),
        ("deadlock-detailed.txt", ("0x0000600002788ea0", 0x52D34F820), ("0x00006000027811e0", 0x52D34F818)),
    ],
)
def test_jdk25_jvm_deadlock_section(file_name: str, a_waits: tuple, b_waits: tuple) -> None:
    """EXPECTED: deadlock.txt / deadlock-detailed.txt, >=2 threads; JVM deadlock section parsed:
    `DeadlockThread-A` waiting for monitor `0x0000600002f9dba0` (object `0x000000052c830070`,
    `java.lang.Object`) held by `DeadlockThread-B`, and vice-versa ("Found 1 deadlock.").
    (deadlock-detailed.txt prints its own monitor/object addresses; they are read from that file.)"""
    dump = only_dump(JTD + file_name)
    assert len(dump.threads) >= 2
    [report] = dump.jvm_deadlocks
    assert [(link.thread_name, link.lock_id, link.held_by) for link in report] == [
        ("DeadlockThread-A", a_waits[1], "DeadlockThread-B"),
        ("DeadlockThread-B", b_waits[1], "DeadlockThread-A"),
    ]
    for link, (monitor, _) in zip(report, (a_waits, b_waits)):
        assert f"monitor {monitor}" in link.waiting_for
        assert "java.lang.Object" in link.waiting_for
    a, b = named(dump, "DeadlockThread-A"), named(dump, "DeadlockThread-B")
    assert waiting_to_lock(a) == lock("java.lang.Object", a_waits[1])
    assert waiting_to_lock(b) == lock("java.lang.Object", b_waits[1])
    assert acquired(a) == {lock("java.lang.Object", b_waits[1])}


def test_jdk25_deadlock_report_adds_no_threads() -> None:
    """EXPECTED note: the deadlock report ("Java stack information for the threads listed above")
    repeats DeadlockThread-A/B; they must not become threads: deadlock.txt has 33 thread headers,
    all names distinct, each thread once."""
    dump = only_dump(JTD + "deadlock.txt")
    names = [t.name for t in dump.threads]
    assert len(names) == 33
    assert len(set(names)) == 33
    assert Counter(names) == Counter(header_names(JTD + "deadlock.txt"))


def test_jdk25_header_fields() -> None:
    """EXPECTED: JDK 25 headers `"main" #3 [3843] prio=5 os_prio=31 cpu=245.40ms elapsed=0.67s
    allocated=… defined_classes=… tid=0x… nid=3843 runnable [0x…]`: decimal nid, [ostid], the
    `-e` extended fields. Checked on EXPECTED's own example (virtual-thread-deadlock.txt) and on
    deadlock.txt, including a VM thread without #id and prio."""
    main = named(only_dump(JTD + "virtual-thread-deadlock.txt"), "main")
    assert (main.java_id, main.nid, main.priority, main.os_priority) == (3, 3843, 5, 31)
    assert main.cpu_ms == pytest.approx(245.40)
    assert main.elapsed_s == pytest.approx(0.67)
    assert main.tid == 0x0000000121809200
    assert main.status is S.RUNNABLE

    dump = only_dump(JTD + "deadlock.txt")
    main = named(dump, "main")
    assert (main.java_id, main.nid, main.priority, main.os_priority, main.daemon) == (3, 5379, 5, 31, False)
    assert main.cpu_ms == pytest.approx(274.58) and main.elapsed_s == pytest.approx(0.61)
    assert main.tid == 0x000000014A83FA00
    ref = named(dump, "Reference Handler")
    assert (ref.java_id, ref.nid, ref.priority, ref.daemon) == (14, 24323, 10, True)
    gc0 = named(dump, "GC Thread#0")
    assert (gc0.java_id, gc0.nid, gc0.priority, gc0.os_priority) == (None, 11779, None, 31)
    assert gc0.cpu_ms == pytest.approx(1.19) and gc0.elapsed_s == pytest.approx(0.61)
    assert gc0.tid == 0x000000014A857C00


SMR_FILES = [f for f in ALL_FILES if "Threads class SMR info:" in text_of(f)]


@pytest.mark.parametrize("rel", SMR_FILES)
def test_smr_block_and_jni_footer_are_not_threads(rel: str) -> None:
    """EXPECTED: files start with `Threads class SMR info:` and end with `JNI global refs: N, weak
    refs: M`.
    THEN neither the SMR block (`_java_thread_list=…`, address lines, `}`) nor the footer becomes a
    thread or an unparsed line, and the footer is recorded."""
    dump = only_dump(rel)
    for thread in dump.threads:
        assert not thread.name.startswith(("0x", "_java_thread_list", "Threads class SMR", "JNI global"))
    smr_or_jni = ("Threads class SMR", "_java_thread_list", "0x", "}", "JNI global")
    assert not [u for u in dump.unparsed if u.text.strip().startswith(smr_or_jni)]
    footer = [line.strip() for line in text_of(rel).splitlines() if line.startswith("JNI global ref")]
    assert dump.jni_global_refs == footer[-1]


def test_three_way_deadlock_names_and_jvm_cycles() -> None:
    """EXPECTED: three-way-deadlock(.txt/-detailed): >=3 threads named DeadlockThread-A/B/C;
    "Found 3/5 deadlocks." (includes leftovers). The three-way cycle A->B->C->A is reported."""
    for file_name, found in (("three-way-deadlock.txt", 3), ("three-way-deadlock-detailed.txt", 5)):
        dump = only_dump(JTD + file_name)
        names = {t.name for t in dump.threads}
        assert {"DeadlockThread-A", "DeadlockThread-B", "DeadlockThread-C"} <= names
        assert len(dump.jvm_deadlocks) == found
        three_way = [c for c in dump.jvm_deadlocks if len(c) == 3]
        assert three_way, f"{file_name}: no three-thread JVM deadlock parsed"
        assert [(link.thread_name, link.held_by) for link in three_way[-1]] == [
            ("DeadlockThread-A", "DeadlockThread-B"),
            ("DeadlockThread-B", "DeadlockThread-C"),
            ("DeadlockThread-C", "DeadlockThread-A"),
        ]


FOUND_N = re.compile(r"^Found (\d+) deadlocks?\.$", re.MULTILINE)
JTD_WITH_JVM_REPORT = [f for f in JTD_FILES if FOUND_N.search(text_of(f))]


@pytest.mark.parametrize("rel", JTD_WITH_JVM_REPORT)
def test_jvm_deadlock_count_and_lock_graph_agree(rel: str) -> None:
    """EXPECTED: several dumps contain deadlock sections ("Found N deadlock(s)" — the count).
    THEN jvm_deadlocks has N entries, and the lock graph built from the threads' own lock lines
    finds the same cycles (as multisets of thread names: the scenario reuses names)."""
    dump = only_dump(rel)
    found = int(must(FOUND_N.search(text_of(rel))).group(1))
    assert len(dump.jvm_deadlocks) == found
    jvm = sorted((frozenset(link.thread_name for link in cycle) for cycle in dump.jvm_deadlocks), key=sorted)
    assert cycle_names(dump, LockGraph(dump)) == jvm
    for cycle in dump.jvm_deadlocks:
        for link in cycle:
            assert link.lock_id is not None and link.held_by


def test_reentrant_lock() -> None:
    """EXPECTED: reentrant-lock.txt, >=2 threads `Lock…`; locks present (`LockHolder`/`LockWaiter`,
    ReentrantLock, parking): LockWaiter is parked on the synchronizer LockHolder owns."""
    dump = only_dump(JTD + "reentrant-lock.txt")
    assert sorted(t.name for t in dump.threads if t.name.startswith("Lock")) == ["LockHolder", "LockWaiter"]
    synchronizer = lock(RL_SYNC, 0x52F45B930)
    holder, waiter = named(dump, "LockHolder"), named(dump, "LockWaiter")
    assert holder.held_synchronizers == (synchronizer,)
    assert waiter.status is S.PARKED
    assert waiting_on_lock(waiter) == synchronizer
    graph = LockGraph(dump)
    assert [graph.thread(i).name for i in graph.blockers(index_of(dump, "LockWaiter"))] == ["LockHolder"]


def test_read_write_lock() -> None:
    """EXPECTED: read-write-lock.txt, >=6 threads `Lock…` (ReentrantReadWriteLock):
    WriteLockHolder owns the write lock; the 3 read and 2 write waiters are parked on it."""
    dump = only_dump(JTD + "read-write-lock.txt")
    lock_threads = sorted(t.name for t in dump.threads if "Lock" in t.name)
    assert len(lock_threads) >= 6
    assert lock_threads == sorted(
        [
            "WriteLockHolder",
            "ReadLockWaiter-0",
            "ReadLockWaiter-1",
            "ReadLockWaiter-2",
            "WriteLockWaiter-0",
            "WriteLockWaiter-1",
        ]
    )
    rw = lock(RRWL_SYNC, 0x53FF0D1E8)
    assert named(dump, "WriteLockHolder").held_synchronizers == (rw,)
    graph = LockGraph(dump)
    victims = sorted(graph.thread(i).name for i in graph.blocked_by(index_of(dump, "WriteLockHolder")))
    assert victims == [n for n in lock_threads if n != "WriteLockHolder"]
    for name in victims:
        assert waiting_on_lock(named(dump, name)) == rw


@pytest.mark.parametrize("file_name", ["virtual-threads.txt", "many-virtual-threads.txt"])
def test_virtual_thread_carriers_present(file_name: str) -> None:
    """EXPECTED: virtual-threads.txt / many-virtual-threads.txt: carriers `ForkJoinPool…` >= 3.
    (The peer's ">= 3 / >= 50 threads matching VirtualWorker" cannot hold for this snapshot: no
    thread or line of these files contains "VirtualWorker"; that is pinned here, not asserted.)"""
    dump = only_dump(JTD + file_name)
    carriers = [t for t in dump.threads if t.name.startswith("ForkJoinPool-1-worker-")]
    assert len(carriers) >= 3
    assert "VirtualWorker" not in text_of(JTD + file_name)


MANY_VIRTUAL_CARRIED = {
    "ForkJoinPool-1-worker-1": (206, 62471),
    "ForkJoinPool-1-worker-2": (241, 37895),
    "ForkJoinPool-1-worker-3": (226, 46343),
    "ForkJoinPool-1-worker-4": (236, 40199),
    "ForkJoinPool-1-worker-7": (221, 62727),
    "ForkJoinPool-1-worker-8": (211, 64519),
}


def test_many_virtual_threads_carriers() -> None:
    """EXPECTED: many-virtual-threads.txt has 10 real `Carrying virtual thread #N` lines (the carrier
    header has no `nid` and no state words, only `[ostid]`).
    THEN exactly 10 carrier threads have carried_virtual_thread set, to the printed ids, and their
    OS thread id comes from `[ostid]`."""
    dump = only_dump(JTD + "many-virtual-threads.txt")
    carried_lines = re.findall(
        r"^\s+Carrying virtual thread #(\d+)$", text_of(JTD + "many-virtual-threads.txt"), re.M
    )
    assert len(carried_lines) == 10
    carriers = [t for t in dump.threads if t.carried_virtual_thread is not None]
    assert len(carriers) == 10
    assert sorted(must(t.carried_virtual_thread) for t in carriers) == sorted(int(n) for n in carried_lines)
    assert all(t.name.startswith("ForkJoinPool-1-worker-") and not t.virtual for t in carriers)
    for name, (carried, ostid) in MANY_VIRTUAL_CARRIED.items():
        carrier = named(dump, name)
        assert carrier.carried_virtual_thread == carried
        assert carrier.nid == ostid
        assert carrier.daemon and carrier.priority == 5


def test_virtual_thread_deadlock_has_no_jvm_section() -> None:
    """EXPECTED: virtual-thread-deadlock.txt: a deadlock among virtual threads is expected by the
    peer (test is lenient), but no JVM deadlock section is printed — HotSpot does not report
    deadlocks among unmounted virtual threads, and their stacks are not in the dump.
    THEN nothing is invented: no JVM deadlock parsed and no cycle in the lock graph."""
    dump = only_dump(JTD + "virtual-thread-deadlock.txt")
    assert "Found one Java-level deadlock" not in text_of(JTD + "virtual-thread-deadlock.txt")
    assert dump.jvm_deadlocks == ()
    assert LockGraph(dump).cycles() == []


@pytest.mark.parametrize("file_name", ["thread-pool.txt", "thread-pool-detailed.txt"])
def test_thread_pool_workers(file_name: str) -> None:
    """EXPECTED: thread-pool >= 10 `Worker` threads."""
    dump = only_dump(JTD + file_name)
    assert len([t for t in dump.threads if t.name.startswith("Worker-")]) >= 10


@pytest.mark.parametrize("file_name", ["complex.txt", "complex-detailed.txt"])
def test_complex_thread_count(file_name: str) -> None:
    """EXPECTED: complex >= 5 threads."""
    assert len(only_dump(JTD + file_name).threads) >= 5


SERIES = {
    "deadlock-formation": 6,
    "deadlock-progression": 6,
    "thread-pool-load": 5,
    "thread-pool-progression": 5,
    "gc-over-time": 5,
    "gc-progression": 5,
    "virtual-over-time": 4,
}


@pytest.mark.parametrize("series, count", sorted(SERIES.items()))
def test_multi_dump_series_each_file_one_dump(series: str, count: int) -> None:
    """EXPECTED: multi-dump series (`deadlock-formation-0..5` (6), …, `virtual-over-time-0..3`):
    each file is one dump of the same JVM, so `main` is there in every one."""
    for i in range(count):
        dump = only_dump(f"{JTD}{series}-{i}.txt")
        assert named(dump, "main").java_id == 3


# --------------------------------------------------------------------------------------------
# Cross-cutting: the deadlock report never produces threads; appended dumps split correctly
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("rel", FILES_WITH_THREADS)
def test_threads_are_exactly_the_header_lines(rel: str) -> None:
    """GIVEN any dump of the corpus (HotSpot, and the JRockit dumps, whose headers are quoted too)
    THEN its (non-virtual) threads are exactly its thread header lines, name for name and as many
    times as the dump repeats a name: lines of the JVM deadlock report ("name": and "Java stack
    information for the threads listed above") never become threads, and no header is lost.
    (Mounted virtual threads, which have no header line of their own, are not counted here.)"""
    threads = [t for d in parse(rel) for t in d.threads if not t.virtual]
    assert Counter(t.name for t in threads) == Counter(header_names(rel))


def test_appended_jthreaddump_files_split_into_one_dump_each(tmp_path: Path) -> None:
    """GIVEN every jthreaddump *.txt except the line-reversed thread-dump-jstack.txt, concatenated
    into one file in name order, as if kill -3 had appended them to one log
    WHEN the concatenation is parsed
    THEN there is one dump per file, each with that file's threads: the total thread count is the
    sum of the per-file counts (no thread from a deadlock report, none merged or lost)."""
    files = [f for f in JTD_FILES if not f.endswith("thread-dump-jstack.txt")]
    per_file = []
    chunks = []
    for rel in files:
        dumps = parse(rel)
        assert len(dumps) == 1, f"{rel}: expected one dump on its own"
        per_file.append(len(dumps[0].threads))
        text = (CORPUS / rel).read_text(encoding="utf-8")
        chunks.append(text if text.endswith("\n") else text + "\n")
    appended = tmp_path / "appended.log"
    appended.write_text("".join(chunks), encoding="utf-8")

    appended_dumps = list(read_dumps(str(appended)))

    got = [len(d.threads) for d in appended_dumps]
    first_difference = next(
        (
            f"{files[i]}: {per_file[i]} threads on its own, "
            + (
                f"{got[i]} in dump #{i} of the concatenation (from line {appended_dumps[i].line_no})"
                if i < len(got)
                else f"no dump #{i} in the concatenation"
            )
            for i in range(len(files))
            if i >= len(got) or got[i] != per_file[i]
        ),
        None,
    )
    assert (len(appended_dumps), sum(got)) == (len(files), sum(per_file)), first_difference
    assert got == per_file, first_difference


def test_thread_pointer_without_prefix_is_hex_when_all_digits() -> None:
    """A `tid=` is the JVM's thread pointer, hex: Apple's JDK 6 prints it without `0x` also when
    none of its digits is a letter (spotify/threaddump-analyzer asserts `105002800` for this header
    of its sample dump)."""
    header = '"Gang worker#1 (Parallel GC Threads)" prio=9 tid=105002800 nid=0x10bc88000 runnable'
    fields = header_fields(header)
    assert (fields.tid, fields.nid) == (0x105002800, 0x10BC88000)
