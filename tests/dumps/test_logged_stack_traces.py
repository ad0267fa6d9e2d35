"""Thread.getAllStackTraces() as applications log it: `Thread[name,5,main]`, then its frames.

The captured scenario real-new-consumer-coordinator-unavailable-3.9.1 holds Apache Kafka's real
consumer (kafka-clients 3.9.1) retrying coordinator discovery, logged by the application itself the
way alpakka-kafka logs a poll that outlived its wake-up timeout, then with "at " frames
(stacktraces.log). A real JVM
(tests/dumps/programs/AllStackTraces.java, run by every JDK found here) prints both layouts with
threads waiting in each way a top frame can show.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from kafkadiag.dumps import read_dumps
from kafkadiag.dumps.detect import detect_format
from kafkadiag.exitcodes import ExitCode
from kafkadiag.model import DumpFormat, Thread, ThreadDump, ThreadState, ThreadStatus

from ..cli.test_dump_parse_cli import run

PROGRAM = Path(__file__).parent / "programs" / "AllStackTraces.java"
STACK_TRACES_LOG = "real-new-consumer-coordinator-unavailable-3.9.1/stacktraces.log"
POLL_THREAD = "fulfilment-poll"
HEARTBEAT = "kafka-coordinator-heartbeat-thread | fulfilment"
CONSUMER = "org.apache.kafka.clients.consumer."


def _jdks() -> list[str]:
    """`java` on PATH, and the JDK 25 the fixtures use when it is installed (JDK 19+ prints the
    thread id in Thread.toString(): `Thread[#21,name,5,main]`)."""
    found = [shutil.which("java") or "java"]
    jdk25 = Path("/usr/lib/jvm/temurin-25-jdk-amd64/bin/java")
    if jdk25.exists():
        found.append(str(jdk25))
    return found


@pytest.fixture(scope="module", params=_jdks())
def printed(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("stacks") / "app.log"
    completed = subprocess.run(
        [request.param, str(PROGRAM)], capture_output=True, text=True, timeout=120, check=False
    )
    assert completed.returncode == 0, completed.stderr
    out.write_text(completed.stdout, encoding="utf-8")
    return out


def by_name(dump: ThreadDump) -> dict[str, Thread]:
    return {thread.name: thread for thread in dump.threads}


def test_a_real_jvm_prints_both_layouts_and_each_is_one_dump_of_every_thread(printed: Path) -> None:
    text = printed.read_text(encoding="utf-8")
    assert detect_format(text.splitlines()) is DumpFormat.STACK_TRACES
    dumps = list(read_dumps(str(printed)))
    records = re.split(r"(?m)^\[(?:WARN|INFO)\] ", text)
    headers_per_record = [record.count("Thread[") for record in records if "Thread[" in record]
    assert [len(dump.threads) for dump in dumps] == headers_per_record
    assert all(dump.format is DumpFormat.STACK_TRACES and dump.unparsed_count == 0 for dump in dumps)
    assert all(any("no thread states" in note for note in dump.notes) for dump in dumps)


def test_each_wait_is_read_from_the_top_frame(printed: Path) -> None:
    for dump in read_dumps(str(printed)):
        threads = by_name(dump)
        # The name keeps its commas and brackets: priority and group are split off from the right.
        assert threads["worker [orders,2], main"].status is ThreadStatus.PARKED
        assert threads["timed-taker"].status is ThreadStatus.PARKED_TIMED
        assert threads["sleeper"].status is ThreadStatus.SLEEPING
        assert threads["waiter"].status is ThreadStatus.IN_OBJECT_WAIT
        # Entering a monitor shows no frame of its own: not called running, not called blocked.
        assert threads["entering"].state is ThreadState.UNKNOWN
        # Thread.dumpThreads is native: a thread in native code is RUNNABLE to the JVM.
        assert threads["main"].status is ThreadStatus.RUNNABLE
        assert "AllStackTraces.main" in [frame.function for frame in threads["main"].frames]


def test_the_captured_alpakka_log_reads_as_two_dumps_of_the_spin(captured: Path) -> None:
    dumps = list(read_dumps(str(captured / STACK_TRACES_LOG)))
    assert len(dumps) == 2
    for dump in dumps:
        threads = by_name(dump)
        functions = [frame.function for frame in threads[POLL_THREAD].frames]
        assert f"{CONSUMER}internals.AbstractCoordinator.ensureCoordinatorReady" in functions
        assert f"{CONSUMER}KafkaConsumer.poll" in functions
        assert threads[HEARTBEAT].status is ThreadStatus.IN_OBJECT_WAIT
        # The log records around the dumps are not threads of them.
        assert not any(name.startswith("[") for name in threads)


def test_analyze_names_the_poll_thread_retrying_discovery(captured: Path) -> None:
    _, out, err = run(["dump", "analyze", "--format", "json", str(captured / STACK_TRACES_LOG)])
    assert out, err
    report = json.loads(out)
    kd304 = [finding for finding in report["findings"] if finding["rule"] == "KD304"]
    assert kd304 and POLL_THREAD in kd304[0]["threads"], out
    assert any("no thread states" in caveat for caveat in report["caveats"]), report["caveats"]


def test_a_thread_named_at_the_end_of_a_log_line_is_not_a_dump(tmp_path: Path) -> None:
    # No frame under it: an ordinary log line that happens to print a Thread.
    log = tmp_path / "app.log"
    log.write_text(
        "2026-11-27 05:00:00 INFO started worker Thread[worker-1,5,main]\n"
        "2026-11-27 05:00:01 INFO worker Thread[worker-1,5,main] finished\n",
        encoding="utf-8",
    )
    assert detect_format(log.read_text(encoding="utf-8").splitlines()) is DumpFormat.HOTSPOT  # the default
    code, out, _ = run(["dump", "analyze", str(log)])
    assert code == ExitCode.INPUT_UNREADABLE, out
