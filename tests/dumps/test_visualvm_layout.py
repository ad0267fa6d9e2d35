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


# The older rendering states the wait in the state line, with the owner's name (KAFKA-1305's dump,
# here cut to the frames that matter).
WILD = Path(__file__).resolve().parents[1] / "wild" / "dumps"
KAFKA_1305 = WILD / "kafka-1305-controller-shutdown-hang.txt"


def _excerpt(path: Path, names: tuple[str, ...], keep_synchronizers: bool = True) -> str:
    """The blocks of the named threads, as printed, optionally without their synchronizer lists."""
    blocks = path.read_text(encoding="utf-8").split("\n...\n")
    kept = [block for block in blocks if block.strip().split("\n")[0].strip('" ').startswith(names)]
    if not keep_synchronizers:
        kept = [block.split("   Locked ownable synchronizers:")[0] for block in kept]
    return "\n".join(kept)


def test_a_wait_stated_in_the_state_line_links_the_waiter_to_the_owner() -> None:
    # GIVEN the KAFKA-1305 excerpt, whose waiters say "WAITING on <lock>@<hash> owned by: <name>"
    (dump,) = list(read_dumps(str(KAFKA_1305)))
    graph = LockGraph(dump)
    names = [thread.name for thread in dump.threads]
    waiter = names.index("Thread-4")
    # WHEN the waiter's wait is read
    event = dump.threads[waiter].waits_for()
    # THEN it is a park on that lock, quoted from the state line, and its holder is the owner named
    assert event is not None and event.kind is LockEventKind.PARKING
    assert (event.lock_id, event.lock_class) == (
        0x4836840,
        "java.util.concurrent.locks.ReentrantLock$NonfairSync",
    )
    assert event.line_no == 21 and "owned by: kafka-scheduler-0" in event.text
    assert [graph.thread(i).name for i in graph.blockers(waiter)] == ["kafka-scheduler-0"]


def test_the_owner_named_in_the_state_line_holds_the_lock_when_its_own_list_is_cut(tmp_path: Path) -> None:
    # GIVEN the waiter and the owner, without the owner's "Locked ownable synchronizers" list
    path = tmp_path / "cut.txt"
    path.write_text(_excerpt(KAFKA_1305, ("Thread-4", "kafka-scheduler-0"), keep_synchronizers=False))
    (dump,) = list(read_dumps(str(path)))
    # WHEN the lock graph is built
    graph = LockGraph(dump)
    # THEN the owner named by the waiter's state line holds the lock the waiter parks on
    assert [thread.name for thread in dump.threads] == ["Thread-4", "kafka-scheduler-0"]
    assert [graph.thread(i).name for i in graph.blockers(0)] == ["kafka-scheduler-0"]


def test_a_monitor_wait_stated_in_the_state_line_is_a_blocked_entry(tmp_path: Path) -> None:
    # GIVEN a BLOCKED thread in the older rendering, its monitor in the state line, and the holder
    path = tmp_path / "blocked.txt"
    path.write_text(
        '"worker-1" - Thread t@12\n'
        "   java.lang.Thread.State: BLOCKED on java.lang.Object@5a2e4553 owned by: worker-0\n"
        "\tat com.example.Worker.run(Worker.java:10)\n\n"
        '"worker-0" - Thread t@11\n'
        "   java.lang.Thread.State: TIMED_WAITING\n"
        "\tat java.lang.Thread.sleep(Native Method)\n"
        "\tat com.example.Worker.run(Worker.java:12)\n"
        "\t- locked java.lang.Object@5a2e4553\n"
    )
    (dump,) = list(read_dumps(str(path)))
    # WHEN it is read
    event = dump.threads[0].waits_for()
    # THEN it waits to lock that monitor, which worker-0 holds
    assert dump.threads[0].status is ThreadStatus.BLOCKED
    assert event is not None and event.kind is LockEventKind.WAITING_TO_LOCK and event.lock_id == 0x5A2E4553
    assert [LockGraph(dump).thread(i).name for i in LockGraph(dump).blockers(0)] == ["worker-0"]
