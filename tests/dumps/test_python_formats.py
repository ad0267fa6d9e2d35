"""Python dumps taken without py-spy, read from real captures of the reproducers.

fixtures/captured/pyfmt-*: faulthandler (SIGUSR1, dump_traceback_later, a fatal SIGABRT, and
Python 3.13), the sys._current_frames() recipe, print_stack under each thread's repr, gdb's
`thread apply all py-bt`, gevent's print_run_info and asyncio's Task.print_stack. Line numbers
of the reproducers' frames are looked up by content in their source, as the capture does.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kafkadiag.dumps import read_dumps
from kafkadiag.dumps.detect import detect_format
from kafkadiag.dumps.pythreads import is_waiting, python_frame
from kafkadiag.dumps.pytraceback import thread_identity
from kafkadiag.errors import NoDumpFoundError
from kafkadiag.model import DumpFormat, Thread, ThreadDump, ThreadStatus

from ..conftest import CAPTURED, FIXTURES

POLL = CAPTURED / "pyfmt-poll-queue-full"
THREADED = ("pyfmt-poll-queue-full", "pyfmt-poll-waits-futures", "pyfmt-heartbeat-blocked", "pyfmt-healthy")
FORMAT_OF_FILE = {
    "faulthandler-sigusr1.txt": DumpFormat.FAULTHANDLER,
    "faulthandler-sigusr1-py313.txt": DumpFormat.FAULTHANDLER,
    "faulthandler-later.txt": DumpFormat.FAULTHANDLER,
    "faulthandler-fatal.txt": DumpFormat.FAULTHANDLER,
    "current-frames-recipe.txt": DumpFormat.PY_TRACEBACK,
    "print-stack.txt": DumpFormat.PY_TRACEBACK,
    "current-frames-threadid.txt": DumpFormat.PY_TRACEBACK,
    "format-list.txt": DumpFormat.PY_TRACEBACK,
    "gdb-py-bt.txt": DumpFormat.GDB_PY_BT,
    "pystack-remote.txt": DumpFormat.PY_TRACEBACK,
    "gdb-py-bt-full.txt": DumpFormat.GDB_PY_BT,
    "pystack-remote-native.txt": DumpFormat.PY_TRACEBACK,
    "gevent-run-info.txt": DumpFormat.GEVENT,
    "asyncio-task-stacks.txt": DumpFormat.ASYNCIO,
    "guru-meditation-report.txt": DumpFormat.GURU_MEDITATION,
    "py-spy-core.txt": DumpFormat.PYSPY,  # py-spy dump --core of the same process's core file
}
CAPTURES = sorted(path for path in CAPTURED.glob("pyfmt-*/*.txt"))


def source_line(script: str, marker: str) -> int:
    """The one line of fixtures/python/<script> that starts with `marker`."""
    lines = (FIXTURES / "python" / script).read_text().splitlines()
    found = [number for number, text in enumerate(lines, 1) if text.strip().startswith(marker)]
    assert len(found) == 1, (script, marker, found)
    return found[0]


def only_dump(path: Path) -> ThreadDump:
    dumps = list(read_dumps(str(path)))
    assert len(dumps) == 1, [dump.line_no for dump in dumps]
    return dumps[0]


def functions(thread: Thread) -> list[str]:
    return [frame.function for frame in thread.frames]


def with_frame(dump: ThreadDump, function: str, file_end: str, line: int | None = None) -> list[Thread]:
    """Threads with a frame of `function` in a file ending in `file_end` (at `line`, if given)."""
    return [
        thread
        for thread in dump.threads
        if any(
            frame.function == function
            and (frame.file or "").endswith(file_end)
            and (line is None or frame.line == line)
            for frame in thread.frames
        )
    ]


@pytest.mark.parametrize("path", CAPTURES, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_every_capture_is_detected_as_its_format(path: Path) -> None:
    lines = path.read_text(encoding="utf-8").splitlines()
    assert detect_format(lines) is FORMAT_OF_FILE[path.name]
    assert only_dump(path).format is FORMAT_OF_FILE[path.name]


@pytest.mark.parametrize(
    "name",
    [
        "faulthandler-sigusr1.txt",
        "faulthandler-later.txt",
        "faulthandler-fatal.txt",
        "faulthandler-sigusr1-py313.txt",
    ],
)
def test_faulthandler_threads_are_named_by_ident_with_frames_innermost_first(name: str) -> None:
    dump = only_dump(POLL / name)
    assert dump.producer == "faulthandler"
    assert len(dump.threads) == 5
    for thread in dump.threads:
        assert thread.name.startswith("0x") and thread.name in thread.header
    (poller,) = with_frame(
        dump, "poll_loop", "poll_queue_full.py", source_line("poll_queue_full.py", "records.put(record)")
    )
    assert functions(poller)[:3] == ["Condition.wait", "Queue.put", "poll_loop"]
    assert poller.frames[1].file.endswith("queue.py") and poller.frames[1].line is not None
    assert poller.status is ThreadStatus.IDLE
    sleeping = with_frame(
        dump, "process_record", "poll_queue_full.py", source_line("poll_queue_full.py", "time.sleep(3600)")
    )
    blocked = with_frame(
        dump, "process_record", "poll_queue_full.py", source_line("poll_queue_full.py", "with state_lock:")
    )
    assert len(sleeping) == len(blocked) == 1
    # faulthandler quotes no source: an application frame on top reads as running code.
    assert sleeping[0].status is ThreadStatus.RUNNABLE
    joins = with_frame(dump, "Thread.join", "threading.py")
    # Python 3.13's join waits in C (no _wait_for_tstate_lock frame); either way the thread waits.
    top = "Thread.join" if name.endswith("py313.txt") else "Thread._wait_for_tstate_lock"
    assert len(joins) == 1 and joins[0].frames[0].function == top
    assert joins[0].status is ThreadStatus.IDLE


def test_faulthandler_of_python_3_3_reads_as_the_same_threads(tmp_path: Path) -> None:
    """CPython 3.3 (and the faulthandler package for Python 2) end a thread's line at the ident:
    `Current thread 0x00007fb899f39700:` (Python/traceback.c's write_thread_id of that release, and
    What's New In Python 3.3); the captured dump rewritten so reads the same threads and states."""
    captured_path = POLL / "faulthandler-sigusr1.txt"
    old = re.sub(r" \(most recent call first\):$", ":", captured_path.read_text(), flags=re.MULTILINE)
    assert "(most recent call first)" not in old
    path = tmp_path / "faulthandler-3.3.txt"
    path.write_text(old)
    lines = old.splitlines()
    assert detect_format(lines) is DumpFormat.FAULTHANDLER
    dump, captured = only_dump(path), only_dump(captured_path)
    assert dump.format is DumpFormat.FAULTHANDLER and dump.unparsed_count == 0
    assert [(t.name, t.status, functions(t)) for t in dump.threads] == [
        (t.name, t.status, functions(t)) for t in captured.threads
    ]
    # all_threads=False printed `Traceback (most recent call first):`, as gdb's py-bt heads a stack:
    # faulthandler's frames (`line N in f`, no comma) tell the two apart.
    current = old[old.index("Current thread 0x") :].split("\n\n")[0].splitlines()
    one = tmp_path / "faulthandler-3.3-one-thread.txt"
    one.write_text("\n".join(["Traceback (most recent call first):", *current[1:]]) + "\n")
    (thread,) = only_dump(one).threads
    assert only_dump(one).format is DumpFormat.FAULTHANDLER
    (same,) = [t for t in captured.threads if t.header.startswith("Current thread")]
    assert functions(thread) == functions(same)


def test_faulthandler_banners_name_the_trigger() -> None:
    assert only_dump(POLL / "faulthandler-fatal.txt").banner == "Fatal Python error: Aborted"
    assert only_dump(POLL / "faulthandler-later.txt").banner.startswith("Timeout (0:00:08")
    current = [
        t for t in only_dump(POLL / "faulthandler-sigusr1.txt").threads if t.header.startswith("Current")
    ]
    assert len(current) == 1 and "run_path" in functions(current[0])


def test_python_314_faulthandler_names_threads_and_adds_the_c_stack(tmp_path: Path) -> None:
    """CPython 3.14 prints the thread's name after its ident, and after a fatal error the current
    thread's C stack: the captured 3.11 dump rewritten into that layout reads the same threads."""
    original = only_dump(POLL / "faulthandler-sigusr1.txt")
    text = (POLL / "faulthandler-sigusr1.txt").read_text()
    names = iter(f"worker-{index}" for index in range(100))
    rewritten = re.sub(
        r"^((?:Current thread|Thread) 0x[0-9a-f]+) \(most",
        lambda match: f"{match[1]} [{next(names)}] (most",
        text,
        flags=re.MULTILINE,
    )
    c_stack = (
        "\nCurrent thread's C stack trace (most recent call first):\n"
        '  Binary file "/usr/bin/python3.14", at _Py_DumpStack+0x42 [0x5b27f7d7147e]\n'
        '  Binary file "/usr/lib/libc.so.6", at +0x3def0 [0x77b73226bef0]\n'
        "  <truncated rest of calls>\n"
    )
    path = tmp_path / "py314.txt"
    path.write_text(rewritten + c_stack)
    dump = only_dump(path)
    assert dump.format is DumpFormat.FAULTHANDLER and dump.unparsed_count == 0
    assert [t.name for t in dump.threads] == [f"worker-{i}" for i in range(len(original.threads))]
    assert [functions(t) for t in dump.threads] == [functions(t) for t in original.threads]
    assert not any("prints no thread names" in note for note in dump.notes)
    assert any("prints no thread names" in note for note in original.notes)


def test_a_faulthandler_stack_of_the_current_thread_alone_is_a_dump(tmp_path: Path) -> None:
    """`dump_traceback(all_threads=False)` heads its one stack `Stack (most recent call first):`."""
    text = (POLL / "faulthandler-sigusr1.txt").read_text()
    current = text[text.index("Current thread") :].split("\n\n")[0]
    path = tmp_path / "single.txt"
    path.write_text("Stack (most recent call first):\n" + current.split("\n", 1)[1] + "\n")
    assert detect_format(path.read_text().splitlines()) is DumpFormat.FAULTHANDLER
    (thread,) = only_dump(path).threads
    assert "run_path" in functions(thread)


def test_gdb_c_stacks_alone_are_read_with_a_caveat_not_as_an_all_clear(tmp_path: Path) -> None:
    """`thread apply all bt` (C frames, gdb's layout) instead of py-bt: the threads are there, no
    Python frame is, and the dump says so."""
    path = tmp_path / "bt.txt"
    path.write_text(
        'Thread 2 (Thread 0x7f32957fa6c0 (LWP 18296) "python"):\n'
        "#0  __futex_abstimed_wait_common64 (private=<optimized out>, cancel=true)"
        " at ./nptl/futex-internal.c:57\n"
        "#6  0x00007f32a70eded8 in PyThread_acquire_lock_timed (lock=0x1, microseconds=-1000000, intr_flag=1)"
        " at Python/thread_pthread.h:486\n\n"
        'Thread 1 (Thread 0x7f32a6c6a740 (LWP 18277) "python"):\n'
        "#0  0x00007f32a6ced545 in __GI___clock_nanosleep (clock_id=1)"
        " at ../sysdeps/unix/sysv/linux/clock_nanosleep.c:48\n"
        # a library without symbols (librdkafka in a confluent-kafka wheel): gdb names no function
        "#1  0x00007fc6fbeb8aae in ?? () from /venv/lib/python3.8/site-packages/confluent_kafka.libs/"
        "librdkafka-fe5c3862.so.1\n"
    )
    dump = only_dump(path)
    assert dump.format is DumpFormat.GDB_PY_BT
    assert dump.unparsed_count == 0, dump.unparsed
    assert [t.name for t in dump.threads] == ["LWP 18296", "LWP 18277"]
    assert any("C stacks only" in note for note in dump.notes)
    with_python = only_dump(FIXTURES / "captured" / "pyfmt-poll-queue-full" / "gdb-py-bt.txt")
    assert not any("C stacks only" in note for note in with_python.notes)


def test_one_file_of_two_faulthandler_dumps_reads_as_two_dumps(tmp_path: Path) -> None:
    """A log collecting one dump per signal: the repeated thread idents start a second dump."""
    text = (POLL / "faulthandler-sigusr1.txt").read_text()
    both = tmp_path / "two.txt"
    both.write_text(text + "application log line between the dumps\n" + text)
    first, second = list(read_dumps(str(both)))
    assert [t.name for t in first.threads] == [t.name for t in second.threads]
    assert second.line_no == text.count("\n") + 2
    assert first.unparsed_count == 1 and first.unparsed[0].text.startswith("application log line")


@pytest.mark.parametrize("name", ["current-frames-recipe.txt", "print-stack.txt", "format-list.txt"])
def test_traceback_dumps_name_threads_and_read_blocking_source_lines(name: str) -> None:
    dump = only_dump(POLL / name)
    by_name = {thread.name: thread for thread in dump.threads}
    assert set(by_name) == {"MainThread", "kafka-poll-loop", "worker-0", "worker-1", "group1-heartbeat"}
    assert functions(by_name["kafka-poll-loop"])[:3] == ["Condition.wait", "Queue.put", "poll_loop"]
    assert by_name["kafka-poll-loop"].frames[-1].function == "Thread._bootstrap"
    worker0, worker1 = by_name["worker-0"], by_name["worker-1"]
    assert worker0.frames[0].line == source_line("poll_queue_full.py", "time.sleep(3600)")
    assert worker1.frames[0].line == source_line("poll_queue_full.py", "with state_lock:")
    # The quoted source line (`time.sleep(...)`, `with state_lock:`) says the call blocks.
    assert worker0.status is worker1.status is ThreadStatus.IDLE
    # The thread that ran the dumping handler is running.
    assert by_name["MainThread"].status is ThreadStatus.RUNNABLE
    for thread in dump.threads:
        assert (thread_identity(thread.header)[1] or "").isdigit()  # the ident, from the header


def _stacks(dump: ThreadDump) -> list[tuple[str, list[tuple[str, int | None]]]]:
    return [(thread.name, [(f.function, f.line) for f in thread.frames]) for thread in dump.threads]


def test_print_stack_output_as_people_paste_it(tmp_path: Path) -> None:
    """print_stack's threads pasted into an issue (kafka-python #2459, pykafka #633): frames left
    out after a thread's repr ("...." and the source line of a frame cut above), a frame line
    hard-wrapped inside its function's name, and prose before the dump: the same threads."""
    capture = POLL / "print-stack.txt"
    lines = capture.read_text().splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("<HeartbeatThread("))
    lines[header + 1 : header + 1] = ["." * 40, "    self._bootstrap_inner()"]
    framed = next(i for i, line in enumerate(lines) if line.endswith("in _wait_for_tstate_lock"))
    lines[framed : framed + 1] = [lines[framed][:-9], lines[framed][-9:]]  # "..._wait_for_" / "tstate_lock"
    pasted = tmp_path / "pasted.txt"
    pasted.write_text("This hangs for ever, see below.\n\n" + "\n".join(lines) + "\n")
    original, dump = only_dump(capture), only_dump(pasted)
    assert _stacks(dump) == _stacks(original)
    # the prose, the dots and the stray source line are kept as lines not understood
    assert dump.unparsed_count == original.unparsed_count + 3


