"""jcmd Thread.dump_to_file (text, JSON), IntelliJ exports, OpenJ9 javacores, Android ANR traces.

The jcmd files are captured from one JDK 25 JVM together with `jstack -l` of it (fixtures
scenario virtual-threads), so the three renderings of the same threads are compared here. The
other formats are public files kept verbatim in tests/dumps/public (see SOURCES.toml).
"""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from kafkadiag.dumps import read_dumps
from kafkadiag.dumps.detect import detect_format
from kafkadiag.dumps.lines import iter_lines
from kafkadiag.errors import NoDumpFoundError
from kafkadiag.lockgraph import LockGraph
from kafkadiag.model import DumpFormat, LockEventKind, Thread, ThreadDump, ThreadState, ThreadStatus

from ..conftest import CAPTURED

PUBLIC = Path(__file__).parent / "public"
JAVACORE = PUBLIC / "javacore.20220606.114458.32888.0001.txt.gz"
BUGREPORT = PUBLIC / "chkbugreport-bugreport_deadlock.txt.gz"
INTELLIJ = PUBLIC / "intellij-helloworld-kafka-livelock-README.md"
JAZZ_WORKER = (
    "Default Executor-thread-51 @@ 11:44 <unauthenticated> <JazzHttpClient@127.0.0.1> /dcc/service/"
    "com.ibm.team.repository.service.internal.IServerConfigurationRestService/configurationUpdates"
)
VIRTUAL = {
    "vt-ledger-waiter", "vt-lock-holder", "vt-lock-waiter", "vt-putter", "vt-put-lock-waiter",
    "vt-queue-taker", "vt-deadlock-A", "vt-deadlock-B",
}  # fmt: skip


def only_dump(path: Path) -> ThreadDump:
    dumps = list(read_dumps(str(path)))
    assert len(dumps) == 1, [dump.line_no for dump in dumps]
    return dumps[0]


def thread(dump: ThreadDump, name: str) -> Thread:
    found = dump.thread_named(name)
    assert found is not None, f"{name} not in {[t.name for t in dump.threads]}"
    return found


def blockers(dump: ThreadDump, name: str) -> list[str]:
    graph = LockGraph(dump)
    index = graph.index_of(name)
    assert index is not None
    return [dump.threads[i].name for i in graph.blockers(index)]


def cycles(dump: ThreadDump) -> list[set[str]]:
    return [{dump.threads[i].name for i in cycle} for cycle in LockGraph(dump).cycles()]


# -- detection ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("relative", "expected"),
    [
        ("virtual-threads/thread-dump.txt", DumpFormat.JCMD_TEXT),
        ("virtual-threads/thread-dump.json", DumpFormat.JCMD_JSON),
        ("virtual-threads/jstack-l.txt", DumpFormat.HOTSPOT),
    ],
)
def test_captured_renderings_are_detected(captured: Path, relative: str, expected: DumpFormat) -> None:
    assert detect_format(list(iter_lines(str(captured / relative)))) is expected


@pytest.mark.parametrize(
    ("path", "expected"),
    [(JAVACORE, DumpFormat.JAVACORE), (BUGREPORT, DumpFormat.ANDROID_ANR), (INTELLIJ, DumpFormat.INTELLIJ)],
    ids=lambda value: value.name if isinstance(value, Path) else value.value,
)
def test_public_files_are_detected(path: Path, expected: DumpFormat) -> None:
    lines = list(iter_lines(str(path)))
    assert detect_format(lines[:20_000]) is expected
    assert all(dump.format is expected for dump in read_dumps(str(path)))


# -- jcmd Thread.dump_to_file, text and JSON, against jstack -l of the same JVM -----------------


@pytest.fixture(scope="module")
def renderings(captured: Path) -> dict[str, ThreadDump]:
    directory = captured / "virtual-threads"
    return {
        "text": only_dump(directory / "thread-dump.txt"),
        "json": only_dump(directory / "thread-dump.json"),
        "jstack": only_dump(directory / "jstack-l.txt"),
    }


@pytest.mark.parametrize("form", ["text", "json"])
def test_dump_to_file_lists_platform_and_virtual_threads_with_states(
    renderings: dict[str, ThreadDump], form: str
) -> None:
    dump = renderings[form]
    assert len(dump.threads) == 25
    assert dump.pid is not None and dump.banner == "Java 25.0.3+9-LTS"
    assert {t.name for t in dump.threads if t.virtual} == VIRTUAL
    assert thread(dump, "ledger-waiter").status is ThreadStatus.BLOCKED
    assert thread(dump, "vt-ledger-waiter").status is ThreadStatus.BLOCKED
    assert thread(dump, "vt-lock-holder").status is ThreadStatus.SLEEPING
    assert thread(dump, "queue-taker").status is ThreadStatus.PARKED
    putter = thread(dump, "vt-putter")
    assert putter.state is ThreadState.WAITING
    functions = [frame.function for frame in putter.frames]
    put = functions.index("java.util.concurrent.LinkedBlockingQueue.put")
    assert functions[put + 1] == "com.example.vthreads.VirtualThreadsApp$Channel.enqueue"
    assert functions[0] == "java.lang.VirtualThread.park"


