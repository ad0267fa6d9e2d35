"""VisualVM's `"name" - Thread t@N` rendering.

VisualVM cannot run here (it needs a display and a JMX connection), so this is a unit test on
its documented layout, written out below; the parser path it exercises is the HotSpot one, which
the real captures cover.
"""

from __future__ import annotations

from pathlib import Path

from kafkadiag.dumps import read_dumps
from kafkadiag.lockgraph import LockGraph
from kafkadiag.model import DumpFormat, LockEventKind, ThreadStatus

LAYOUT = """\
2024-05-01 10:11:12
Full thread dump Java HotSpot(TM) 64-Bit Server VM (25.202-b08 mixed mode):

"worker-1" - Thread t@12
   java.lang.Thread.State: BLOCKED
\tat com.example.Worker.run(Worker.java:10)
\t- waiting to lock <5a2e4553> (a java.lang.Object) owned by "worker-0" t@11

   Locked ownable synchronizers:
\t- None

"worker-0" - Thread t@11
   java.lang.Thread.State: TIMED_WAITING
\tat java.lang.Thread.sleep(Native Method)
\tat com.example.Worker.run(Worker.java:12)
\t- locked <5a2e4553> (a java.lang.Object)

   Locked ownable synchronizers:
\t- locked <1e3c3a2b> (a java.util.concurrent.ThreadPoolExecutor$Worker)

"main" - Thread t@1
   java.lang.Thread.State: WAITING
\tat java.lang.Object.wait(Native Method)
\t- waiting on <6d06d69c> (a java.lang.Thread)
\tat java.lang.Thread.join(Thread.java:1252)
\tat com.example.Main.main(Main.java:5)
"""


def test_names_states_frames_and_lock_ids(tmp_path: Path) -> None:
    path = tmp_path / "visualvm.tdump"
    path.write_text(LAYOUT)
    (dump,) = list(read_dumps(str(path)))
    assert dump.format is DumpFormat.NETBEANS
    assert [(t.name, t.java_id, t.status) for t in dump.threads] == [
        ("worker-1", 12, ThreadStatus.BLOCKED),
        ("worker-0", 11, ThreadStatus.SLEEPING),
        ("main", 1, ThreadStatus.IN_OBJECT_WAIT),
    ]
    blocked = dump.threads[0].waits_for()
    assert blocked is not None and blocked.kind is LockEventKind.WAITING_TO_LOCK
    assert (blocked.lock_id, blocked.lock_class) == (0x5A2E4553, "java.lang.Object")
    assert {lock.lock_id for lock in dump.threads[1].held_locks()} == {0x5A2E4553, 0x1E3C3A2B}
    graph = LockGraph(dump)
    assert [graph.thread(i).name for i in graph.blockers(0)] == ["worker-0"]
    assert dump.unparsed_count == 0
