"""`kafkadiag dump analyze`, `rules` and `explain` through the command line."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafkadiag.exitcodes import ExitCode

from ..rules.test_real_kafka_captures import fetcher_of
from .test_dump_parse_cli import run

# Apache Kafka 0.8.2.2's real old consumer (fixtures/capture_real_kafka.py): stalled, and caught up.
STALL = "real-old-consumer-stall-0.8.2.2"
HEALTHY = "real-old-consumer-healthy-0.8.2.2"
# The stall on two brokers after the leader of orders stopped: the leader finder waits behind the
# blocked fetcher's lock (KD204, a warning).
LEADER_MOVED = "real-old-consumer-leader-moved-0.8.2.2"
# Its name holds the consumer id the capture registered in ZooKeeper.
FETCHER = fetcher_of(STALL)


def analyze_json(*args: str) -> tuple[int, dict, str]:
    code, out, err = run(["dump", "analyze", "--format", "json", *args])
    return code, json.loads(out), err


def test_old_consumer_stall_names_culprit_and_starving_streams_in_json(captured: Path) -> None:
    code, report, err = analyze_json(str(captured / STALL / "jstack-l.txt"))
    assert code == ExitCode.FINDINGS, err
    assert report["schema"] == "kafkadiag.analysis" and report["version"] == 1
    by_rule = {finding["rule"]: finding for finding in report["findings"]}
    assert by_rule["KD201"]["threads"][0] == FETCHER
    assert by_rule["KD202"]["threads"] == ["order-worker-orders", "order-worker-shipments"]
    assert by_rule["KD203"]["threads"][0] == "order-worker-payments"
    assert "order-worker-payments" in report["verdict"] and FETCHER in report["verdict"]
    for finding in report["findings"]:
        assert set(finding) >= {
            "rule",
            "name",
            "severity",
            "title",
            "message",
            "threads",
            "evidence",
            "remedy",
        }
        assert finding["severity"] in ("error", "warning", "info")
        for item in finding["evidence"]:
            # Evidence quotes the input exactly, at the line it names.
            lines = (captured / STALL / "jstack-l.txt").read_text().split("\n")
            assert item["text"].strip() in lines[item["line"] - 1]


def test_old_consumer_stall_in_the_table_puts_the_verdict_first(captured: Path) -> None:
    code, out, err = run(["dump", "analyze", str(captured / STALL / "jstack-l.txt")])
    assert code == ExitCode.FINDINGS, err
    first_paragraph = out.split("\n\n")[0]
    assert first_paragraph.startswith("Stalled")
    assert "order-worker-payments" in first_paragraph.replace("\n", " ")
    assert "ERROR KD203 stream-not-draining" in out
    assert out.index("Findings") < out.index("Details")


def test_healthy_dump_exits_0_with_no_warning(captured: Path) -> None:
    code, report, err = analyze_json(str(captured / "healthy/jstack-l.txt"), "--fail-on", "warning")
    assert code == ExitCode.OK, (report["findings"], err)
    assert report["verdict"].startswith("No stall found")


def test_fail_on_sets_the_threshold(captured: Path) -> None:
    dump = str(captured / LEADER_MOVED / "jstack-l.txt")
    assert run(["dump", "analyze", "--select", "KD204", dump])[0] == ExitCode.OK  # a warning
    assert run(["dump", "analyze", "--select", "KD204", "--fail-on", "warning", dump])[0] == ExitCode.FINDINGS


def test_select_and_ignore(captured: Path) -> None:
    dump = str(captured / LEADER_MOVED / "jstack-l.txt")
    _, report, _ = analyze_json("--select", "KD2", "--ignore", "streams-starving", dump)
    assert {f["rule"] for f in report["findings"]} == {"KD201", "KD203", "KD204"}
    assert all(rule.startswith("KD2") for rule in report["rules_run"])


@pytest.mark.parametrize("option", ["--select", "--ignore"])
def test_a_rule_that_does_not_exist_is_a_usage_error_listing_the_rules(captured: Path, option: str) -> None:
    dump = str(captured / STALL / "jstack-l.txt")
    code, out, err = run(["dump", "analyze", option, "KD201", option, "KD999", dump])
    assert code == ExitCode.USAGE and out == ""
    assert "no rule is named KD999" in err and "KD201 (fetcher-blocked-on-full-queue)" in err
    code, out, err = run(["diagnose", "--from", dump, option, "no-such-rule"])
    assert code == ExitCode.USAGE and "no rule is named no-such-rule" in err


def test_rules_that_lack_input_are_listed_as_skipped(captured: Path) -> None:
    _, report, _ = analyze_json(str(captured / STALL / "jstack-l.txt"))
    skipped = {s["rule"]: s["missing"] for s in report["skipped_rules"]}
    assert skipped["KD501"] == ["several dumps of the same process"]
    assert "KD401" in skipped


def test_several_files_of_one_process_are_one_series(captured: Path) -> None:
    files = [str(captured / STALL / name) for name in ("jstack-l.txt", "jcmd-thread-print-l.txt")]
    _, report, _ = analyze_json(*files)
    assert len(report["series"]) == 1 and report["series"][0]["dumps"] == 2
    kd201 = next(f for f in report["findings"] if f["rule"] == "KD201")
    assert kd201["dumps"] == [1, 2]


def test_unreadable_input_exits_3(tmp_path: Path) -> None:
    code, out, err = run(["dump", "analyze", str(tmp_path / "absent.txt")])
    assert code == ExitCode.INPUT_UNREADABLE, (out, err)
    assert "no such file" in err


def test_rules_lists_the_catalogue_and_explain_prints_a_rule() -> None:
    code, out, _ = run(["rules"])
    assert code == ExitCode.OK and "KD201  fetcher-blocked-on-full-queue" in out
    code, out, _ = run(["explain", "KD203"])
    assert code == ExitCode.OK
    assert out.startswith("KD203 stream-not-draining") and "What to do:" in out
    code, out, _ = run(["explain", "stream-not-draining"])
    assert out.startswith("KD203")


@pytest.mark.parametrize("code_or_name", ["KD999", "no-such-rule"])
def test_explain_unknown_rule_is_a_usage_error(code_or_name: str) -> None:
    code, _, err = run(["explain", code_or_name])
    assert code == ExitCode.USAGE and "kafkadiag rules" in err


# Each reproducer's dump, the rule that explains it and the thread it must name first.
REPRODUCERS = [
    (f"{STALL}/jstack-l.txt", "KD201", FETCHER),
    ("deadlock/jstack-l.txt", "KD101", "deadlock-lock-A"),
    ("threadinfo-deadlock/threadinfo.log", "KD102", "ti-deadlock-A"),
    ("hidden-wait-deadlock/jstack-l.txt", "KD103", "future-waiter"),
    ("real-new-consumer-waits-workers-4.1.1/jstack-l.txt", "KD301", "fulfilment-poll"),
    ("real-new-consumer-handoff-full-4.1.1/jstack-l.txt", "KD302", "fulfilment-poll"),
    ("real-new-consumer-coordinator-unavailable-3.9.1/jstack-l.txt", "KD303", "fulfilment-poll"),
    ("real-new-consumer-coordinator-lost-4.1.1/jstack-l.txt", "KD304", "fulfilment-poll"),
    ("py-poll-queue-full/py-spy-dump.txt", "KD401", "kafka-poll-loop"),
    ("py-poll-waits-futures/py-spy-dump.txt", "KD402", "kafka-poll-loop"),
    ("py-heartbeat-blocked/py-spy-dump.txt", "KD403", "kafka-io-orders-service"),
    ("py-reentrant-lock/py-spy-dump-locals.txt", "KD405", "cache-loader"),
    ("py-queue-cycle/py-spy-dump-locals.txt", "KD104", "stage-a"),
]


@pytest.mark.parametrize(("fixture", "rule", "culprit"), REPRODUCERS, ids=[r[0] for r in REPRODUCERS])
def test_each_reproducer_names_its_culprit_in_json_and_table(
    captured: Path, fixture: str, rule: str, culprit: str
) -> None:
    code, report, err = analyze_json(str(captured / fixture))
    assert code == ExitCode.FINDINGS, err
    first = report["findings"][0]
    assert first["severity"] == "error"
    matching = [f for f in report["findings"] if f["rule"] == rule]
    assert matching and matching[0]["threads"][0] == culprit, [f["threads"] for f in matching]
    assert culprit in report["verdict"]
    code, table, _ = run(["dump", "analyze", str(captured / fixture)])
    assert code == ExitCode.FINDINGS
    verdict = table.split("\n\n")[0].replace("\n", " ")
    assert f" {rule} " in table and culprit in verdict


def test_warnings_only_exit_1_with_fail_on_warning(captured: Path) -> None:
    dump = str(captured / "lock-contention/jstack-l.txt")
    code, report, _ = analyze_json(dump)
    assert code == ExitCode.OK and report["worst_severity"] == "warning"
    assert report["findings"][0]["threads"][0] == "chain-c"
    assert analyze_json("--fail-on", "warning", dump)[0] == ExitCode.FINDINGS


@pytest.mark.parametrize(
    "fixture",
    [
        "healthy/jstack-l.txt",
        "healthy/kill3-stdout.log",
        f"{HEALTHY}/jstack-l.txt",
        f"{HEALTHY}/kill3-stdout.log",
        "py-healthy/py-spy-dump.txt",
        "py-healthy/py-spy-dump-locals.txt",
        "real-new-consumer-healthy-4.1.1/jstack-l.txt",
        "real-new-consumer-healthy-4.1.1-consumer-protocol/jstack-l.txt",
    ],
)
def test_healthy_consumers_produce_no_warning(captured: Path, fixture: str) -> None:
    code, report, err = analyze_json("--fail-on", "warning", str(captured / fixture))
    assert code == ExitCode.OK, [(f["rule"], f["message"]) for f in report["findings"]]


def test_a_dump_cut_short_never_reads_as_a_plain_no_stall(captured: Path, tmp_path: Path) -> None:
    # GIVEN a healthy dump cut in the middle of a thread, as a paste that hit a size limit does
    whole = (captured / HEALTHY / "jstack-l.txt").read_text()
    cut = tmp_path / "cut.txt"
    cut.write_text(whole[: len(whole) // 2])
    code, report, err = analyze_json(str(cut))
    # THEN nothing is claimed about what is missing: the caveat is in the verdict and the report
    assert code == ExitCode.OK, err
    assert report["verdict"].startswith("No stall found in what could be read")
    assert any("the input ends inside this dump" in caveat for caveat in report["caveats"])
    code, table, _ = run(["dump", "analyze", str(cut)])
    assert "Caveats" in table and "the last thread may be incomplete" in table
    # and the whole dump has none
    code, report, _ = analyze_json(str(captured / HEALTHY / "jstack-l.txt"))
    assert report["caveats"] == [] and report["verdict"].startswith("No stall found (")


@pytest.mark.parametrize("quote", ["", "> "])
def test_the_jvms_deadlock_report_on_its_own_is_a_dump(captured: Path, tmp_path: Path, quote: str) -> None:
    # GIVEN only the deadlock report of a captured dump, as bug reports paste it (also quoted)
    whole = (captured / "deadlock/jstack-l.txt").read_text()
    report_only = whole[whole.index("Found one Java-level deadlock:") :]
    pasted = tmp_path / "report.txt"
    pasted.write_text("".join(quote + line for line in report_only.splitlines(keepends=True)))
    code, report, err = analyze_json(str(pasted))
    # THEN both cycles are findings with their stacks, and the caveat says what is missing
    assert code == ExitCode.FINDINGS, err
    cycles = sorted(tuple(f["threads"]) for f in report["findings"] if f["rule"] == "KD101")
    assert cycles == [("deadlock-lock-A", "deadlock-lock-B"), ("deadlock-monitor-A", "deadlock-monitor-B")]
    assert report["series"][0]["threads"] == 4
    assert any("only the JVM's deadlock report" in caveat for caveat in report["caveats"])


def test_the_stacks_half_of_a_deadlock_report_is_a_dump(captured: Path, tmp_path: Path) -> None:
    # GIVEN only the "Java stack information" part of a captured deadlock report, its cycle left out
    # (as SPARK-11104's reporter pasted it)
    whole = (captured / "deadlock/jstack-l.txt").read_text()
    stacks = whole[whole.index("Java stack information") :]
    stacks = stacks[: stacks.index("Found one Java-level deadlock:")]
    pasted = tmp_path / "stacks.txt"
    pasted.write_text("{code}\n" + stacks + "{code}\n")
    code, report, err = analyze_json(str(pasted))
    # THEN the cycle is read from the stacks' lock lines, with the same caveat as the whole report
    assert code == ExitCode.FINDINGS, err
    (cycle,) = [f for f in report["findings"] if f["rule"] in ("KD101", "KD102")]
    assert cycle["rule"] == "KD102" and len(cycle["threads"]) == 2
    assert report["series"][0]["threads"] == 2
    assert any("only the JVM's deadlock report" in caveat for caveat in report["caveats"])
