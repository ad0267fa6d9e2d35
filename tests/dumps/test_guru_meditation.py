"""oslo.reports' Guru Meditation Report (how OpenStack's eventlet services, monasca's Kafka
persister among them, print their stacks): OS threads and green threads, frames innermost
first, and the stalled poll loop found as in a py-spy dump of the same program."""

from __future__ import annotations

from pathlib import Path

from kafkadiag.dumps import read_dumps
from kafkadiag.dumps.detect import detect_format
from kafkadiag.model import DumpFormat, ThreadStatus
from kafkadiag.rules.engine import analyze

from ..conftest import CAPTURED

REPORT = CAPTURED / "pyfmt-eventlet-poll-queue-full" / "guru-meditation-report.txt"


def only_dump(path: Path):
    (dump,) = list(read_dumps(str(path)))
    return dump


def by_function(dump, function: str):
    return [
        thread for thread in dump.threads if any(frame.function.endswith(function) for frame in thread.frames)
    ]


def test_the_report_reads_as_os_and_green_threads_innermost_frame_first() -> None:
    dump = only_dump(REPORT)
    assert dump.format is DumpFormat.GURU_MEDITATION and dump.producer == "oslo.reports"
    names = [thread.name for thread in dump.threads]
    assert names[0].startswith("Thread #") and names[1:5] == [f"Green Thread {n}" for n in range(1, 5)]
    (poller,) = by_function(dump, "poll_loop")
    # the report prints the outermost frame first: read innermost first, the queue's put under the loop
    functions = [frame.function for frame in poller.frames]
    assert functions.index("poll_loop") > functions.index("Queue.put") > 0
    assert poller.frames[-1].function == "main" and poller.frames[-1].file.endswith("eventlet/greenthread.py")
    assert poller.status is ThreadStatus.IDLE  # a green thread waits where it gave up the CPU
    assert dump.unparsed_count == 0
    assert any("no names in a Guru Meditation Report" in note for note in dump.notes)


def test_the_full_queue_is_found_and_the_poll_loop_named() -> None:
    dump = only_dump(REPORT)
    (poller,) = by_function(dump, "poll_loop")
    (finding,) = [finding for finding in analyze([dump]).findings if finding.rule == "KD401"]
    assert finding.threads[0] == poller.name


def test_only_the_stacks_of_a_report_are_enough_to_tell_the_format(tmp_path: Path) -> None:
    # GIVEN the Green Threads section alone, as a reply quotes it
    text = REPORT.read_text(encoding="utf-8")
    section = text[text.index("------                        Green Thread") :]
    assert detect_format(section.splitlines()) is DumpFormat.GURU_MEDITATION
    excerpt = tmp_path / "green.txt"
    excerpt.write_text(section, encoding="utf-8")
    (dump,) = list(read_dumps(str(excerpt)))
    assert len(dump.threads) == len(only_dump(REPORT).threads) - 1  # the OS thread is not in it