def test_the_recipe_older_copy_names_threads_by_ident_with_the_source_on_the_frame_line() -> None:
    dump = only_dump(POLL / "current-frames-threadid.txt")
    assert len(dump.threads) == 5 and all(thread.name.isdigit() for thread in dump.threads)
    assert dump.unparsed_count == 0
    (poller,) = with_frame(dump, "Queue.put", "queue.py")
    assert functions(poller)[:3] == ["Condition.wait", "Queue.put", "poll_loop"]
    blocked = with_frame(
        dump, "process_record", "poll_queue_full.py", source_line("poll_queue_full.py", "with state_lock:")
    )
    # "File: ..., in process_record  with state_lock:": the inline source line says it blocks.
    assert blocked[0].frames[0].function == "process_record" and blocked[0].status is ThreadStatus.IDLE
    # The same threads, by ident, as the recipe that names them.
    named = only_dump(POLL / "current-frames-recipe.txt")
    assert {thread.name for thread in dump.threads} == {
        thread_identity(thread.header)[1] for thread in named.threads
    }


def test_gdb_py_bt_threads_are_named_by_lwp_with_builtin_calls_as_native_frames() -> None:
    dump = only_dump(POLL / "gdb-py-bt.txt")
    assert dump.producer == "gdb"
    assert len(dump.threads) == 5 and all(t.name.startswith("LWP ") for t in dump.threads)
    assert dump.unparsed_count == 0
    blocked = with_frame(
        dump, "process_record", "poll_queue_full.py", source_line("poll_queue_full.py", "with state_lock:")
    )
    sleeping = with_frame(
        dump, "process_record", "poll_queue_full.py", source_line("poll_queue_full.py", "time.sleep(3600)")
    )
    assert blocked[0].frames[0].native and blocked[0].frames[0].function == "__enter__"
    assert sleeping[0].frames[0].native and sleeping[0].frames[0].function == "sleep"
    assert blocked[0].status is sleeping[0].status is ThreadStatus.IDLE
    (poller,) = with_frame(dump, "Queue.put", "queue.py")
    assert functions(poller)[:3] == ["Condition.wait", "Queue.put", "poll_loop"]
    lines = (POLL / "gdb-py-bt.txt").read_text().splitlines()
    for index, frame in enumerate(poller.frames):
        assert frame.text in lines[poller.frame_line_no(index) - 1]


