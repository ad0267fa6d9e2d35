"""`jhsdb jstack` (the serviceability agent, JDK 8's `jstack -F`) is a whole dump, read as jstack's.

GIVEN Apache Kafka 0.8.2.2's real old-consumer stall captured with `jhsdb jstack --locks` and
`--mixed` beside `jstack -l` of the same JVM WHEN kafkadiag reads and analyses them THEN the agent's
preamble opens the dump
(its pid, no "fragment" or "input ends inside" caveat), its flush-left synchronizer sections and
internal class names (java/util/...) are read, --mixed's native frames are left out with a note, and
the --locks dump gives the findings jstack -l gives.
"""

from __future__ import annotations

from pathlib import Path

from kafkadiag.dumps import read_dumps
from kafkadiag.dumps.hotspot import MIXED_NOTE
from kafkadiag.model import ThreadState, ThreadStatus
from kafkadiag.rules.engine import analyze

from ..conftest import CAPTURED

STALL = CAPTURED / "real-old-consumer-stall-0.8.2.2"
FETCHER_PREFIX = "ConsumerFetcherThread-"


def only_dump(name: str):  # type: ignore[no-untyped-def]
    (dump,) = list(read_dumps(str(STALL / name)))
    return dump


def test_the_agents_preamble_opens_a_whole_dump() -> None:
    for name in ("jhsdb-jstack-locks.txt", "jhsdb-jstack-mixed.txt"):
        dump = only_dump(name)
        assert dump.producer == "jhsdb" and dump.pid is not None and dump.line_no == 1
        assert not dump.truncated and dump.unparsed_count == 0
        assert not any("fragment" in note or "excerpts" in note for note in dump.notes), dump.notes
    assert MIXED_NOTE in only_dump("jhsdb-jstack-mixed.txt").notes
    assert MIXED_NOTE not in only_dump("jhsdb-jstack-locks.txt").notes


def test_locks_and_synchronizers_read_as_jstack_l_shows_them() -> None:
    agent, jstack = only_dump("jhsdb-jstack-locks.txt"), only_dump("jstack-l.txt")
    assert agent.has_lock_data
    (fetcher,) = [t for t in agent.threads if t.name.startswith(FETCHER_PREFIX)]
    held = [lock.lock_class for lock in fetcher.held_synchronizers or ()]
    assert held == ["java.util.concurrent.locks.ReentrantLock$NonfairSync"]  # not java/util/...
    (same,) = [t for t in jstack.threads if t.name.startswith(FETCHER_PREFIX)]
    assert fetcher.status is same.status
    assert [event.kind for event in fetcher.lock_events] == [event.kind for event in same.lock_events]


def test_the_agents_dump_gives_jstack_ls_findings() -> None:
    def findings(name: str) -> list[tuple[str, tuple[str, ...]]]:
        report = analyze(list(read_dumps(str(STALL / name))))
        return sorted((finding.rule, finding.threads) for finding in report.findings)

    assert findings("jhsdb-jstack-locks.txt") == findings("jstack-l.txt")


def test_the_legacy_agents_vm_states_read_as_java_states() -> None:
    """JDK 5 to 8's `jstack -F` (samurai's Apple JDK 5 file): `Thread t@60675: (state = BLOCKED)`
    names the VM's state, BLOCKED for any thread blocked in the VM. The top frame tells a wait, a
    sleep or a park; a thread blocked at any other Java frame is entering a monitor."""
    path = Path(__file__).parent / "public" / "samurai-apple-1.5.0_13-jstack-agent.dmp"
    dumps = list(read_dumps(str(path)))
    assert [len(dump.threads) for dump in dumps] == [7, 7, 7]
    assert all(dump.producer == "jhsdb" and dump.unparsed_count == 0 for dump in dumps)
    states = {t.name: (t.state, t.status) for t in dumps[0].threads}
    assert states["Thread 60675"] == (ThreadState.BLOCKED, ThreadStatus.BLOCKED)  # DeadLockingThread.run
    assert states["Thread 66563"] == (ThreadState.WAITING, ThreadStatus.IN_OBJECT_WAIT)  # the Finalizer
    assert states["Thread 67075"] == (ThreadState.TIMED_WAITING, ThreadStatus.SLEEPING)  # main, in sleep
    assert dumps[0].threads[0].fields.nid == 60675
