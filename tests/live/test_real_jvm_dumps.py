"""Real JVMs, dumped for real with jstack -l, jcmd Thread.print -l and kill -3, then parsed.

The old consumer is Apache Kafka 0.8.2.2's own, run by fixtures/capture_real_kafka.py on a cluster
of two brokers: stalled, then the broker leading orders stopped, so that the leader finder waits
for the blocked fetcher's partition-map lock (scenario real-old-consumer-leader-moved-0.8.2.2).
"""

from __future__ import annotations

import subprocess
from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

import psutil
import pytest

from kafkadiag.dumps import read_dumps
from kafkadiag.lockgraph import LockGraph
from kafkadiag.model import LockEventKind, ThreadDump, ThreadStatus

LEADER_MOVED = "real-old-consumer-leader-moved-0.8.2.2"


def dump_with(tool: list[str], pid: int, tmp_path: Path, name: str) -> ThreadDump:
    output = subprocess.run(
        [*tool, str(pid)] if tool[0] != "jcmd" else [tool[0], str(pid), *tool[1:]],
        capture_output=True,
        timeout=60,
        check=True,
    ).stdout
    path = tmp_path / name
    path.write_bytes(output)
    (dump,) = list(read_dumps(str(path)))
    return dump


@pytest.fixture(scope="module")
def stalled_consumer(
    real_capture_module: ModuleType, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[Any, str]]:
    """The running reproducer and its consumer id (the one ZooKeeper holds)."""
    real = real_capture_module
    with real.running(real.SCENARIOS[LEADER_MOVED], tmp_path_factory.mktemp("leader-moved")) as run:
        consumer_id = real.consumer_id_of(real.group_state(run.broker.zookeeper))
        yield run.reproducer, consumer_id


@pytest.mark.parametrize("tool", [["jstack", "-l"], ["jcmd", "Thread.print", "-l"]], ids=["jstack-l", "jcmd"])
def test_old_consumer_stall_is_parsed_with_its_lock_relations(stalled_consumer, tmp_path: Path, tool) -> None:
    # GIVEN Apache Kafka's old consumer whose fetcher is stuck on a full chunk queue, and whose
    # leader finder, after a leader moved, waits for the fetcher's partition-map lock
    reproducer, consumer_id = stalled_consumer
    fetcher_name = f"ConsumerFetcherThread-{consumer_id}-0-0"
    # WHEN it is dumped with a real JDK tool and parsed
    dump = dump_with(tool, reproducer.process.pid, tmp_path, "dump.txt")
    graph = LockGraph(dump)
    fetcher = dump.thread_named(fetcher_name)
    assert fetcher is not None, [t.name for t in dump.threads]
    # THEN the fetcher is parked in LinkedBlockingQueue.put under PartitionTopicInfo.enqueue ...
    assert fetcher.status is ThreadStatus.PARKED
    functions = [frame.function for frame in fetcher.frames]
    assert "java.util.concurrent.LinkedBlockingQueue.put" in functions
    assert functions.index("java.util.concurrent.LinkedBlockingQueue.put") < functions.index(
        "kafka.consumer.PartitionTopicInfo.enqueue"
    )
    assert fetcher.waits_for().kind is LockEventKind.PARKING
    assert fetcher.waits_for().lock_class.endswith("AbstractQueuedSynchronizer$ConditionObject")
    # ... holding the partition-map ReentrantLock that the leader finder is parked on
    assert any(lock.lock_class.endswith("ReentrantLock$NonfairSync") for lock in fetcher.held_locks())
    leader_finder_index = graph.index_of(f"{consumer_id}-leader-finder-thread")
    assert [graph.thread(i).name for i in graph.blockers(leader_finder_index)] == [fetcher_name]
    # ... and the other topics' workers starve in take under ConsumerIterator.makeNext
    for stream in ("order-worker-orders", "order-worker-shipments"):
        thread = dump.thread_named(stream)
        assert thread is not None and thread.status is ThreadStatus.PARKED
        names = [frame.function for frame in thread.frames]
        assert "java.util.concurrent.LinkedBlockingQueue.take" in names
        assert "kafka.consumer.ConsumerIterator.makeNext" in names
    assert dump.has_lock_data and dump.unparsed_count == 0


