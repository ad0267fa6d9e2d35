"""`kafkadiag check`: lag thresholds for CI and cron. Exit 0 healthy, 1 unhealthy, 3 not checked.

A threshold violated anywhere makes the result unhealthy (1) even when something else could not
be read; only when nothing is violated does a gap make it "not checked" (3). Without any threshold
the groups' Burrow statuses decide (STOP, STALL, REWIND, ERR are unhealthy), which one sample
cannot tell: that is "not checked" too.
"""

from __future__ import annotations

import os
import sys

from kafkadiag import boundedjson
from kafkadiag.collect.gather import Collector, LagTarget
from kafkadiag.collect.lagread import take_samples
from kafkadiag.console import warn
from kafkadiag.errors import InputUnreadableError, UsageError
from kafkadiag.exitcodes import ExitCode
from kafkadiag.lag.check import (
    HEALTHY,
    ONE_SAMPLE,
    UNHEALTHY,
    CheckPolicy,
    CheckResult,
    Thresholds,
    check_report,
    policy_from_document,
)
from kafkadiag.lag.window import evaluate_window
from kafkadiag.report.output import report_stream

CHECK_FORMATS = ("text", "json", "junit")


def load_policy(path: str) -> CheckPolicy:
    """A TOML or JSON file with [defaults] and [[rule]] tables (docs/lag.md)."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read()
    except OSError as error:
        raise InputUnreadableError(
            f"cannot read --config {path}: {error.strerror or error}",
            help_text="Check the path of the check configuration file.",
        ) from None
    try:
        if path.endswith(".json"):
            document = boundedjson.loads(raw.decode("utf-8"))
        else:
            if sys.version_info >= (3, 11):
                import tomllib
            else:  # the same parser, before it joined the standard library
                import tomli as tomllib
            document = tomllib.loads(raw.decode("utf-8"))
        if not isinstance(document, dict):
            raise ValueError("the configuration must be a table of [defaults] and [[rule]] entries")
        return policy_from_document(document)
    except (ValueError, UnicodeDecodeError) as error:
        raise UsageError(
            f"--config {path}: {error}",
            help_text="See docs/lag.md, section 'kafkadiag check', for the format.",
        ) from None


def with_overrides(policy: CheckPolicy, overrides: Thresholds, fields: tuple[str, ...]) -> CheckPolicy:
    return CheckPolicy(
        defaults=policy.defaults, rules=policy.rules, overrides=overrides, override_fields=fields
    )


def _unchecked_help(result: CheckResult) -> str:
    if any(ONE_SAMPLE in verdict.unchecked for verdict in result.verdicts):
        # Without a threshold only Burrow's status can fail a group, and it needs a window.
        return "Pass --samples 2 or more with an --interval, or a threshold such as --max-lag."
    return (
        "Check that the groups and topics exist and that ZooKeeper and the brokers are reachable; "
        "raise --timeout on slow networks."
    )


def run_check(
    target: LagTarget,
    policy: CheckPolicy,
    output_format: str,
    output: str | None,
    junit_path: str | None,
    samples: int,
    interval_s: float,
    allowed_lag: int = 0,
) -> int:
    if samples < 1:
        raise UsageError("--samples must be at least 1")
    if policy.needs_samples() and samples < 2:
        raise UsageError(
            "--max-time-lag and --worst-status (or max_time_lag / worst_status in --config) need rates: "
            "pass --samples 2 or more (and an --interval)"
        )
    with Collector(target) as collector:
        snapshots = take_samples(collector, samples, interval_s)
    report = evaluate_window(snapshots, allowed_lag)
    result = check_report(report, policy)
    from kafkadiag.report.lag_check import write_check_json, write_check_text, write_junit

    writers = {"text": write_check_text, "json": write_check_json, "junit": write_junit}
    with report_stream(output, output_format) as stream:
        writers[output_format](stream, result, report)
    if junit_path:
        directory = os.path.dirname(os.path.abspath(junit_path))
        os.makedirs(directory, exist_ok=True)
        with report_stream(junit_path) as stream:
            write_junit(stream, result, report)
    for error in report.errors:
        warn(error)
    if result.verdict == HEALTHY:
        return int(ExitCode.OK)
    if result.verdict == UNHEALTHY:
        return int(ExitCode.FINDINGS)
    from kafkadiag.console import report_error

    report_error(
        InputUnreadableError(
            "could not check everything: "
            + "; ".join(
                f"{verdict.group}: {verdict.unchecked[0] if verdict.unchecked else 'unknown'}"
                for verdict in result.verdicts
                if verdict.verdict != HEALTHY
            )[:2000],
            help_text=_unchecked_help(result),
        )
    )
    return int(ExitCode.INPUT_UNREADABLE)