def test_jdk21_dump_to_file_text_keeps_frames_printed_without_at(tmp_path: Path) -> None:
    # GIVEN the text layout of JDK 21 to 23 (jdk.internal.vm.ThreadDumper prints six spaces and
    # StackTraceElement.toString(), no "at ", no state, no lock lines)
    path = tmp_path / "threads.txt"
    path.write_text(
        "81916\n2025-01-14T19:27:30.373190Z\n21+35-2513\n\n"
        '#1 "main"\n'
        "      java.base/java.lang.Thread.sleep0(Native Method)\n"
        "      java.base/java.lang.Thread.sleep(Thread.java:509)\n"
        "      Main.main(Main.java:5)\n\n"
        '#23 "" virtual\n'
        "      java.base/java.lang.VirtualThread.run(VirtualThread.java:311)\n\n"
    )
    # WHEN it is read
    dump = only_dump(path)
    # THEN every frame is a frame, with its module, file and line, and nothing is left unparsed
    assert dump.format is DumpFormat.JCMD_TEXT and dump.unparsed_count == 0
    main = thread(dump, "main")
    assert [frame.function for frame in main.frames] == [
        "java.lang.Thread.sleep0",
        "java.lang.Thread.sleep",
        "Main.main",
    ]
    assert main.frames[0].native and main.frames[0].module == "java.base"
    assert (main.frames[2].file, main.frames[2].line) == ("Main.java", 5)
    assert [t.virtual for t in dump.threads] == [False, True]
    assert any("JDK 21-23" in note for note in dump.notes)
    # and with no state printed, the top frame tells the wait: main sleeps
    assert main.status is ThreadStatus.SLEEPING


@pytest.mark.parametrize("form", ["text", "json"])
def test_dump_to_file_links_monitor_waiters_to_their_holder_and_finds_the_monitor_deadlock(
    renderings: dict[str, ThreadDump], form: str
) -> None:
    dump = renderings[form]
    assert blockers(dump, "ledger-waiter") == ["ledger-holder"]
    assert blockers(dump, "vt-ledger-waiter") == ["ledger-holder"]
    assert cycles(dump) == [{"deadlock-monitor-A", "deadlock-monitor-B"}]


@pytest.mark.parametrize("form", ["text", "json"])
def test_dump_to_file_cannot_name_the_holder_of_a_reentrant_lock_and_says_so(
    renderings: dict[str, ThreadDump], form: str
) -> None:
    dump = renderings[form]
    platform, virtual = thread(dump, "lock-waiter"), thread(dump, "vt-lock-waiter")
    assert platform.waits_for() is not None and platform.waits_for().kind is LockEventKind.PARKING
    assert platform.waits_for().lock_id == virtual.waits_for().lock_id  # one ReentrantLock
    assert blockers(dump, "lock-waiter") == []  # its holder, vt-lock-holder, is not named
    # The virtual threads' ReentrantLock deadlock is invisible for the same reason.
    assert {"vt-deadlock-A", "vt-deadlock-B"} not in cycles(dump)
    assert not dump.has_lock_data
    assert any("does not say who owns a java.util.concurrent lock" in note for note in dump.notes)


def test_text_and_json_agree_thread_by_thread(renderings: dict[str, ThreadDump]) -> None:
    text, json_dump = renderings["text"], renderings["json"]
    assert [(t.name, t.state, t.status, t.virtual) for t in text.threads] == [
        (t.name, t.state, t.status, t.virtual) for t in json_dump.threads
    ]
    for ours, theirs in zip(text.threads, json_dump.threads):
        if ours.name == "Attach Listener":
            continue  # the thread writing the dump: its stack differs from one dump to the next
        assert [frame.function for frame in ours.frames] == [frame.function for frame in theirs.frames]
        assert {e.lock_id for e in ours.lock_events} == {e.lock_id for e in theirs.lock_events}, ours.name


def test_jstack_of_the_same_jvm_shows_platform_threads_only(renderings: dict[str, ThreadDump]) -> None:
    jstack, text = renderings["jstack"], renderings["text"]
    jstack_names = {t.name for t in jstack.threads}
    assert not VIRTUAL & jstack_names
    platform = {t.name for t in text.threads if not t.virtual}
    assert {"ledger-holder", "ledger-waiter", "lock-waiter", "queue-taker", "deadlock-monitor-A"} <= platform
    assert platform - {"Attach Listener"} <= jstack_names
    # jstack -l has ownership lists, but the ReentrantLock's holder is an unmounted virtual thread.
    assert jstack.has_lock_data and blockers(jstack, "lock-waiter") == []
    assert blockers(jstack, "ledger-waiter") == ["ledger-holder"]
    assert [set(link.thread_name for link in cycle) for cycle in jstack.jvm_deadlocks] == [
        {"deadlock-monitor-A", "deadlock-monitor-B"}
    ]


def test_json_threads_point_at_their_tid_member(captured: Path, renderings: dict[str, ThreadDump]) -> None:
    lines = (captured / "virtual-threads/thread-dump.json").read_text().split("\n")
    for parsed in renderings["json"].threads:
        assert lines[parsed.line_no - 1].strip() == f'"tid": "{parsed.java_id}",'


# -- OpenJ9 / IBM J9 javacore ------------------------------------------------------------------


def test_javacore_threads_states_and_frames() -> None:
    dump = only_dump(JAVACORE)
    # Every 3XMTHREADINFO record, as javacore-analyser counts them: 194 Java threads and 7
    # anonymous native threads (attached to no VM thread: no state, no Java frames).
    assert (len(dump.threads), dump.pid) == (201, 32888)
    assert dump.banner is not None and dump.banner.startswith("JRE 1.8.0 Windows 10 amd64-64")
    assert Counter(t.state for t in dump.threads) == {
        ThreadState.WAITING: 160,
        ThreadState.RUNNABLE: 33,
        ThreadState.BLOCKED: 1,
        ThreadState.UNKNOWN: 7,
    }
    anonymous = [t for t in dump.threads if t.name == "Anonymous native thread"]
    assert len(anonymous) == 7 and not any(t.frames for t in anonymous)
    status = thread(dump, "JTS Status check")
    assert status.status is ThreadStatus.BLOCKED
    assert (
        status.frames[0].function
        == "org.eclipse.soda.sat.core.internal.record.ImportServiceRecord.handleModifiedService"
    )
    assert "/" not in status.frames[0].function