def test_gevent_report_reads_greenlets_by_name_without_their_spawn_site() -> None:
    script = "gevent_poll_queue_full.py"
    dump = only_dump(CAPTURED / "pyfmt-gevent-poll-queue-full/gevent-run-info.txt")
    by_name = {thread.name: thread for thread in dump.threads}
    assert {"kafka-poll-loop", "worker-0", "worker-1", "group1-heartbeat", "Hub"} <= set(by_name)
    poller = by_name["kafka-poll-loop"]
    assert [(f.function, f.line) for f in poller.frames] == [
        ("poll_loop", source_line(script, "records.put(record)"))
    ]
    assert by_name["worker-1"].frames[1].line == source_line(script, "with state_lock:")
    assert "Condition.wait" in functions(by_name["group1-heartbeat"])
    # Every greenlet but the one printing the report has switched away to wait.
    for name in ("kafka-poll-loop", "worker-0", "worker-1", "group1-heartbeat", "Hub"):
        assert by_name[name].status is ThreadStatus.IDLE, name


def test_gevent_report_pasted_from_its_middle(tmp_path: Path) -> None:
    """gevent's run report pasted from its middle (kafka-python #2077): from a greenlet's line, the
    greenlets read as in the whole report; from inside a greenlet's frames, those frames are a
    thread named by where they start. A caveat says it is an excerpt."""
    capture = CAPTURED / "pyfmt-gevent-poll-queue-full/gevent-run-info.txt"
    whole = {thread.name: thread for thread in only_dump(capture).threads}
    lines = capture.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if '+--- <Greenlet "worker-0"' in line)
    from_greenlet = tmp_path / "from-greenlet.txt"
    from_greenlet.write_text("\n".join(lines[start:]) + "\n")
    dump = only_dump(from_greenlet)
    assert dump.format is DumpFormat.GEVENT
    assert {"worker-0", "kafka-poll-loop", "worker-1"} <= {thread.name for thread in dump.threads}
    for thread in dump.threads:
        if thread.name in whole:
            assert thread.frames == whole[thread.name].frames, thread.name
    assert any("without its '* Greenlets' heading" in note for note in dump.notes)
    running = next(i for i in range(start, len(lines)) if lines[i].strip().endswith("Running:"))
    inside = tmp_path / "inside-frames.txt"
    inside.write_text("\n".join(lines[running + 1 : running + 5]) + "\n")
    (headerless,) = only_dump(inside).threads
    assert headerless.name.startswith("(no header, line 1")
    assert [f.function for f in headerless.frames] == [f.function for f in whole["worker-0"].frames][-2:]


