"""A real Python process under py-spy: text, --json, --locals and --native all parse alike."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from kafkadiag.dumps import read_dumps
from kafkadiag.model import DumpFormat, LockEventKind, ThreadStatus


@pytest.fixture(scope="module")
def stuck_poll_loop(capture_module, tmp_path_factory):
    import sys

    work = tmp_path_factory.mktemp("py")
    targets = capture_module.Targets()
    argv = [sys.executable, str(capture_module.PY_SRC / "poll_queue_full.py")]
    process = targets.start(argv, work / "stdout", work)
    try:
        capture_module.wait_ready(process, work / "stdout")
        yield process, capture_module.find_py_spy()
    finally:
        targets.stop_all()


def py_spy(py_spy_path: str, pid: int, flags: list[str], tmp_path: Path, name: str):
    data = subprocess.run(
        [py_spy_path, "dump", "--pid", str(pid), *flags], capture_output=True, timeout=60, check=True
    ).stdout
    path = tmp_path / name
    path.write_bytes(data)
    (dump,) = list(read_dumps(str(path)))
    return dump


@pytest.mark.parametrize(
    ("flags", "expected_format"),
    [
        ([], DumpFormat.PYSPY),
        (["--json"], DumpFormat.PYSPY_JSON),
        (["--locals"], DumpFormat.PYSPY),
        (["--json", "--locals"], DumpFormat.PYSPY_JSON),
        (["--native"], DumpFormat.PYSPY),
    ],
    ids=["text", "json", "locals", "json-locals", "native"],
)
def test_poll_loop_blocked_in_full_queue_put(stuck_poll_loop, tmp_path: Path, flags, expected_format) -> None:
    process, py_spy_path = stuck_poll_loop
    dump = py_spy(py_spy_path, process.pid, flags, tmp_path, "dump")
    assert dump.format is expected_format
    assert dump.pid == process.pid
    names = {t.name for t in dump.threads}
    assert {"kafka-poll-loop", "worker-0", "worker-1", "group1-heartbeat", "MainThread"} <= names
    poll = dump.thread_named("kafka-poll-loop")
    python_frames = [f.function for f in poll.frames if not f.native]
    assert python_frames[:2] == ["Condition.wait", "Queue.put"]
    assert poll.status is ThreadStatus.IDLE
    assert dump.unparsed_count == 0
    if "--locals" in flags:
        # The object the poll loop waits on is the queue's not_full Condition.
        event = poll.waits_for()
        assert event is not None and event.kind is LockEventKind.PARKING and event.lock_class == "Condition"
        put = next(f for f in poll.frames if f.function == "Queue.put")
        assert any(v.name == "self" and v.value.startswith("<Queue at 0x") for v in put.locals)
    if "--native" in flags:
        assert any(f.native for f in poll.frames)


def test_text_and_json_agree(stuck_poll_loop, tmp_path: Path) -> None:
    process, py_spy_path = stuck_poll_loop
    text = py_spy(py_spy_path, process.pid, [], tmp_path, "text")
    as_json = py_spy(py_spy_path, process.pid, ["--json"], tmp_path, "json")

    def shape(dump):
        return sorted(
            (t.name, t.nid, tuple(f.function for f in t.frames), tuple(f.line for f in t.frames))
            for t in dump.threads
        )

    assert shape(text) == shape(as_json)


NAMED_OVER_TWO_LINES = 'poller\nsecond "q" line'


def test_a_thread_name_holding_a_line_break_is_one_name(capture_module, tmp_path: Path) -> None:
    """py-spy prints a thread's name as it is: a name with a line break puts the header over two
    lines. It reads as one thread with the whole name, not as a header cut by wrapping."""
    import sys

    program = tmp_path / "names.py"
    program.write_text(
        "import threading, time\n"
        f"name = {NAMED_OVER_TWO_LINES!r}\n"
        "threading.Thread(target=time.sleep, args=(600,), name=name, daemon=True).start()\n"
        "print('READY', flush=True)\n"
        "time.sleep(600)\n"
    )
    process = subprocess.Popen([sys.executable, str(program)], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "READY"
        dump = py_spy(capture_module.find_py_spy(), process.pid, [], tmp_path, "names.txt")
    finally:
        process.kill()
        process.wait()
    assert f'"{NAMED_OVER_TWO_LINES}"' in (tmp_path / "names.txt").read_text()  # printed as it is
    named = dump.thread_named(NAMED_OVER_TWO_LINES)
    assert named is not None and named.status is ThreadStatus.IDLE
    assert not dump.notes  # no "cut by hard wrapping" caveat: nothing was cut
