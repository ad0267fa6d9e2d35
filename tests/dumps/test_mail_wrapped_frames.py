"""Frames a mail client wrapped after their "at": the method on a line of its own.

KAFKA-1764's dump went through a mail client that broke every long frame after "at" (and dropped
the space there), the method starting at column 0 on the next line; a lock line's "(a" lost its
class the same way. Each piece is joined back to the frame or lock line it was cut from.
"""

from __future__ import annotations

from pathlib import Path

from kafkadiag.dumps import read_dumps

from ..conftest import CAPTURED
from .reading import what_was_read

WILD = Path(__file__).resolve().parents[1] / "wild" / "dumps"
ORIGINAL = CAPTURED / "put-under-lock" / "jstack-l.txt"


def _at_alone(text: str, longer_than: int) -> str:
    """Every frame longer than `longer_than` columns cut after its "at", as KAFKA-1764's mail client did."""
    lines = []
    for line in text.split("\n"):
        if line.startswith("\tat ") and len(line.expandtabs()) > longer_than:
            lines += ["        at", line[len("\tat ") :]]
        else:
            lines.append(line.replace("\t", "        ", 1) if line.startswith("\t") else line)
    return "\n".join(lines)


def test_frames_cut_after_their_at_are_rejoined(tmp_path: Path) -> None:
    # GIVEN a captured dump whose long frames were cut after "at", the method at column 0
    path = tmp_path / "mailed.txt"
    path.write_text(_at_alone(ORIGINAL.read_text(encoding="utf-8"), 72))
    # WHEN it is read
    dump = next(read_dumps(str(path)))
    # THEN every thread reads as in the original, and the repair is a caveat
    assert what_was_read(path) == what_was_read(ORIGINAL)
    assert any("cut by hard wrapping" in note for note in dump.notes)


def test_kafka_1764_shutdown_thread_is_read_frame_by_frame() -> None:
    # GIVEN KAFKA-1764's mail-wrapped excerpt
    (dump,) = list(read_dumps(str(WILD / "kafka-1764-shutdown-command-full-queue.txt")))
    (thread,) = dump.threads
    # WHEN it is read THEN each "at" and its method are one frame, the lock line has its class
    functions = [frame.function for frame in thread.frames]
    assert len(functions) == 17 and all("(" not in function and " " not in function for function in functions)
    assert functions[3:5] == [
        "java.util.concurrent.LinkedBlockingQueue.put",
        "kafka.consumer.ZookeeperConsumerConnector$$anonfun$sendShutdownToAllQueues$1.apply",
    ]
    parked = thread.waits_for()
    assert parked is not None and parked.lock_class == (
        "java.util.concurrent.locks.AbstractQueuedSynchronizer$ConditionObject"
    )