def test_javacore_every_record_is_a_thread_and_a_quote_inside_a_name_is_kept() -> None:
    """javacore-analyser's test javacore: one snapshot per 3XMTHREADINFO record (36), the current
    thread's name holding a quotation mark."""
    dump = only_dump(PUBLIC / "javacore.20230830.134339.30220.0001.txt.gz")
    assert len(dump.threads) == 36
    assert dump.threads[0].name == 'thread name with " quotation'
    assert sum(t.name == "Anonymous native thread" for t in dump.threads) == 7
    assert sum(t.state is not ThreadState.UNKNOWN for t in dump.threads) == 29  # 2XMPOOLLIVE
    assert dump.unparsed_count == 0


def test_javacore_owned_by_credits_the_owner_and_closes_the_mixed_deadlock() -> None:
    dump = only_dump(JAVACORE)
    waiting = thread(dump, "JTS Status check").waits_for()
    assert waiting is not None and waiting.kind is LockEventKind.WAITING_TO_LOCK
    assert (
        waiting.lock_class
        == "org.eclipse.soda.sat.core.internal.record.container.ImportServiceRecordContainer"
    )
    parked = thread(dump, JAZZ_WORKER).waits_for()
    assert parked is not None and parked.kind is LockEventKind.PARKING
    assert parked.lock_class == "java.util.concurrent.locks.ReentrantReadWriteLock$NonfairSync"
    assert blockers(dump, "JTS Status check") == [JAZZ_WORKER]
    assert blockers(dump, JAZZ_WORKER) == ["JTS Status check"]
    assert cycles(dump) == [{JAZZ_WORKER, "JTS Status check"}]
    # The VM's own report says the same.
    (report,) = dump.jvm_deadlocks
    assert [(link.thread_name, link.held_by) for link in report] == [
        (JAZZ_WORKER, "JTS Status check"),
        ("JTS Status check", JAZZ_WORKER),
    ]
    assert report[0].lock_id == parked.lock_id and report[1].lock_id == waiting.lock_id


def test_javacore_threads_pasted_without_sections_and_wrapped_read_the_same(tmp_path: Path) -> None:
    # GIVEN the THREADS lines of a javacore pasted into an issue: no section headings, and every
    # thread's header line hard-wrapped at 100 columns (kafka-rest #97 was pasted that way)
    text = gzip.decompress(JAVACORE.read_bytes()).decode("utf-8", errors="replace")
    lines = text.replace("\r\n", "\n").split("\n")
    start = next(i for i, line in enumerate(lines) if line.startswith("0SECTION") and "THREADS" in line)
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith("0SECTION"))
    pasted: list[str] = []
    for line in lines[start + 1 : end]:
        if line.startswith("3XMTHREADINFO ") and len(line) > 100 and "J9VMThread:" in line:
            pasted += [line[:100], line[100:]]
        else:
            pasted.append(line)
    excerpt = tmp_path / "javacore-threads-excerpt.txt"
    excerpt.write_text("\n".join(pasted))
    # WHEN it is read THEN every thread comes back with its state and frames, with caveats
    original = only_dump(JAVACORE)
    dump = only_dump(excerpt)
    assert [(t.name, t.state, t.frames) for t in dump.threads] == [
        (t.name, t.state, t.frames) for t in original.threads
    ]
    assert any("without its section headings" in note for note in dump.notes)
    assert any("joined back" in note for note in dump.notes)


# -- Android ANR traces --------------------------------------------------------------------------


def test_bugreport_yields_one_dump_per_process() -> None:
    dumps = list(read_dumps(str(BUGREPORT)))
    assert len(dumps) == 28
    assert {dump.timestamp for dump in dumps} == {"1980-01-06 01:03:37", "1980-01-06 08:00:11"}
    app = next(dump for dump in dumps if dump.pid == 628)
    assert app.banner == "Cmd line: com.sonymobile.chkbugreport.testapp"
    assert len(app.threads) == 9
    main = thread(app, "main")
    assert (main.state, main.status, main.tid) == (ThreadState.BLOCKED, ThreadStatus.BLOCKED, 1)
    assert main.frames[0].function == "com.sonymobile.chkbugreport.testapp.Deadlock.onCreate"
    assert main.frames[0].line == 33  # Dalvik prints "~33"
    assert thread(app, "Compiler").state is ThreadState.WAITING  # VMWAIT


def test_anr_held_by_names_the_holder_and_closes_the_deadlock() -> None:
    app = next(dump for dump in read_dumps(str(BUGREPORT)) if dump.pid == 628)
    assert blockers(app, "main") == ["Thread-10"]
    assert blockers(app, "Thread-10") == ["main"]
    assert cycles(app) == [{"main", "Thread-10"}]
    held = {ref.lock_id for ref in thread(app, "Thread-10").held_locks()}
    assert held == {0x4064B388}


# -- IntelliJ IDEA debugger export ---------------------------------------------------------------


