"""A thread pasted flush left keeps its lock lines, as it already kept its frames.

A banner-less fragment ends at the first line that is not part of a dump. Frames whose indent a
paste or a logger stripped ("at pkg.Class.method(...)" at column 0) were already read as frames;
their lock lines ("- locked <0x..> (a ...)" at column 0) ended the fragment instead, so the thread
lost every frame after its first. Netflix/suro #233 pasted its producer-close thread that way.
"""

from __future__ import annotations

from pathlib import Path

from kafkadiag.dumps import read_dumps
from kafkadiag.model import LockEventKind

SURO_233 = Path(__file__).resolve().parents[1] / "wild" / "dumps" / "suro-233-kafka-producer-close-join.txt"


def test_flush_left_lock_lines_are_read_as_lock_lines() -> None:
    # GIVEN a thread whose frames and lock lines were all pasted at column 0
    # WHEN it is read
    dumps = list(read_dumps(str(SURO_233)))
    # THEN its whole stack is one thread, and the monitor it waits on and holds is known
    assert len(dumps) == 1
    (thread,) = dumps[0].threads
    assert thread.name == "pollingConfigurationSource"
    assert len(thread.frames) == 8
    assert thread.frames[-1].function == "com.netflix.chukwa.suro.SuroSinkConfigurator.buildSink"
    kinds = [event.kind for event in thread.lock_events]
    assert kinds == [LockEventKind.WAITING_ON, LockEventKind.LOCKED]
    assert {event.lock_id for event in thread.lock_events} == {0x2994DAE30}
    assert not dumps[0].unparsed


def test_a_flush_left_dash_line_that_is_no_lock_line_still_ends_the_fragment(tmp_path: Path) -> None:
    # GIVEN a pasted thread followed by a bulleted remark of the reporter's
    dump = tmp_path / "remark.txt"
    dump.write_text(
        '"main" #1 prio=5 os_prio=0 tid=0x1 nid=0x2 waiting on condition [0x3]\n'
        "   java.lang.Thread.State: WAITING (parking)\n"
        "at sun.misc.Unsafe.park(Native Method)\n"
        "- this is where it hangs\n"
        "at java.lang.Thread.run(Thread.java:748)\n",
        encoding="utf-8",
    )
    # WHEN it is read
    dumps = list(read_dumps(str(dump)))
    # THEN the remark is not taken for a lock line: it ends the fragment, as any prose does
    assert [len(thread.frames) for thread in dumps[0].threads] == [1]
    assert not dumps[0].threads[0].lock_events
