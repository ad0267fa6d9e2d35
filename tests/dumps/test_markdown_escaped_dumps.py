"""Dumps that went through a Markdown renderer: `\\<0x..\\>` lock ids and `TIMED\\_WAITING` states.

JIRA descriptions rendered as Markdown (Apache Yetus release notes, for one) escape `<`, `>` and
`_` with a backslash. The escapes are markup: the locks and states they carry must read as if the
dump had been pasted raw. The inputs are dumps published that way (tests/wild/dumps).
"""

from __future__ import annotations

from pathlib import Path

from kafkadiag.dumps import read_dumps
from kafkadiag.model import LockEventKind, Thread, ThreadState, ThreadStatus

WILD_DUMPS = Path(__file__).resolve().parents[1] / "wild" / "dumps"


def threads_of(name: str) -> dict[str, Thread]:
    (dump,) = list(read_dumps(str(WILD_DUMPS / name)))
    return {thread.name: thread for thread in dump.threads}


def test_escaped_lock_ids_are_read_as_lock_ids() -> None:
    # GIVEN SPARK-10125's dump, whose lock lines read `- locked \<0x00000007b5d8cea0\> (a ...)`
    # WHEN it is parsed
    threads = threads_of("spark-10125-jobgenerator-stop-deadlock.txt")
    # THEN the joining thread holds the JobGenerator monitor the event loop is blocked on
    stopper = threads["pool-1-thread-1-ScalaTest-running-StreamingListenerSuite"]
    loop = threads["JobGenerator"]
    held = {event.lock_id for event in stopper.lock_events if event.kind is LockEventKind.LOCKED}
    (wanted,) = [event for event in loop.lock_events if event.kind is LockEventKind.WAITING_TO_LOCK]
    assert wanted.lock_id == 0x7B5D8CEA0
    assert wanted.lock_class == "org.apache.spark.streaming.scheduler.JobGenerator"
    assert wanted.lock_id in held


def test_escaped_underscore_in_the_state_line_is_the_state() -> None:
    # GIVEN SPARK-7174's dump, whose state line reads `java.lang.Thread.State: TIMED\_WAITING (parking)`
    # WHEN it is parsed
    threads = threads_of("spark-7174-heartbeat-receiver-blocking-ask.txt")
    # THEN the thread is a timed wait on a parked synchronizer, not an unknown state
    dispatcher = threads["sparkDriver-akka.actor.default-dispatcher-14"]
    assert dispatcher.state is ThreadState.TIMED_WAITING
    assert dispatcher.status is ThreadStatus.PARKED_TIMED


def test_escaped_angle_brackets_in_a_frame_are_the_method_name() -> None:
    # GIVEN SPARK-2546's dump, whose constructor frames read `at java.util.HashMap.\<init\>(...)`
    # WHEN it is parsed
    threads = threads_of("spark-2546-hashmap-infinite-loop.txt")
    # THEN a constructor frame is named as the JVM names it, and still quoted as it was printed
    frames = [frame for thread in threads.values() for frame in thread.frames if "\\<init\\>" in frame.text]
    assert len(frames) >= 5 and all(frame.function.endswith(".<init>") for frame in frames)