def test_asyncio_tasks_show_their_own_coroutine_frame() -> None:
    script = "asyncio_poll_queue_full.py"
    dump = only_dump(CAPTURED / "pyfmt-asyncio-poll-queue-full/asyncio-task-stacks.txt")
    by_name = {thread.name: thread for thread in dump.threads}
    assert {"kafka-poll-loop", "worker-0", "worker-1", "group1-heartbeat"} <= set(by_name)
    poller = by_name["kafka-poll-loop"]
    assert [(f.function, f.line) for f in poller.frames] == [
        ("poll_loop", source_line(script, "await records.put(record)"))
    ]
    assert all(thread.status is ThreadStatus.IDLE for thread in dump.threads)  # all await something


@pytest.mark.parametrize("scenario", THREADED)
def test_the_same_process_gives_the_same_stacks_in_every_format(scenario: str) -> None:
    """faulthandler, gdb and the traceback recipe of one process: the same innermost Python frames."""
    stacks = {}
    names = (
        "faulthandler-sigusr1.txt",
        "gdb-py-bt.txt",
        "current-frames-recipe.txt",
        "current-frames-threadid.txt",
    )
    for name in names:
        dump = only_dump(CAPTURED / scenario / name)
        stacks[name] = sorted(
            tuple((f.function, f.line) for f in thread.frames if not f.native)[:2]
            for thread in dump.threads
            if "dump_with.py" not in {Path(f.file or "").name for f in thread.frames}  # the main thread
        )
    assert len(stacks["faulthandler-sigusr1.txt"]) >= 2  # every thread but the main one
    assert all(stacks[name] == stacks["faulthandler-sigusr1.txt"] for name in names)


