"""The JVM's deadlock report pasted without its "Java stack information ..." heading.

KAFKA-2253's reporter pasted the cycle and then the three stacks, leaving out the heading (and its
underline) that separates them. A thread the cycle already listed, named again, can only be the
start of its stack: the stacks are the dump's threads, as they are when the heading is there.
"""

from __future__ import annotations

from pathlib import Path

from kafkadiag.dumps import read_dumps
from kafkadiag.lockgraph import LockGraph

KAFKA_2253 = Path(__file__).resolve().parents[1] / "wild" / "dumps" / "kafka-2253-purgatory-deadlock.txt"


def test_stacks_after_the_cycle_are_the_threads_without_the_heading() -> None:
    # GIVEN the report pasted as "Found one Java-level deadlock", the cycle, a blank line, the stacks
    # WHEN it is read
    (dump,) = list(read_dumps(str(KAFKA_2253)))
    # THEN the cycle is the JVM's deadlock and each listed thread has its stack
    (cycle,) = dump.jvm_deadlocks
    assert [link.thread_name for link in cycle] == [
        "kafka-request-handler-a",
        "ExpirationReaper-xyz",
        "kafka-request-handler-b",
    ]
    threads = {thread.name: thread for thread in dump.threads}
    assert sorted(threads) == sorted(link.thread_name for link in cycle)
    reaper = threads["ExpirationReaper-xyz"]
    assert reaper.frames[0].text.startswith("kafka.server.DelayedOperationPurgatory$Watchers.watched")
    assert reaper.frames[-1].text.startswith("kafka.utils.ShutdownableThread.run")
    assert all(len(thread.frames) > 5 for thread in threads.values())


def test_the_stacks_alone_from_their_first_thread_are_the_dump(tmp_path: Path, captured: Path) -> None:
    # GIVEN the stacks of a captured deadlock report, copied from the first thread's `"name":` line
    # to the blank line after the last stack: no cycle above them, no "Java stack information" heading
    lines = (captured / "deadlock" / "jstack-l.txt").read_text(encoding="utf-8").split("\n")
    heading = lines.index("Java stack information for the threads listed above:")
    first = heading + 2
    assert lines[first] == '"deadlock-monitor-A":'
    end = lines.index("", first)
    path = tmp_path / "stacks.txt"
    path.write_text("\n".join(lines[first:end]) + "\n", encoding="utf-8")
    # WHEN it is read
    (dump,) = read_dumps(str(path))
    # THEN its threads are the report's, with their stacks; the cycle is in their lock lines; and
    # the dump says that it is a deadlock report's part only
    assert [t.name for t in dump.threads] == ["deadlock-monitor-A", "deadlock-monitor-B"]
    assert [len(t.frames) for t in dump.threads] == [4, 4]
    graph = LockGraph(dump)
    assert [sorted(dump.threads[i].name for i in cycle) for cycle in graph.cycles()] == [
        ["deadlock-monitor-A", "deadlock-monitor-B"]
    ]
    assert any("only the JVM's deadlock report" in note for note in dump.notes)
    assert dump.unparsed_count == 0