def test_nids_are_the_jvm_threads_linux_tids(stalled_consumer, tmp_path: Path) -> None:
    reproducer, _ = stalled_consumer
    dump = dump_with(["jstack", "-l"], reproducer.process.pid, tmp_path, "dump.txt")
    tids = {thread.id for thread in psutil.Process(reproducer.process.pid).threads()}
    nids = {thread.nid for thread in dump.threads if thread.nid is not None}
    assert len(nids) == len(dump.threads)
    assert nids <= tids


def test_kill_3_output_in_stdout_splits_into_its_dumps(
    stalled_consumer, capture_module: ModuleType, tmp_path: Path
) -> None:
    # GIVEN a JVM whose stdout (with the program's own output) receives three SIGQUIT dumps
    reproducer, consumer_id = stalled_consumer
    data = capture_module.sigquit(reproducer.process, reproducer.stdout, 3, 0.5)
    log = tmp_path / "stdout.log"
    log.write_bytes(data)
    # WHEN parsed
    dumps = list(read_dumps(str(log)))
    # THEN exactly three dumps, each with the same threads, none with unparsed lines
    assert len(dumps) == 3
    assert len({tuple(sorted(t.name for t in d.threads)) for d in dumps}) == 1
    assert all(f"ConsumerFetcherThread-{consumer_id}-0-0" in [t.name for t in d.threads] for d in dumps)
    assert [d.unparsed_count for d in dumps] == [0, 0, 0]
    # the Heap summary after each dump and the program's own lines are not threads
    assert all(not t.name.startswith(("Heap", "READY")) for d in dumps for t in d.threads)


def test_deadlocks_are_reported_by_the_jvm_and_found_in_the_lock_graph(reproducers, tmp_path: Path) -> None:
    process, _, _ = reproducers.java_run("deadlock", "live", [])
    try:
        dump = dump_with(["jstack", "-l"], process.pid, tmp_path, "dump.txt")
    finally:
        reproducers.targets.stop(process)
    graph = LockGraph(dump)
    jvm_cycles = {frozenset(link.thread_name for link in cycle) for cycle in dump.jvm_deadlocks}
    graph_cycles = {frozenset(graph.thread(i).name for i in cycle) for cycle in graph.cycles()}
    expected = {
        frozenset({"deadlock-monitor-A", "deadlock-monitor-B"}),
        frozenset({"deadlock-lock-A", "deadlock-lock-B"}),
    }
    assert jvm_cycles == expected
    assert graph_cycles == expected
    behind = graph.index_of("blocked-behind-A")
    assert [graph.thread(i).name for i in graph.blockers(behind)] == ["deadlock-monitor-A"]
    # The report's "Java stack information" part adds no threads.
    assert len([t for t in dump.threads if t.name == "deadlock-monitor-A"]) == 1


def test_threadinfo_text_logged_by_an_application(reproducers, tmp_path: Path) -> None:
    # GIVEN a real JVM that logs ThreadMXBean.dumpAllThreads() through ThreadInfo.toString(),
    # followed by its own log output
    import kafkadiag_fixture_capture as capture

    argv = [reproducers.java, "-cp", str(reproducers.classes), "com.example.ThreadInfoLogger"]
    stdout_path = tmp_path / "app.log"
    process = reproducers.targets.start(argv, stdout_path, tmp_path)
    try:
        capture.wait_ready(process, stdout_path)
    finally:
        reproducers.targets.stop(process)
    # WHEN the log is parsed
    (dump,) = list(read_dumps(str(stdout_path)))
    graph = LockGraph(dump)
    # THEN the threads, their ids and the lock relations are understood, and "READY" is not
    # counted as part of the dump
    assert dump.unparsed_count == 0
    assert dump.thread_named("monitor-waiter").status is ThreadStatus.BLOCKED
    assert dump.thread_named("lock-waiter").status is ThreadStatus.PARKED
    assert dump.thread_named("main").java_id == 1
    assert [graph.thread(i).name for i in graph.blockers(graph.index_of("monitor-waiter"))] == [
        "monitor-holder"
    ]
    assert [graph.thread(i).name for i in graph.blockers(graph.index_of("lock-waiter"))] == ["lock-holder"]
    main_frame = dump.thread_named("main").frames[-1]
    assert main_frame.function == "com.example.ThreadInfoLogger.main" and main_frame.module == "app"