def test_lines_around_a_faulthandler_dump_are_kept_as_unparsed(tmp_path: Path) -> None:
    text = (POLL / "faulthandler-fatal.txt").read_text()
    noisy = tmp_path / "stderr.log"
    noisy.write_text("starting consumer\n" + text + "Traceback (most recent call last):\n  garbage \x00\n")
    dump = only_dump(noisy)
    assert len(dump.threads) == 5
    assert dump.unparsed_count == 2


PYTHON_FORMATS = [
    DumpFormat.FAULTHANDLER,
    DumpFormat.PY_TRACEBACK,
    DumpFormat.GDB_PY_BT,
    DumpFormat.GEVENT,
    DumpFormat.ASYNCIO,
]


@pytest.mark.parametrize("input_format", PYTHON_FORMATS, ids=lambda f: f.value)
def test_binary_garbage_read_as_a_python_format_is_no_dump_not_a_crash(
    tmp_path: Path, input_format: DumpFormat
) -> None:
    path = tmp_path / "garbage.bin"
    path.write_bytes(os.urandom(1024 * 1024))
    started = time.monotonic()
    with pytest.raises(NoDumpFoundError):
        list(read_dumps(str(path), input_format))
    assert time.monotonic() - started < 20


@pytest.mark.parametrize(
    ("name", "header_rows", "frame_rows"),
    [
        ("faulthandler-sigusr1.txt", (1, 1), (2, 2)),
        ("gdb-py-bt.txt", (9, 10), (12, 13)),
        ("print-stack.txt", (1, 1), (2, 3)),
    ],
)
def test_a_200000_frame_stack_parses_in_linear_time(
    tmp_path: Path, name: str, header_rows: tuple[int, int], frame_rows: tuple[int, int]
) -> None:
    """A runaway recursion: one captured thread header, then one of its frames (with its source
    line, where the format prints one) repeated 200,000 times."""
    lines = (POLL / name).read_text().splitlines()
    header = lines[header_rows[0] - 1 : header_rows[1]]
    frame = lines[frame_rows[0] - 1 : frame_rows[1]]
    assert "File" in frame[0]
    path = tmp_path / "deep.txt"
    path.write_text("\n".join([*header, *frame * 200_000]) + "\n")
    started = time.monotonic()
    (dump,) = list(read_dumps(str(path)))
    assert time.monotonic() - started < 30
    assert len(dump.threads) == 1 and len(dump.threads[0].frames) == 200_000


@pytest.mark.parametrize("scenario", THREADED)
def test_every_format_of_one_process_gives_the_same_thread_idents(scenario: str) -> None:
    """Python's thread ident, printed in hex (faulthandler, gdb's pthread) or decimal (traceback)."""
    idents = {
        name: {thread.tid for thread in only_dump(CAPTURED / scenario / name).threads}
        for name in (
            "faulthandler-sigusr1.txt",
            "faulthandler-fatal.txt",
            "gdb-py-bt.txt",
            "current-frames-recipe.txt",
            "current-frames-threadid.txt",
            "print-stack.txt",
            "format-list.txt",
        )
    }
    assert None not in idents["faulthandler-sigusr1.txt"]
    assert all(found == idents["faulthandler-sigusr1.txt"] for found in idents.values()), idents
    # gdb also gives each thread's Linux thread id (py-spy's thread number)
    assert all(thread.nid for thread in only_dump(CAPTURED / scenario / "gdb-py-bt.txt").threads)


