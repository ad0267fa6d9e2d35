"""KD103 on joins: System.exit joining a shutdown hook, and what a dump shows of a join's target."""

from __future__ import annotations

import pytest

from kafkadiag.dumps import read_dumps
from kafkadiag.rules.base import Finding
from kafkadiag.rules.engine import analyze

from ..conftest import CAPTURED


def kd103(relative: str) -> dict[str, Finding]:
    report = analyze(list(read_dumps(str(CAPTURED / relative))), select=["KD103"])
    return {finding.threads[0]: finding for finding in report.findings}


@pytest.mark.parametrize(
    "name", ["jstack-l.txt", "jstack.txt", "jcmd-thread-print-l.txt", "kill3-stdout.log"]
)
def test_system_exit_holding_the_monitor_a_hook_needs_is_a_certain_deadlock(name: str) -> None:
    """GIVEN fatal-error-handler in System.exit holding the Journal monitor, joining a hook of class
    JournalFlushHook that is BLOCKED on that monitor, THEN the finding names the exit, the hook as
    the joined thread (the only one running JournalFlushHook.run), and calls it a deadlock."""
    finding = kd103(f"shutdown-hook-deadlock/{name}")["fatal-error-handler"]
    assert finding.threads == ("fatal-error-handler", "journal-flush-hook")
    assert finding.details["shutdown_hooks"] is True
    assert finding.details["joined"] == ["journal-flush-hook"]
    assert finding.details["deadlock_certain"] is True
    assert "called System.exit from com.example.ShutdownHookDeadlock.failFatally" in finding.message
    assert any("java.lang.System.exit" in evidence.text for evidence in finding.evidence)


def test_a_join_on_a_plain_thread_says_the_dump_cannot_name_its_target() -> None:
    """A java.lang.Thread (not a subclass) gives no identity: the link stays the shared lock."""
    finding = kd103("hidden-wait-deadlock/jstack-l.txt")["join-waiter"]
    assert finding.details["joined"] == []
    assert finding.details["deadlock_certain"] is False
    assert "cannot show which thread a join waits for" in finding.message
    assert finding.details["shutdown_hooks"] is False


def test_a_completable_future_join_is_named_as_a_join_not_as_its_inner_get() -> None:
    """JDK 17 waits in CompletableFuture.waitingGet under join: the finding names the call made."""
    finding = kd103("completable-join-deadlock/jstack-l.txt")["catalog-refresher"]
    assert finding.details["waits_in"] == "CompletableFuture.join"
    assert finding.threads == ("catalog-refresher", "catalog-loader-1")
