"""Lock lines in ThreadInfo's words (`- waiting to lock pkg.Lock@39faacaf`, `- locked on pkg.Lock@...`).

Some tools render a thread dump from ThreadMXBean in jstack's layout but with ThreadInfo's lock
names: a header of the name and `#id` only, a state without its detail, and locks as `Class@hash`
with "locked on" for a held monitor. GIVEN the captured JVM of Kafka's real consumer whose heartbeat
thread is blocked behind the poll thread (real-new-consumer-coordinator-unavailable-3.9.1),
re-rendered that way (every id the same lock had stays one id), WHEN it is analyzed, THEN the
heartbeat thread is still found blocked behind the poll thread that holds the coordinator.
"""

from __future__ import annotations

import re
from pathlib import Path

from kafkadiag.dumps import read_dumps
from kafkadiag.model import LockEventKind
from kafkadiag.rules.engine import analyze

from ..conftest import CAPTURED

CAPTURE = CAPTURED / "real-new-consumer-coordinator-unavailable-3.9.1" / "jstack-l.txt"
HEARTBEAT = "kafka-coordinator-heartbeat-thread | fulfilment"
POLL_THREAD = "fulfilment-poll"
_LOCK_LINE = re.compile(r"^\t- (?P<words>[a-z() -]+?) <0x(?P<address>[0-9a-f]+)> \(a (?P<class>[^)]+)\)$")
_THREADINFO_WORDS = {"locked": "locked on"}


def in_threadinfo_words(text: str) -> str:
    lines = []
    for line in text.split("\n"):
        header = re.match(r'^(".*") (#\d+) ', line)
        state = re.match(r"^(   java\.lang\.Thread\.State: [A-Z_]+)", line)
        lock = _LOCK_LINE.match(line)
        if header:
            line = f"{header[1]} {header[2]}"
        elif state:
            line = state[1]
        elif lock:
            words = _THREADINFO_WORDS.get(lock["words"], lock["words"])
            line = f"        - {words} {lock['class']}@{lock['address'][-8:]}"
        elif line.startswith("\tat "):
            line = "        " + line[1:]
        lines.append(line)
    return "\n".join(lines)


def findings_on(path: Path):  # type: ignore[no-untyped-def]
    return analyze(list(read_dumps(str(path)))).findings


def test_the_heartbeat_thread_is_still_blocked_behind_the_poll_thread(tmp_path: Path) -> None:
    variant = tmp_path / "threadinfo-words.txt"
    variant.write_text(in_threadinfo_words(CAPTURE.read_text(encoding="utf-8")), encoding="utf-8")
    assert (
        "- locked on org.apache.kafka.clients.consumer.internals.ConsumerCoordinator@" in variant.read_text()
    )

    (dump,) = read_dumps(str(variant))
    (captured,) = read_dumps(str(CAPTURE))
    assert [(t.name, t.status) for t in dump.threads] == [(t.name, t.status) for t in captured.threads]
    heartbeat = dump.thread_named(HEARTBEAT)
    poll = dump.thread_named(POLL_THREAD)
    assert heartbeat is not None and poll is not None
    waits = heartbeat.waits_for()
    assert waits is not None and waits.kind is LockEventKind.WAITING_TO_RELOCK
    assert waits.lock_id in {lock.lock_id for lock in poll.held_locks()}

    original = [f for f in findings_on(CAPTURE) if f.rule == "KD303"]
    rendered = [f for f in findings_on(variant) if f.rule == "KD303"]
    assert original and [f.threads for f in rendered] == [f.threads for f in original]