def test_faulthandlers_cut_at_100_frames_and_a_hand_cut_are_told_apart(tmp_path: Path) -> None:
    # GIVEN a real faulthandler dump of a thread 150 calls deep (faulthandler cuts it at 100)
    script = (
        "import faulthandler, sys\n"
        "def deep(n):\n"
        "    if n == 0:\n"
        "        faulthandler.dump_traceback(sys.stdout, all_threads=True)\n"
        "    else:\n"
        "        deep(n - 1)\n"
        "deep(150)\n"
    )
    deep = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True).stdout
    assert deep.rstrip().endswith("...")
    (dump,) = list(read_dumps(_written(tmp_path / "deep.txt", deep)))
    assert any("cut at faulthandler's 100 frames" in note for note in dump.notes)
    # AND a captured dump whose first stack a person shortened to two frames and '...'
    lines = (CAPTURED / "pyfmt-poll-queue-full" / "faulthandler-sigusr1.txt").read_text().splitlines()
    first_frame = next(i for i, line in enumerate(lines) if line.startswith("  File "))
    end = next(i for i in range(first_frame, len(lines)) if not lines[i].startswith("  File "))
    shortened = lines[: first_frame + 2] + ["  ..."] + lines[end:]
    (cut,) = list(read_dumps(_written(tmp_path / "cut.txt", "\n".join(shortened) + "\n")))
    # THEN only the deep one is faulthandler's cut; the other says frames were left out by hand
    assert not any("shortened by hand" in note for note in dump.notes)
    assert any("1 stack(s) shortened by hand" in note for note in cut.notes)
    assert not any("cut at faulthandler's" in note for note in cut.notes)
    # AND the deep dump as CPython 3.13 prints it, the cut at 100 frames without its '  ...' line:
    # still read as faulthandler's cut
    (unmarked,) = list(
        read_dumps(_written(tmp_path / "py313.txt", deep.rstrip()[: -len("...")].rstrip() + "\n"))
    )
    assert max(len(thread.frames) for thread in unmarked.threads) == 100
    assert any("1 stack(s) cut at faulthandler's 100 frames" in note for note in unmarked.notes)


def _written(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


@pytest.mark.parametrize("prompt", ["(gdb) ", ">>> "])
def test_gdb_py_bt_of_one_thread_after_thread_n_or_alone(tmp_path: Path, prompt: str) -> None:
    # GIVEN one thread of a captured `thread apply all py-bt`, as a session of `thread 5` and
    # `py-bt` prints it (gdb's or gdb-dashboard's prompt, the C frame gdb stopped in), and alone
    lines = (POLL / "gdb-py-bt.txt").read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("Thread 5 "))
    end = lines.index("", start)
    block = lines[start + 1 : end]  # "Traceback (most recent call first):" and the frames
    header = re.match(r"Thread 5 \(Thread (0x[0-9a-f]+) \(LWP (\d+)\)", lines[start])
    assert header is not None
    pthread, lwp = header.groups()
    (whole,) = list(read_dumps(str(POLL / "gdb-py-bt.txt")))
    expected = next(thread for thread in whole.threads if thread.name == f"LWP {lwp}")
    session = [
        f"{prompt}thread 5",
        f"[Switching to thread 5 (Thread {pthread} (LWP {lwp}))]",
        "#0  __futex_abstimed_wait_common64 (private=<optimized out>) at ./nptl/futex-internal.c:57",
        "57\t./nptl/futex-internal.c: No such file or directory.",
        f"{prompt}py-bt",
        *block,
    ]
    for text, name in (
        ("\n".join(session), f"LWP {lwp}"),
        ("\n".join([f"{prompt}py-bt", *block]), "current thread"),
    ):
        path = tmp_path / "session.txt"
        path.write_text(text + "\n")
        # WHEN it is read
        (dump,) = list(read_dumps(str(path)))
        # THEN it is gdb's py-bt, innermost frame first, with the thread's state, nothing unparsed
        assert dump.format is DumpFormat.GDB_PY_BT and dump.unparsed_count == 0
        (thread,) = dump.threads
        assert thread.name == name and thread.header in text.splitlines()  # quoted as given
        assert [frame.text for frame in thread.frames] == [frame.text for frame in expected.frames]
        assert thread.status is expected.status is ThreadStatus.IDLE


def test_a_py_spy_dump_of_a_core_file_reads_threads_and_states_from_the_frames(tmp_path: Path) -> None:
    """`py-spy dump --core` heads threads `Thread N: "name"` or `Thread N (gil): "name"` (a core has
    no activity to show): the captured live dump rewritten so reads the same threads, frames and
    waits, the waits now read from the top frames."""
    live_path = CAPTURED / "py-poll-queue-full" / "py-spy-dump.txt"
    live = only_dump(live_path)
    core_text = re.sub(
        r"^(Thread \d+) \((?:idle|active)(\+gil)?\)",
        lambda match: match[1] + (" (gil)" if match[2] else ""),
        live_path.read_text(),
        flags=re.MULTILINE,
    )
    assert "(idle)" not in core_text and "(active" not in core_text
    path = tmp_path / "core.txt"
    path.write_text(core_text)
    core = only_dump(path)
    assert core.format is DumpFormat.PYSPY and core.unparsed_count == 0
    assert [(t.name, functions(t)) for t in core.threads] == [(t.name, functions(t)) for t in live.threads]
    putter = next(t for t in core.threads if "Queue.put" in functions(t))
    assert putter.status is ThreadStatus.IDLE and putter.active is None


