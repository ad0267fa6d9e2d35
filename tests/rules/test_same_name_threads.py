"""Threads that share a name are distinct threads, and findings say which.

The same-name-threads capture has five threads all named "worker": two deadlocked on two monitors
(the JVM reports it) and three in a blocking chain. GIVEN that dump, WHEN the rules run, THEN the
findings name every one of the five, each told apart by its nid, and never one thread twice.
"""

from __future__ import annotations

from kafkadiag.dumps import read_dumps
from kafkadiag.model import ThreadDump
from kafkadiag.rules.engine import analyze

from ..conftest import CAPTURED

FIXTURE = CAPTURED / "same-name-threads"


def worker_labels(dump: ThreadDump) -> set[str]:
    return {f"worker (nid 0x{thread.nid:x})" for thread in dump.threads if thread.name == "worker"}


def test_the_capture_has_five_workers_with_distinct_nids() -> None:
    (dump,) = read_dumps(str(FIXTURE / "jstack-l.txt"))
    assert len(worker_labels(dump)) == 5


def test_the_deadlock_and_the_chain_name_all_five_workers_by_nid() -> None:
    for name in ("jstack-l.txt", "jstack.txt", "jcmd-thread-print-l.txt"):
        (dump,) = read_dumps(str(FIXTURE / name))
        report = analyze([dump])
        deadlock = [finding for finding in report.findings if finding.rule == "KD101"]
        chain = [finding for finding in report.findings if finding.rule == "KD105"]
        assert len(deadlock) == 1 and len(chain) == 1, [(f.rule, f.threads) for f in report.findings]
        assert len(set(deadlock[0].threads)) == 2, deadlock[0].threads
        assert len(set(chain[0].threads)) == 3, chain[0].threads
        assert set(deadlock[0].threads) | set(chain[0].threads) == worker_labels(dump), name
        assert "worker waits for worker" not in deadlock[0].message


def test_the_jvm_report_links_each_worker_to_its_own_stack() -> None:
    """KD101 quotes the stack of each deadlocked worker, not the first "worker" twice."""
    (dump,) = read_dumps(str(FIXTURE / "jstack-l.txt"))
    (finding,) = [f for f in analyze([dump]).findings if f.rule == "KD101"]
    # The threads' own headers, not the report's `"worker":` lines (quoted as well)
    headers = [evidence.line_no for evidence in finding.evidence if evidence.text.startswith('"worker" ')]
    assert len(set(headers)) == 2, finding.evidence


def test_threads_not_moving_across_dumps_are_told_apart() -> None:
    dumps = list(read_dumps(str(FIXTURE / "kill3-stdout.log")))
    report = analyze(dumps, select=["KD501"])
    named = [thread for finding in report.findings for thread in finding.threads]
    # The four BLOCKED workers did not move; the sleeping holder is not stuck (KD501 skips sleeps).
    assert len(named) == 4 and len(set(named)) == 4, named
    assert set(named) <= worker_labels(dumps[-1])


def test_findings_are_the_same_on_every_run() -> None:
    """Read and analysed twice (fresh objects each time): the same findings, threads, order."""

    def run() -> list[tuple[str, tuple[str, ...], str]]:
        dumps = list(read_dumps(str(FIXTURE / "kill3-stdout.log")))
        return [(f.rule, f.threads, f.message) for f in analyze(dumps).findings]

    assert run() == run()
