"""The rule catalogue over other projects' real dumps: no rule crashes, and the lock relations
those projects assert come out as findings."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkadiag.dumps import read_dumps
from kafkadiag.errors import NoDumpFoundError
from kafkadiag.rules.engine import analyze

from ..conftest import CORPUS

ALL = sorted(list(CORPUS.glob("*/*.txt")) + list(CORPUS.glob("dumpling/*/*.log")))


@pytest.mark.parametrize("path", ALL, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_rule_crashes_on_any_corpus_dump(path: Path, corpus: Path) -> None:
    try:
        report = analyze(read_dumps(str(path)))
    except NoDumpFoundError:
        assert path.name == "no-threads.log"
        return
    crashed = [finding.message for finding in report.findings if finding.rule == "KD001"]
    assert not crashed


def findings(corpus: Path, relative: str, rule: str) -> list:
    report = analyze(read_dumps(str(corpus / relative)), select=[rule])
    return [finding for finding in report.findings if finding.rule == rule]


def test_monitor_deadlock_without_a_jvm_report_is_found(corpus: Path) -> None:
    (finding,) = findings(corpus, "dumpling/jstack/deadlock-and-friends.log", "KD102")
    assert {name.rsplit("-", 1)[1] for name in finding.threads} == {"50", "103"}


def test_synchronizer_deadlock_is_found(corpus: Path) -> None:
    (finding,) = findings(corpus, "dumpling/query/synchronizer_deadlock.log", "KD102")
    assert "Executing labels(hudson.slaves.NodeProvisionerTest)" in finding.threads
    assert any(name.startswith("AtmostOneTaskExecutor") for name in finding.threads)


def test_jvm_report_is_not_reported_twice(corpus: Path) -> None:
    assert findings(corpus, "dumpling/jstack/deadlock.log", "KD101")
    assert not findings(corpus, "dumpling/jstack/deadlock.log", "KD102")


def test_producer_blocking_three_consumers_is_contention(corpus: Path) -> None:
    (finding,) = findings(corpus, "dumpling/jstack/contention.log", "KD106")
    assert finding.threads[0] == "producer"
    assert set(finding.threads[1:]) == {"consumerA", "consumerB", "consumerC"}


def test_blocking_chain_ends_at_its_root(corpus: Path) -> None:
    (finding,) = findings(corpus, "dumpling/jstack/blocking-chain.log", "KD105")
    assert finding.threads[0] == "blocking0"
    assert "blocked0" in finding.threads