def test_py_spy_json_of_a_core_file_reads_its_states_from_the_frames_as_the_text_does() -> None:
    """`py-spy dump --core --json` marks every thread active and gives pid 0 (a core does not say who
    was idle): read from the frames, as the text form of the same core is, and with no pid."""
    core_dir = CAPTURED / "pyfmt-poll-queue-full"
    from_json, from_text = only_dump(core_dir / "py-spy-core.json"), only_dump(core_dir / "py-spy-core.txt")
    assert from_json.format is DumpFormat.PYSPY_JSON and from_json.pid is None
    by_name = {thread.name: thread for thread in from_text.threads}
    assert sorted(by_name) == sorted(thread.name for thread in from_json.threads)
    for thread in from_json.threads:
        assert (thread.status, functions(thread)) == (
            by_name[thread.name].status,
            functions(by_name[thread.name]),
        )
        assert thread.header in (core_dir / "py-spy-core.txt").read_text().splitlines()
    putter = next(t for t in from_json.threads if "Queue.put" in functions(t))
    assert putter.status is ThreadStatus.IDLE


def test_a_py_spy_dump_with_its_thread_ids_elided_reads_the_same_threads(tmp_path: Path) -> None:
    """Tutorials and bug reports shorten py-spy's ids (`Thread 0x7F... (active): "worker"`): the
    captured dump with every id elided so reads the same threads, frames and waits, without ids."""
    captured_path = CAPTURED / "py-poll-queue-full" / "py-spy-dump.txt"
    captured = only_dump(captured_path)
    elided = re.sub(r"^Thread \d+ \(", "Thread 0x7F... (", captured_path.read_text(), flags=re.MULTILINE)
    assert elided.count("Thread 0x7F... (") == len(captured.threads)
    path = tmp_path / "elided.txt"
    path.write_text(elided)
    dump = only_dump(path)
    assert dump.format is DumpFormat.PYSPY and dump.unparsed_count == 0
    assert [(t.name, t.status, functions(t)) for t in dump.threads] == [
        (t.name, t.status, functions(t)) for t in captured.threads
    ]
    assert all(t.tid is None and t.nid is None for t in dump.threads)


def test_asyncio_tasks_of_python_36_and_37_have_no_name_and_are_read_by_their_coroutine(
    tmp_path: Path,
) -> None:
    """Before 3.8 a task's repr has no `name=`: the captured task stacks with the names taken out
    read as the same tasks, each named after its coroutine."""
    captured = CAPTURED / "pyfmt-asyncio-poll-queue-full" / "asyncio-task-stacks.txt"
    named = list(read_dumps(str(captured)))
    path = tmp_path / "py36.txt"
    path.write_text(re.sub(r" name='[^']*'", "", captured.read_text()))
    unnamed = list(read_dumps(str(path)))
    assert len(unnamed) == len(named)
    for before, after in zip(named, unnamed):
        assert [functions(t) for t in after.threads] == [functions(t) for t in before.threads]
        assert [t.status for t in after.threads] == [t.status for t in before.threads]
        assert all(t.name.startswith("task ") and t.name.endswith("()") for t in after.threads)


def test_an_eventlet_greenthread_switched_to_its_hub_is_waiting() -> None:
    switch = python_frame(
        'File "/venv/lib/python3.11/site-packages/eventlet/hubs/hub.py", line 310, in switch',
        "switch",
        "/venv/lib/python3.11/site-packages/eventlet/hubs/hub.py",
        310,
    )
    sleep = python_frame('File "app.py", line 7, in holder', "holder", "app.py", 7)
    assert is_waiting([switch, sleep])
    assert not is_waiting([sleep])


def test_a_py_spy_dump_saved_from_a_terminal_keeps_its_colours_out(tmp_path: Path) -> None:
    """py-spy colours a dump printed to a terminal (ids yellow and bold, functions green, files
    cyan); a terminal log (script, tmux, CI) keeps the escape sequences. Coloured as py-spy does,
    the captured dump reads the same."""
    plain_path = CAPTURED / "py-poll-queue-full" / "py-spy-dump.txt"
    plain = only_dump(plain_path)
    coloured_text = re.sub(
        r"^(Thread |Process )(\d+)",
        "\\1\x1b[33m\x1b[1m\\2\x1b[0m",
        plain_path.read_text(),
        flags=re.MULTILINE,
    )
    coloured_text = re.sub(
        r"^(    )(\S+) \((\S+?):(\d+)\)",
        "\\1\x1b[32m\\2\x1b[0m (\x1b[36m\\3\x1b[0m:\x1b[2m\\4\x1b[0m)",
        coloured_text,
        flags=re.MULTILINE,
    )
    assert coloured_text.count("\x1b[") > 20
    path = tmp_path / "terminal.log"
    path.write_text(coloured_text)
    coloured = only_dump(path)
    assert coloured.format is DumpFormat.PYSPY and coloured.unparsed_count == plain.unparsed_count
    assert [(t.name, t.status, functions(t)) for t in coloured.threads] == [
        (t.name, t.status, functions(t)) for t in plain.threads
    ]


