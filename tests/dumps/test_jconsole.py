"""JConsole's Threads tab text, as people copy it, in English and Chinese: the threads read as
jstack shows the same process, with the lock each waits on and a caveat on what the tab lacks.

The captures are written by the stalled program itself through JConsole's own message formats
(fixtures/java-real/com/example/threaddumps/JConsoleThreadsTab.java), beside a jstack -l of the same
process: Apache Kafka's real producer (kafka-clients 4.1.1) whose I/O thread is parked in a send
callback that waits for a reply (real-producer-callback-waits-reply-4.1.1).
"""

from __future__ import annotations

import pytest

from kafkadiag.dumps import read_dumps
from kafkadiag.model import DumpFormat, LockEventKind, ThreadStatus
from kafkadiag.rules.engine import analyze

from ..conftest import CAPTURED

SCENARIO = CAPTURED / "real-producer-callback-waits-reply-4.1.1"
IO_THREAD = "kafka-producer-network-thread | command-sender"
JCONSOLE_FILES = ["jconsole-threads.txt", "jconsole-threads-zh.txt"]


def only_dump(name: str):
    (dump,) = list(read_dumps(str(SCENARIO / name)))
    return dump


@pytest.mark.parametrize("name", JCONSOLE_FILES)
def test_jconsole_threads_read_as_jstack_shows_them(name: str) -> None:
    # GIVEN the I/O thread and the two request threads as JConsole shows them, and jstack -l
    dump = only_dump(name)
    jstack = {thread.name: thread for thread in only_dump("jstack-l.txt").threads}
    # THEN the format is named, and each thread has jstack's status, frames and lock classes
    assert dump.format is DumpFormat.JCONSOLE and dump.producer == "JConsole"
    assert [thread.name for thread in dump.threads] == [IO_THREAD, "command-api-1", "command-api-2"]
    for thread in dump.threads:
        printed = jstack[thread.name]
        assert thread.status is printed.status
        assert [f.function for f in thread.frames] == [f.function for f in printed.frames]
        # identity hashes in JConsole, addresses in jstack: the locks compare by class and place
        assert [(e.kind, e.lock_class, e.frame_index) for e in thread.lock_events] == [
            (e.kind, e.lock_class, e.frame_index) for e in printed.lock_events
        ]
    statuses = [thread.status for thread in dump.threads]
    assert statuses == [ThreadStatus.PARKED, ThreadStatus.PARKED, ThreadStatus.BLOCKED]
    # the state line's "owned by: command-api-1" and its "- locked" line agree on the holder
    first, second = dump.threads[1], dump.threads[2]
    waited = second.waits_for()
    assert waited is not None and waited.kind is LockEventKind.WAITING_TO_LOCK
    assert waited.lock_id in {held.lock_id for held in first.held_locks()}
    assert any("JConsole's Threads tab" in note for note in dump.notes)


@pytest.mark.parametrize("name", JCONSOLE_FILES)
def test_jconsole_text_gives_the_findings_jstack_gives(name: str) -> None:
    def named(dump_name: str) -> set[tuple[str, tuple[str, ...]]]:
        return {
            (finding.rule, tuple(finding.threads)) for finding in analyze([only_dump(dump_name)]).findings
        }

    found = named(name)
    assert found == named("jstack-l.txt")
    # the I/O thread held in its callback, and the request blocked behind the one waiting for it
    assert ("KD308", (IO_THREAD,)) in found
    assert ("KD103", ("command-api-1", "command-api-2")) in found
    assert not any(rule == "KD301" for rule, _ in found)  # a producer's I/O thread polls no consumer


def test_the_callback_is_named_by_the_application_frame_above_the_lambda() -> None:
    callback = next(f for f in analyze([only_dump("jconsole-threads.txt")]).findings if f.rule == "KD308")
    # "CommandSender$$Lambda$N/0x....onCompletion" is generated; the lambda's body is above it. Under
    # it the producer's own wrapper, KafkaProducer$AppendCallbacks, is not the application's callback.
    assert str(callback.details["callback"]).startswith(
        "com.example.ledger.CommandSender.lambda$handleRequest$"
    )
