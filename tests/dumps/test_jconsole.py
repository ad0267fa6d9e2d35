"""JConsole's Threads tab text, as people copy it, in English and Chinese: the threads read as
jstack shows the same process, with the lock each waits on and a caveat on what the tab lacks.

The captures are written by the stalled program itself through JConsole's own message formats
(fixtures/java/com/example/JConsoleThreadsTab.java), beside a jstack -l of the same process.
"""

from __future__ import annotations

import pytest

from kafkadiag.dumps import read_dumps
from kafkadiag.model import DumpFormat, LockEventKind, ThreadStatus
from kafkadiag.rules.engine import analyze

from ..conftest import CAPTURED

SCENARIO = CAPTURED / "producer-callback-waits-reply"
IO_THREAD = "kafka-producer-network-thread | command-sender"
JCONSOLE_FILES = ["jconsole-threads.txt", "jconsole-threads-zh.txt"]


def only_dump(name: str):
    (dump,) = list(read_dumps(str(SCENARIO / name)))
    return dump


@pytest.mark.parametrize("name", JCONSOLE_FILES)
def test_jconsole_threads_read_as_jstack_shows_them(name: str) -> None:
    # GIVEN the I/O thread and the request thread as JConsole shows them, and jstack -l of the process
    dump = only_dump(name)
    jstack = {thread.name: thread for thread in only_dump("jstack-l.txt").threads}
    # THEN the format is named, and each thread has jstack's status and frames
    assert dump.format is DumpFormat.JCONSOLE and dump.producer == "JConsole"
    assert [thread.name for thread in dump.threads] == [IO_THREAD, "command-api-1"]
    for thread in dump.threads:
        assert thread.status is jstack[thread.name].status is ThreadStatus.PARKED
        assert [f.function for f in thread.frames] == [f.function for f in jstack[thread.name].frames]
        # the state line's lock is the parked-on lock jstack prints under the top frame
        (waited,) = [event for event in thread.lock_events if event.kind is LockEventKind.PARKING]
        (printed,) = [
            event for event in jstack[thread.name].lock_events if event.kind is LockEventKind.PARKING
        ]
        assert waited.frame_index == printed.frame_index == 0
        assert waited.lock_class == printed.lock_class == "java.util.concurrent.CompletableFuture$Signaller"
    assert any("JConsole's Threads tab" in note for note in dump.notes)


@pytest.mark.parametrize("name", [*JCONSOLE_FILES, "jstack-l.txt"])
def test_the_io_thread_held_in_its_callback_is_named_and_nothing_else(name: str) -> None:
    findings = analyze([only_dump(name)]).findings
    named = {(finding.rule, thread) for finding in findings for thread in finding.threads}
    assert ("KD308", IO_THREAD) in named, [(f.rule, f.threads) for f in findings]
    # the producer's I/O thread is not a consumer's poll thread waiting for workers
    assert not any(finding.rule == "KD301" for finding in findings)
    callback = next(finding for finding in findings if finding.rule == "KD308")
    assert callback.details["callback"] == "com.example.CommandSenderApp.lambda$handleRequest$2"