@pytest.mark.parametrize("name", ["pystack-remote.txt", "pystack-remote-native.txt"])
def test_pystack_of_a_process_reads_as_gdb_reads_the_same_process(name: str) -> None:
    """pystack (`pystack remote PID`, with and without --native) of the process gdb read too: the
    same threads by Linux thread id, the same Python frames, the same waits."""
    gdb = {thread.name: thread for thread in only_dump(POLL / "gdb-py-bt.txt").threads}
    dump = only_dump(POLL / name)
    assert dump.format is DumpFormat.PY_TRACEBACK and dump.unparsed_count == 0
    assert {thread.name for thread in dump.threads} == set(gdb)  # "LWP <n>" in both
    for thread in dump.threads:
        python = [(f.function, f.line) for f in thread.frames if not f.native]
        assert python == [(f.function, f.line) for f in gdb[thread.name].frames if not f.native]
        assert thread.status is ThreadStatus.IDLE  # no thread holds the GIL: all wait in C
    native = [f for thread in dump.threads for f in thread.frames if f.native]
    assert bool(native) == (name == "pystack-remote-native.txt")


def test_py_bt_full_reads_as_py_bt_of_the_same_process() -> None:
    """`thread apply all py-bt-full` (numbered frames with their locals: the layout py-bt had on
    Python 2.7, which old bug reports carry) of the process py-bt read: the same threads, Python
    frames, source-qualified functions and waits; nothing left unparsed."""
    py_bt = {thread.name: thread for thread in only_dump(POLL / "gdb-py-bt.txt").threads}
    full = only_dump(POLL / "gdb-py-bt-full.txt")
    assert full.format is DumpFormat.GDB_PY_BT and full.unparsed_count == 0
    assert {thread.name for thread in full.threads} == set(py_bt)
    for thread in full.threads:
        expected = py_bt[thread.name]
        assert [(f.function, f.file, f.line) for f in thread.frames] == [
            (f.function, f.file, f.line) for f in expected.frames
        ]
        assert thread.status is expected.status
    assert "Queue.put" in [f.function for t in full.threads for f in t.frames]


@pytest.mark.parametrize("switch_lines", [False, True])
def test_py_bt_full_pasted_without_its_thread_lines(tmp_path: Path, switch_lines: bool) -> None:
    """py-bt-full stacks pasted without gdb's thread lines (kafka-python #1461 quoted only the
    frames), or a session whose `thread N` answers gdb printed: each run of frames is a thread, a
    frame numbered lower than the one before starting the next; nothing is lost."""
    capture = POLL / "gdb-py-bt-full.txt"
    full = only_dump(capture)
    lines = []
    for line in capture.read_text().splitlines():
        header = re.match(r"^Thread (\d+) \((Thread 0x[0-9a-f]+ \(LWP \d+\))", line)
        if header and switch_lines:
            lines += [
                "(gdb) thread " + header[1],
                f"[Switching to thread {header[1]} ({header[2]})]",
                "(gdb) py-bt",
            ]
        elif not header and (line.startswith("#") or line.startswith("    ")):
            lines.append(line)
    pasted = tmp_path / "frames-only.txt"
    pasted.write_text("\n".join(lines) + "\n")
    dump = only_dump(pasted)
    assert dump.format is DumpFormat.GDB_PY_BT
    assert [[(f.function, f.line) for f in t.frames] for t in dump.threads] == [
        [(f.function, f.line) for f in t.frames] for t in full.threads
    ]
    if switch_lines:
        assert [t.name for t in dump.threads] == [t.name for t in full.threads]
    else:
        assert all(t.name.startswith("(no header, line ") for t in dump.threads)
        assert any("without a thread line" in note for note in dump.notes)


def test_a_py_spy_dump_in_a_markdown_page_as_an_indented_code_block(tmp_path: Path) -> None:
    """A page quoting a py-spy dump as an indented code block (four spaces before every line of
    it, prose around): the dump reads as it was printed."""
    plain_path = CAPTURED / "py-poll-queue-full" / "py-spy-dump.txt"
    plain = only_dump(plain_path)
    block = "\n".join(("    " + line) if line else "" for line in plain_path.read_text().splitlines())
    page = "The consumer stopped; py-spy shows where:\n\n" + block + "\n\nThe putter waits on a full queue.\n"
    path = tmp_path / "post.md"
    path.write_text(page)
    quoted = only_dump(path)
    assert [(t.name, t.status, functions(t)) for t in quoted.threads] == [
        (t.name, t.status, functions(t)) for t in plain.threads
    ]
