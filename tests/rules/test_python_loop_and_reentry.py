"""The event-loop rule (KD406) and the lock rules without --locals (KD404, KD405) on real captures:
what the findings say, how sure they are, and that healthy Python processes stay clean."""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkadiag.dumps import read_dumps
from kafkadiag.errors import NoDumpFoundError
from kafkadiag.rules.base import Finding, Severity
from kafkadiag.rules.engine import analyze

from ..conftest import CAPTURED

NEW_RULES = ["KD404", "KD405", "KD406"]
HEALTHY = sorted(
    [
        *CAPTURED.glob("py-healthy/*"),
        *CAPTURED.glob("py-asyncio-healthy/*"),
        *CAPTURED.glob("py-asyncio-nested-idle/*"),
        *CAPTURED.glob("py-gevent-healthy/*"),
    ]
)


def findings(relative: str, rule: str) -> list[Finding]:
    report = analyze(read_dumps(str(CAPTURED / relative)), select=[rule])
    return [finding for finding in report.findings if finding.rule == rule]


@pytest.mark.parametrize("path", HEALTHY, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_healthy_python_processes_get_no_finding_from_any_rule(path: Path) -> None:
    # GIVEN a consumer idle in its selector and queues, or an asyncio loop idle with its blocking
    # work in an executor thread
    report = analyze(read_dumps(str(path)))
    # THEN no rule reports anything
    assert not report.findings, [f.message for f in report.findings]


def test_the_new_rules_report_nothing_on_the_shared_corpus(corpus: Path) -> None:
    paths = sorted([*corpus.glob("*/*.txt"), *corpus.glob("dumpling/*/*.log")])
    assert paths
    for path in paths:
        try:
            report = analyze(read_dumps(str(path)), select=NEW_RULES)
        except NoDumpFoundError:
            continue
        assert not report.findings, (path, [f.message for f in report.findings])


@pytest.mark.parametrize(
    ("relative", "call", "caller", "callback"),
    [
        (
            "py-asyncio-blocking-sleep/py-spy-dump-native.txt",
            "time.sleep (time_sleep)",
            "deliver (asyncio_blocking_sleep.py:",
            "main_async (asyncio_blocking_sleep.py:",
        ),
        (
            "py-asyncio-blocking-recv/py-spy-dump-native.txt",
            "socket.recv (sock_recv)",
            "PricingClient.quote (asyncio_blocking_recv.py:",
            "consume (asyncio_blocking_recv.py:",
        ),
        (
            "py-gevent-blocking-recv/py-spy-dump-native.txt",
            "socket.recv (sock_recv)",
            "PricingClient.quote (gevent_blocking_recv.py:",
            "handle_records (gevent_blocking_recv.py:",
        ),
        (
            "py-twisted-blocking-subprocess/py-spy-dump-native.txt",
            "Popen.wait (subprocess.py:",
            "convert_batch (twisted_blocking_subprocess.py:",
            "convert_batch (twisted_blocking_subprocess.py:",
        ),
        (
            "py-tornado-blocking-http/py-spy-dump.txt",
            "HTTPConnection.getresponse (http/client.py:",
            "InventoryClient.reserve (tornado_blocking_http.py:",
            "process_records (tornado_blocking_http.py:",
        ),
    ],
)
def test_blocked_loop_names_the_call_the_code_that_made_it_and_the_coroutine(
    relative: str, call: str, caller: str, callback: str
) -> None:
    (finding,) = findings(relative, "KD406")
    assert finding.details["blocking_call"].startswith(call)
    assert str(finding.details["caller"]).startswith(caller)
    assert str(finding.details["callback"]).startswith(callback)
    assert "every other task and callback of this loop is stalled" in finding.message
    assert "aiokafka" in finding.message
    # the quoted lines are the dump's own: the loop's dispatch frame among them
    dispatch = (
        "Handle._run (asyncio/events.py:",
        "run (gevent/_gevent_cgreenlet",
        "ReactorBase.runUntilCurrent (twisted/internet/base.py:",
    )
    assert any(evidence.text.startswith(dispatch) for evidence in finding.evidence)


@pytest.mark.parametrize(
    ("relative", "loop"),
    [
        ("py-tornado-blocking-http/py-spy-dump.txt", "tornado"),
        ("py-twisted-blocking-subprocess/py-spy-dump.txt", "Twisted"),
        ("py-gevent-blocking-recv/py-spy-dump-native.txt", "gevent"),
        ("py310-asyncio-blocking-recv/py-spy-dump.txt", "asyncio"),
    ],
)
def test_the_finding_names_the_framework_that_runs_the_loop(relative: str, loop: str) -> None:
    (finding,) = findings(relative, "KD406")
    assert finding.details["loop"] == loop
    assert f"runs the {loop} event loop" in finding.message


@pytest.mark.parametrize(
    "relative", ["py-asyncio-blocking-sleep/py-spy-dump.txt", "py-asyncio-blocking-recv/py-spy-dump.txt"]
)
def test_an_excerpt_without_the_dispatch_frame_still_shows_the_loop_blocked(
    relative: str, tmp_path: Path
) -> None:
    # GIVEN a blocked asyncio loop whose excerpt goes from the callback straight to _run_once (a
    # reporter left Handle._run out, as one would a frame that says nothing to them)
    text = (CAPTURED / relative).read_text(encoding="utf-8")
    lines = [
        line for line in text.split("\n") if not line.lstrip().startswith("Handle._run (asyncio/events.py:")
    ]
    assert len(lines) < len(text.split("\n"))
    path = tmp_path / "excerpt.txt"
    path.write_text("\n".join(lines))
    # WHEN it is analysed THEN the loop's callback is still the code blocking the loop
    report = analyze(read_dumps(str(path)), select=["KD406"])
    (excerpt,) = report.findings
    (whole,) = findings(relative, "KD406")
    assert excerpt.threads == whole.threads
    assert excerpt.details["blocking_call"] == whole.details["blocking_call"]
    assert excerpt.details["loop"] == "asyncio"


def test_a_call_into_c_without_native_frames_is_a_warning_that_says_what_is_missing() -> None:
    (plain,) = findings("py-asyncio-blocking-sleep/py-spy-dump.txt", "KD406")
    (native,) = findings("py-asyncio-blocking-sleep/py-spy-dump-native.txt", "KD406")
    assert plain.severity is Severity.WARNING and native.severity is Severity.ERROR
    assert "--native" in plain.message and "GIL" in plain.message


@pytest.mark.parametrize(
    ("variant", "shown_by", "severity"),
    [
        ("py-spy-dump.txt", "its name", Severity.WARNING),
        ("py-spy-dump.json", "its name", Severity.WARNING),
        ("py-spy-dump-native.txt", "--native: called from sock_call_ex", Severity.WARNING),
        ("py-spy-dump-locals.txt", "--locals", Severity.ERROR),
    ],
)
def test_signal_handler_reentering_the_logging_handler_lock(
    variant: str, shown_by: str, severity: Severity
) -> None:
    # GIVEN SIGTERM's handler logging while the main thread is inside AuditHandler.emit
    (finding,) = findings(f"py-signal-reentry/{variant}", "KD405")
    # THEN the finding names the handler, how it is known to be one, and how sure it is
    assert finding.threads == ("MainThread",)
    assert finding.severity is severity
    assert "on_sigterm" in finding.message
    if severity is Severity.WARNING:
        assert finding.details["handler"] == "on_sigterm"
        assert str(finding.details["shown_by"]).startswith(shown_by)
        assert "capture with --locals to confirm" in finding.message
    else:
        assert "re-entered through the signal handler on_sigterm" in finding.message


def test_synchronous_reentry_without_locals_is_not_guessed() -> None:
    # Cache.get twice on one stack may be two objects with two locks: only --locals can tell.
    assert not findings("py-reentrant-lock/py-spy-dump-native.txt", "KD405")
    assert findings("py-reentrant-lock/py-spy-dump-locals.txt", "KD405")


def test_lock_inversion_without_locals_needs_native_frames_and_says_it_is_unconfirmed() -> None:
    report = analyze(read_dumps(str(CAPTURED / "py-lock-inversion/py-spy-dump.txt")), select=["KD404"])
    assert not report.findings
    assert [skipped.code for skipped in report.skipped] == ["KD404"]
    (finding,) = findings("py-lock-inversion/py-spy-dump-native.txt", "KD404")
    assert finding.severity is Severity.WARNING
    assert set(finding.threads) == {"transfer-a-to-b", "transfer-b-to-a"}
    assert "capture with --locals to confirm" in finding.message


@pytest.mark.parametrize(
    "relative",
    [
        "py-asyncio-blocking-recv/py-spy-dump.json",
        "py-signal-reentry/py-spy-dump-native.txt",
        "py-lock-inversion/py-spy-dump-native.txt",
    ],
)
def test_findings_are_the_same_on_every_run(relative: str) -> None:
    runs = [analyze(read_dumps(str(CAPTURED / relative)), select=NEW_RULES).findings for _ in range(3)]
    assert runs[0] and runs[0] == runs[1] == runs[2]