def test_intellij_export_threads_names_states_and_locks() -> None:
    dump = only_dump(INTELLIJ)
    assert [t.name for t in dump.threads] == [
        "kafka-consumer-1",
        "kafka-coordinator-heartbeat-thread | addressRepository",
    ]
    consumer, heartbeat = dump.threads
    assert consumer.status is ThreadStatus.RUNNABLE
    assert consumer.frames[-1].function == "java.lang.Thread.run"
    assert 0x296E in {ref.lock_id for ref in consumer.held_locks()}
    assert heartbeat.state is ThreadState.BLOCKED
    waiting = heartbeat.waits_for()
    assert waiting is not None and (waiting.kind, waiting.lock_id) == (LockEventKind.WAITING_TO_LOCK, 0x296D)
    assert waiting.lock_class == "org.apache.kafka.clients.consumer.internals.ConsumerCoordinator"
    # kafka-consumer-2, the holder, is not part of the excerpt: nobody is blamed.
    assert blockers(dump, heartbeat.name) == []
    # The README's prose between and after the threads is counted, not guessed at (five lines);
    # the fences around each block are markup, not lines of the dump.
    assert dump.unparsed_count == 5


# -- hostile input -------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "dump_format",
    [
        DumpFormat.JCMD_TEXT,
        DumpFormat.JCMD_JSON,
        DumpFormat.INTELLIJ,
        DumpFormat.JAVACORE,
        DumpFormat.ANDROID_ANR,
        DumpFormat.ACTUATOR_JSON,
        DumpFormat.STACK_TRACES,
    ],
    ids=lambda fmt: fmt.value,
)
def test_every_new_reader_turns_cut_and_shuffled_input_into_dumps_or_a_clear_error(
    tmp_path: Path, captured: Path, dump_format: DumpFormat
) -> None:
    """Each reader gets every other format's real files, cut mid-line and with lines shuffled."""
    import random

    sources = [
        captured / "virtual-threads/thread-dump.txt",
        captured / "virtual-threads/thread-dump.json",
        captured / "virtual-threads/jstack-l.txt",
        captured / "real-new-consumer-coordinator-unavailable-3.9.1/actuator-threaddump.json",
        captured / "real-new-consumer-coordinator-unavailable-3.9.1/actuator-threaddump.txt",
        captured / "real-new-consumer-coordinator-unavailable-3.9.1/stacktraces.log",
        INTELLIJ,
    ]
    texts = [source.read_text() for source in sources]
    texts.append("\n".join(list(iter_lines(str(JAVACORE)))[32900:33100]))
    texts.append("\n".join(list(iter_lines(str(BUGREPORT)))[4000:4060]))
    shuffler = random.Random(20261125)
    for number, text in enumerate(texts):
        lines = text.split("\n")
        shuffled = lines[:]
        shuffler.shuffle(shuffled)
        for variant, content in enumerate((text[: len(text) // 2], "\n".join(shuffled))):
            path = tmp_path / f"input-{number}-{variant}"
            path.write_text(content)
            try:
                dumps = list(read_dumps(str(path), dump_format))
            except NoDumpFoundError:
                continue
            for dump in dumps:
                assert dump.format is dump_format
                for parsed in dump.threads:
                    parsed.held_locks()
                    parsed.waits_for()
                LockGraph(dump).cycles()


ART_BUGREPORT = PUBLIC / "chkbugreport-bugreport-sailfish-QP1A.191005.007.A3-2020-01-08-15-30-07.txt.gz"


def test_art_traces_deep_in_a_bugreport_are_found_and_read_whole() -> None:
    dumps = list(read_dumps(str(ART_BUGREPORT)))
    assert {dump.format for dump in dumps} == {DumpFormat.ANDROID_ANR}
    # The 30 processes with Java stacks, and the native processes (HALs, daemons) debuggerd traced
    java = [dump for dump in dumps if not any("native stacks only" in note for note in dump.notes)]
    native = [dump for dump in dumps if dump not in java]
    assert (len(java), sum(len(dump.threads) for dump in java)) == (30, 635)
    assert (len(native), sum(len(dump.threads) for dump in native)) == (26, 183)
    assert all(frame.native for dump in native for thread in dump.threads for frame in thread.frames)
    assert sum(dump.unparsed_count for dump in dumps) == 0
    server = next(dump for dump in dumps if dump.banner == "Cmd line: system_server")
    assert (server.pid, server.timestamp, len(server.threads)) == (929, "2020-01-08 15:30:12", 117)
    main = thread(server, "main")
    assert main.status is ThreadStatus.RUNNABLE  # ART's "Native"
    assert main.frames[0].function == "android.os.MessageQueue.nativePollOnce" and main.frames[0].native


def test_art_object_wait_releases_the_monitor_it_also_prints_as_locked() -> None:
    server = next(dump for dump in read_dumps(str(ART_BUGREPORT)) if dump.pid == 929)
    watchdog = thread(server, "FinalizerWatchdogDaemon")
    assert watchdog.status is ThreadStatus.IN_OBJECT_WAIT
    waiting = watchdog.waits_for()
    assert waiting is not None and waiting.kind is LockEventKind.WAITING_ON
    assert waiting.lock_class == "java.lang.Daemons$FinalizerWatchdogDaemon"
    assert [event.kind for event in watchdog.lock_events] == [LockEventKind.WAITING_ON, LockEventKind.LOCKED]
    assert watchdog.held_locks() == ()
    assert LockGraph(server).cycles() == []


def test_javacore_lines_of_newer_openj9_are_known(tmp_path: Path) -> None:
    """OpenJ9 0.4x (JDK 21+) adds `3XMTHREADINFO4 Type: Platform|Virtual` under every thread and a
    CPU-category block (`1XMTHDCATINFO`, `3XMTHDCATEGORY`): the public javacore with those lines
    added reads as before, nothing unparsed."""
    original = only_dump(JAVACORE)
    text = gzip.decompress(JAVACORE.read_bytes()).decode("utf-8", errors="replace")
    newer = re.sub(r"(?m)^(3XMTHREADINFO3 .*\n)", "\\g<1>3XMTHREADINFO4           Type: Platform\n", text)
    newer += (
        "1XMTHDCATINFO  Warning: to get more accurate CPU times for the GC, the option "
        "-XX:-ReduceCPUMonitorOverhead can be used.\n"
        "2XMTHDCATEGORY |  |\n3XMTHDCATEGORY |  +--GC: 0.409764000 secs\n"
    )
    assert newer.count("3XMTHREADINFO4") > 10
    path = tmp_path / "javacore.txt"
    path.write_text(newer)
    dump = only_dump(path)
    assert dump.unparsed_count == original.unparsed_count
    assert [t.name for t in dump.threads] == [t.name for t in original.threads]


def test_intellij_export_keeps_virtual_threads_and_coroutines_apart(tmp_path: Path) -> None:
    """IntelliJ exports a virtual thread without a priority, often without a name, with the word
    `virtual` after nid=NA (`"@960" tid=0x19 nid=NA virtual runnable`), and a coroutine as
    `"scope:2@301" virtual tid=0x0 nid=NA running [Coroutine]`: each is a thread of its own, and
    the thread before it keeps its state and frames."""
    path = tmp_path / "export.txt"
    path.write_text(
        '"ForkJoinPool-1-worker-1@957" daemon prio=5 tid=0x18 nid=NA waiting\n'
        "  java.lang.Thread.State: WAITING\n"
        "\t  at jdk.internal.misc.Unsafe.park(Unsafe.java:-1)\n"
        "\t  at java.util.concurrent.ForkJoinPool.awaitWork(ForkJoinPool.java:1893)\n\n"
        '"@960" tid=0x19 nid=NA virtual runnable\n'
        "  java.lang.Thread.State: RUNNABLE\n"
        "\t  at Main.work(Main.java:12)\n"
        "\t  at java.lang.VirtualThread.run(VirtualThread.java:309)\n\n"
        '"scope:2@301" virtual tid=0x0 nid=NA running [Coroutine]\n'
        "\t  at example.Child.two(Child.kt:2)\n"
    )
    dump = only_dump(path)
    assert dump.format is DumpFormat.INTELLIJ and dump.unparsed_count == 0
    worker, unnamed, coroutine = dump.threads
    assert (worker.name, worker.state, len(worker.frames), worker.virtual) == (
        "ForkJoinPool-1-worker-1",
        ThreadState.WAITING,
        2,
        False,
    )
    assert (unnamed.name, unnamed.state, unnamed.virtual) == ("@960", ThreadState.RUNNABLE, True)
    assert (coroutine.name, coroutine.virtual, len(coroutine.frames)) == ("scope:2", True, 1)


@pytest.mark.parametrize("group", ["main", "RMI Runtime"])
def test_threadinfo_text_with_the_thread_group_reads_the_same_states(tmp_path: Path, group: str) -> None:
    """Jenkins' thread dump page prints ThreadInfo with the thread's group after its id
    (`"main" Id=1 Group=main WAITING on ...`): the captured ThreadInfo log with groups added reads
    the same threads, states and lock relations."""
    source = CAPTURED / "threadinfo-deadlock" / "threadinfo.log"
    plain = list(read_dumps(str(source)))
    path = tmp_path / "jenkins.txt"
    path.write_text(re.sub(r"( Id=\d+)( [A-Z])", f"\\1 Group={group}\\2", source.read_text()))
    grouped = list(read_dumps(str(path)))
    assert path.read_text().count(f"Group={group}") >= 4
    assert [[(t.name, t.state, t.status, t.waits_for()) for t in d.threads] for d in grouped] == [
        [(t.name, t.state, t.status, t.waits_for()) for t in d.threads] for d in plain
    ]


def test_json_of_jdk21_marks_virtual_threads_by_where_their_stack_starts(tmp_path: Path) -> None:
    """JDK 21 to 23 write no "virtual" member: the captured JDK 25 JSON without it still marks
    the same threads virtual, their stacks starting in VirtualThread.run."""
    captured = next(iter(sorted((CAPTURED / "virtual-threads").glob("*.json"))))
    document = json.loads(captured.read_text())
    for container in document["threadDump"]["threadContainers"]:
        for record in container["threads"]:
            record.pop("virtual", None)
    path = tmp_path / "jdk21.json"
    path.write_text(json.dumps(document, indent=2))
    assert '"virtual"' not in path.read_text()
    assert {t.name for t in only_dump(path).threads if t.virtual} == VIRTUAL


def test_android_native_only_traces_are_threads_with_native_frames(tmp_path: Path) -> None:
    """When the runtime could not dump Java stacks, an ANR's trace holds debuggerd's native ones
    (`"name" sysTid=N`, then `#00 pc ... library (function+offset)`): threads with native frames
    and a note, not "no thread"."""
    path = tmp_path / "anr-native.txt"
    path.write_text(
        "----- pid 9955 at 2023-07-04 14:51:23.352279396+0200 -----\n"
        "Cmd line: com.example.app\nABI: 'arm64'\n\n"
        '"com.example.app" sysTid=9955\n'
        "    #00 pc 000000000004c35c  /apex/com.android.runtime/lib64/bionic/libc.so (syscall+28)"
        " (BuildId: ba489d4985c0cf173209da67405662f9)\n"
        "    #01 pc 000000000028bba8  /apex/com.android.art/lib64/libart.so"
        " (art::ConditionVariable::WaitHoldingLocks(art::Thread*)+148)\n\n"
        '"Signal Catcher" sysTid=9960\n'
        "    #00 pc 00000000000a0b4c  /apex/com.android.runtime/lib64/bionic/libc.so (__rt_sigtimedwait+12)\n"
        "  NOTE: Function names and BuildId information is missing for some frames due\n\n"
        "----- end 9955 -----\n"
    )
    dump = only_dump(path)
    assert dump.format is DumpFormat.ANDROID_ANR and dump.unparsed_count == 0 and dump.pid == 9955
    assert [(t.name, [f.function for f in t.frames]) for t in dump.threads] == [
        ("com.example.app", ["syscall", "art::ConditionVariable::WaitHoldingLocks(art::Thread*)"]),
        ("Signal Catcher", ["__rt_sigtimedwait"]),
    ]
    assert all(frame.native for thread in dump.threads for frame in thread.frames)
    assert any("native stacks only" in note for note in dump.notes)


def test_thread_mxbean_dumps_taken_over_jmx_read_as_dumps(tmp_path: Path) -> None:
    """The layout TDA writes for a dump it takes over JMX (ThreadMXBean.dumpAllThreads): headers
    `"name" id=N in STATE`, lock lines above the frames, `Locked synchronizers: count = N` and
    `<EndOfDump>` after each dump."""
    one = (
        "{stamp}\nFull thread dump Java HotSpot(TM) Client VM 1.6.0_03-b05\n\n"
        '"RMI TCP Connection(23)-127.0.1.1" id=3149 in RUNNABLE (running in native)\n'
        "    at java.net.SocketInputStream.socketRead0(Native Method)\n"
        "    at java.lang.Thread.run(Thread.java:619)\n\n"
        "    Locked synchronizers: count = 1\n"
        "      - java.util.concurrent.locks.ReentrantLock$NonfairSync@166fba\n\n"
        '"JMX server connection timeout 3146" id=3146 in TIMED_WAITING\n'
        "    - waiting on <0x18df8a5> (a [I)\n"
        "    - locked <0x18df8a5> (a [I)\n"
        "    at java.lang.Object.wait(Native Method)\n"
        "    at java.lang.Thread.run(Thread.java:619)\n\n"
        "    Locked synchronizers: count = 0\n\n"
        "<EndOfDump>\n\n"
    )
    path = tmp_path / "jmx.log"
    path.write_text(one.format(stamp="2007-11-06 10:30:41") + one.format(stamp="2007-11-06 10:30:45"))
    dumps = list(read_dumps(str(path)))
    assert [(d.timestamp, d.truncated, d.unparsed_count) for d in dumps] == [
        ("2007-11-06 10:30:41", False, 0),
        ("2007-11-06 10:30:45", False, 0),
    ]
    reader, waiter = dumps[0].threads
    assert (reader.name, reader.state) == ("RMI TCP Connection(23)-127.0.1.1", ThreadState.RUNNABLE)
    assert [ref.lock_id for ref in reader.held_synchronizers or ()] == [0x166FBA]
    assert (waiter.state, waiter.status) == (ThreadState.TIMED_WAITING, ThreadStatus.IN_OBJECT_WAIT_TIMED)
    assert waiter.frames[0].function == "java.lang.Object.wait"


# -- Arthas' `thread` command, as its own documentation shows it ----------------------------------

ARTHAS = PUBLIC / "arthas-thread-command-doc.md"


def test_arthas_thread_output_reads_its_cpu_sampled_headers_and_its_blocking_arrow() -> None:
    # GIVEN Arthas' documentation of `thread`, its outputs in fences between prose
    threads = {thread.name: thread for dump in read_dumps(str(ARTHAS)) for thread in dump.threads}
    # THEN a header with Arthas' CPU sampling fields keeps its state ("... time=401ms RUNNABLE")
    assert threads["arthas-command-execute"].status is ThreadStatus.RUNNABLE
    assert len(threads["arthas-command-execute"].frames) == 15
    assert threads["main"].status is ThreadStatus.PARKED
    # and thread -b's "<---- but blocks 4 other threads!" does not hide the lock it points at
    blocker = threads["http-bio-8080-exec-4"]
    assert blocker.status is ThreadStatus.SLEEPING
    assert 0x725BE470 in {held.lock_id for held in blocker.held_locks()}
    assert blocker.held_synchronizers and blocker.held_synchronizers[0].lock_id == 0x31A6493E


# -- JRockit ------------------------------------------------------------------------------------


def test_jrockit_dumps_read_with_their_locks_and_the_deadlock_between_them() -> None:
    """samurai's JRockit R25 test file: three dumps of 11 threads with one deadlock each (its
    .expected), the lock chains after the threads not taken for threads or dumps."""
    dumps = list(read_dumps(str(PUBLIC / "samurai-jrockit-1.5.0_03-stacked.dmp")))
    assert [len(dump.threads) for dump in dumps] == [11, 11, 11]
    first = dumps[0]
    assert first.banner == "BEA JRockit(R) R25.2.0-28 dra-45238-20050523-2021-win-ia32"
    assert first.timestamp == "Wed Aug 17 12:05:14 2005"
    assert first.unparsed_count == 0 and not first.truncated
    blocked = thread(first, "Thread-0")
    assert blocked.state is ThreadState.BLOCKED
    assert [(e.kind, e.lock_id, e.lock_class) for e in blocked.lock_events] == [
        (LockEventKind.WAITING_TO_LOCK, 0x0095C8D0, "java.lang.Object"),
        (LockEventKind.LOCKED, 0x0095C8C8, "java.lang.Object"),
    ]
    # Frames named the JVM's way (slashes, a method descriptor) carry Java's dotted names.
    assert "net.homeip.yusuke.samurai.test.AThread.run" in [f.function for f in blocked.frames]
    for dump in dumps:
        assert cycles(dump) == [{"Thread-0", "Thread-1"}]


def test_jrockit_states_from_header_words() -> None:
    """dumpling's JRockit R27 dump (the corpus): 'alive, in native, waiting' is a thread in
    Object.wait() on the monitor its lock line names; 'native_waiting' is the VM's own wait."""
    corpus = Path(__file__).resolve().parents[2] / "tests" / "corpus" / "dumpling" / "factory"
    (dump,) = read_dumps(str(corpus / "jrockit-1.5.log"))
    main = thread(dump, "Main Thread")
    assert main.state is ThreadState.WAITING
    assert (main.lock_events[0].kind, main.lock_events[0].lock_class) == (
        LockEventKind.WAITING_ON,
        "java.lang.UNIXProcess",
    )
    assert "java.lang.Object.wait" in [f.function for f in main.frames]
    assert thread(dump, "(GC Main Thread)").state is ThreadState.RUNNABLE
    assert dump.unparsed_count == 0


def test_classic_vm_javacore_threads() -> None:
    """IBM's Classic VM (Java 1.4) javacore kept by samurai: 48 thread headers in section XM, the
    current thread's given twice, 47 threads as samurai counts them; MW is waiting for a monitor."""
    path = PUBLIC / "samurai-ibm-classic-javacore.20060511.172914.516.txt.gz"
    assert gzip.decompress(path.read_bytes()).decode().count("\n3XMTHREADINFO ") == 48
    dump = only_dump(path)
    assert dump.format is DumpFormat.JAVACORE
    assert len(dump.threads) == 47 and len({t.line_no for t in dump.threads}) == 47
    assert dump.banner == "J2RE 1.4.2 IBM Windows 32 build cn142sr1w-20041028"
    assert Counter(t.state for t in dump.threads)[ThreadState.BLOCKED] == 13
    assert dump.unparsed_count == 0
    assert all(thread.frames for thread in dump.threads if thread.state is ThreadState.BLOCKED)


def test_gocd_support_report_threads() -> None:
    """GoCD's support report (binaryfoo/jstack's test file): every thread of its thread section (the
    report's own count says 139), states as ThreadMXBean gives them, the monitors each holds at the
    frame that took them, though written on one line with the next heading."""
    path = PUBLIC / "binaryfoo-jstack-gosupport.txt.gz"
    text = gzip.decompress(path.read_bytes()).decode()
    assert "Current: 139," in text
    assert detect_format(text.split("\n")) is DumpFormat.GOCD_SUPPORT
    dump = only_dump(path)
    assert (dump.format, dump.producer, len(dump.threads)) == (DumpFormat.GOCD_SUPPORT, "GoCD", 139)
    assert dump.unparsed_count == 0
    assert Counter(t.state for t in dump.threads) == {
        ThreadState.TIMED_WAITING: 61,
        ThreadState.WAITING: 47,
        ThreadState.RUNNABLE: 18,
        ThreadState.BLOCKED: 13,
    }
    blocked = thread(dump, "qtp975379630-4495564")
    assert (blocked.state, blocked.status) == (ThreadState.BLOCKED, ThreadStatus.BLOCKED)
    (held,) = blocked.lock_events
    assert (held.kind, held.lock_id, held.lock_class) == (
        LockEventKind.LOCKED,
        0x620C62EA,
        "org.h2.jdbc.JdbcConnection",
    )
    assert blocked.frames[held.frame_index].function == "org.h2.jdbc.JdbcConnection.commit"
    assert blocked.frames[0].function == "org.h2.command.Command.executeUpdate"
    assert blocked.held_synchronizers == ()
    assert any("GoCD's support report" in note for note in dump.notes)
    # The thread section alone, pasted from its first thread on, is recognised too.
    first = text.index("\n4497487, ActiveMQ Task-4162, TIMED_WAITING") + 1
    assert detect_format(text[first:].split("\n")) is DumpFormat.GOCD_SUPPORT


def test_jrockit_as_weblogic_prints_it() -> None:
    """weblogic.Admin THREAD_DUMP (samurai's test files): threads in braces, frames without "at ",
    lock addresses without 0x. The counts samurai asserts, nothing unread, the deadlock of two
    execute threads found in every dump of it, descriptors in dots or slashes read past."""
    default_queue = "ExecuteThread: '{}' for queue: 'weblogic.kernel.Default'"
    dumps = list(read_dumps(str(PUBLIC / "samurai-weblogic.admin813JRockit.dmp.gz")))
    assert [len(dump.threads) for dump in dumps] == [46, 50, 50, 50, 50]
    assert all(dump.unparsed_count == 0 for dump in dumps)
    for dump in dumps:
        assert cycles(dump) == [{default_queue.format(12), default_queue.format(14)}]
    first = dumps[0]
    assert first.timestamp == "Thu May 04 22:25:37 JST 2006"
    blocked = thread(first, default_queue.format(10))
    assert (blocked.state, blocked.fields.tid, blocked.fields.daemon) == (ThreadState.BLOCKED, 0xA80, True)
    assert [(e.kind, e.lock_id, e.lock_class) for e in blocked.lock_events] == [
        (LockEventKind.WAITING_TO_LOCK, 0x13A92718, "java.lang.Object")
    ]
    main = thread(first, "Main Thread")
    assert main.state is ThreadState.WAITING
    assert [f.function for f in main.frames][:3] == [
        "jrockit.vm.Threads.waitForSignal",
        "jrockit.vm.Locks.wait",
        "weblogic.t3.srvr.T3Srvr.waitForDeath",
    ]
    assert thread(first, "(Signal Handler)").frames == ()

    dumps = list(read_dumps(str(PUBLIC / "samurai-weblogic.admin811JRockit.dmp.gz")))
    assert [len(dump.threads) for dump in dumps] == [42, 46, 46, 46]
    assert all(dump.unparsed_count == 0 and cycles(dump) == [] for dump in dumps)
    finalizer = thread(dumps[0], "Finalizer")
    assert (finalizer.frames[3].function, finalizer.frames[3].line) == (
        "java.lang.ref.ReferenceQueue.remove",
        127,
    )
    assert finalizer.frames[0].native and finalizer.fields.priority == 8

    (dump,) = read_dumps(str(PUBLIC / "samurai-weblogic.admin910JRockit.dmp.gz"))
    assert len(dump.threads) == 29 and dump.unparsed_count == 0
    self_tuning = "[ACTIVE] ExecuteThread: '{}' for queue: 'weblogic.kernel.Default (self-tuning)'"
    assert cycles(dump) == [{self_tuning.format(0), self_tuning.format(4)}]
    assert thread(dump, "Main Thread").fields.tid == 1


def test_jrockit_8_1_threads_entering_a_monitor_are_blocked() -> None:
    """JRockit 8.1 SP1 (samurai's 811JRockit.dmp): an ACTIVE thread whose top frames are the VM
    entering a monitor is blocked; samurai expects exactly these six blocked in its first dump."""
    dumps = list(read_dumps(str(PUBLIC / "samurai-jrockit-8.1-811JRockit.dmp.gz")))
    assert [len(dump.threads) for dump in dumps] == [46] * 5
    blocked = sorted(t.name for t in dumps[0].threads if t.state is ThreadState.BLOCKED)
    assert blocked == sorted(
        f"ExecuteThread: '{n}' for queue: 'weblogic.kernel.Default'" for n in range(9, 15)
    )
    assert all(t.status is ThreadStatus.BLOCKED for t in dumps[0].threads if t.state is ThreadState.BLOCKED)


def test_jrockit_8_1_colon_layout() -> None:
    """JRockit 8.1's older layout (samurai's test file): 11 threads in each of three dumps, states
    from the header's words, frames without their code addresses, nothing left unread."""
    dumps = list(read_dumps(str(PUBLIC / "samurai-jrockit-8.1-1.4.2_03-stacked.dmp")))
    assert [len(dump.threads) for dump in dumps] == [11, 11, 11]
    assert all(dump.unparsed_count == 0 and not dump.truncated for dump in dumps)
    finalizer = thread(dumps[0], "Finalizer")
    assert finalizer.state is ThreadState.WAITING
    assert finalizer.frames[3].function == "java.lang.ref.ReferenceQueue.remove"
    assert finalizer.frames[3].line == 111
    assert thread(dumps[0], "(Code Generation Thread 1)").state is ThreadState.RUNNABLE
    # "ACTIVE" in the header, the VM entering a monitor on top of the stack: blocked (samurai too)
    for name in ("Thread-1", "Thread-2"):
        assert thread(dumps[0], name).frames[2].function == "jrockit.vm.Locks.monitorEnter"
        assert thread(dumps[0], name).status is ThreadStatus.BLOCKED


def test_classic_vm_javacore_deadlock_report() -> None:
    """The Classic VM's deadlock report, in section LK, lists the cycle once from each thread's
    side: one cycle of the two execute threads, each waiting for the lock the other holds."""
    dump = only_dump(PUBLIC / "samurai-ibm-classic-javacore.20060510.122937.6036.txt.gz")
    assert len(dump.threads) == 44
    (report,) = dump.jvm_deadlocks
    fourteen = "ExecuteThread: '14' for queue: 'weblogic.kernel.Default'"
    twelve = "ExecuteThread: '12' for queue: 'weblogic.kernel.Default'"
    assert [(link.thread_name, link.held_by, link.lock_id) for link in report] == [
        (fourteen, twelve, 0x53A90D0),
        (twelve, fourteen, 0x53A90C0),
    ]


def test_classic_vm_monitor_pool_names_holders_and_blocked_threads() -> None:
    """The Classic VM's monitor pool (section LK): the thread holding each flat-locked monitor (by
    its ident) and the threads queued on it. The seven execute threads queued on the two monitors
    of the deadlock, none of them in Object.wait(), are blocked: what samurai asserts, and the lock
    graph finds the JVM's cycle from them."""
    dump = only_dump(PUBLIC / "samurai-ibm-classic-javacore.20060510.122937.6036.txt.gz")
    queue = "ExecuteThread: '{}' for queue: 'weblogic.kernel.Default'"
    blocked = sorted(t.name for t in dump.threads if t.state is ThreadState.BLOCKED)
    assert blocked == sorted(queue.format(n) for n in range(8, 15))
    assert all(t.status is ThreadStatus.BLOCKED for t in dump.threads if t.state is ThreadState.BLOCKED)
    fourteen = thread(dump, queue.format(14))
    assert [(e.kind, e.lock_id) for e in fourteen.lock_events] == [
        (LockEventKind.WAITING_TO_LOCK, 0x53A90D0),
        (LockEventKind.LOCKED, 0x53A90C0),
    ]
    assert cycles(dump) == [{queue.format(12), queue.format(14)}]
    # A thread in Object.wait() queued on its monitor is waiting on it, not blocked.
    finalizer = thread(dump, "Finalizer")
    assert finalizer.state is ThreadState.WAITING
    assert [e.kind for e in finalizer.lock_events] == [LockEventKind.WAITING_ON]
