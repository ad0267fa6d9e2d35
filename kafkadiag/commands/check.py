"""`kafkadiag check`: lag thresholds for CI and cron. Exit 0 healthy, 1 unhealthy, 3 not checked.

A threshold violated anywhere makes the result unhealthy (1) even when something else could not
be read; only when nothing is violated does a gap make it "not checked" (3). Without any threshold
the groups' Burrow statuses decide (STOP, STALL, REWIND, ERR are unhealthy), which one sample
cannot tell: that is "not checked" too.
"""

from __future__ import annotations

import os
from typing import TYPE_CHECKING, Any

import click

from kafkadiag.commands.completion import complete_paths
from kafkadiag.commands.formats import format_option
from kafkadiag.commands.options import (
    allowed_lag_option,
    connection_options,
    output_option,
    sample_interval_option,
)
from kafkadiag.commands.targets import lag_target
from kafkadiag.console import warn
from kafkadiag.errors import InputUnreadableError
from kafkadiag.exitcodes import ExitCode

if TYPE_CHECKING:
    from kafkadiag.collect.gather import LagTarget
    from kafkadiag.lag.check import CheckPolicy, CheckResult, Thresholds


CHECK_FORMATS = ("table", "json", "junit")


def with_overrides(policy: CheckPolicy, overrides: Thresholds, fields: tuple[str, ...]) -> CheckPolicy:
    from kafkadiag.lag.check import CheckPolicy

    return CheckPolicy(
        defaults=policy.defaults, rules=policy.rules, overrides=overrides, override_fields=fields
    )


def _unchecked_help(result: CheckResult) -> str:
    from kafkadiag.lag.check import ONE_SAMPLE

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
    from kafkadiag.app.lag import checked_lag
    from kafkadiag.lag.check import HEALTHY, UNHEALTHY
    from kafkadiag.progress import SampleProgress
    from kafkadiag.report.output import report_stream

    with SampleProgress(samples, interval_s) as progress:
        result, report = checked_lag(target, policy, samples, interval_s, allowed_lag, progress.update)
    from kafkadiag.report.lag_check import write_check_json, write_check_text, write_junit

    writers = {"table": write_check_text, "json": write_check_json, "junit": write_junit}
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


@click.command("check", short_help="Check lag against thresholds, for CI and cron.")
@connection_options
@click.option("--max-lag", type=int, default=None, help="Most records a partition may lag.")
@click.option("--max-total-lag", type=int, default=None, help="Most records a group may lag in total.")
@click.option(
    "--max-time-lag",
    default=None,
    help="Oldest unconsumed record allowed (seconds, or 30s/5m/2h); needs --samples 2+.",
)
@click.option(
    "--worst-status",
    type=click.Choice(("OK", "WARN", "STOP", "STALL", "REWIND"), case_sensitive=False),
    default=None,
    help="Worst Burrow partition status allowed; needs --samples 2+.",
)
@click.option(
    "--fail-on-findings",
    type=click.Choice(("error", "warning", "info", "none")),
    default=None,
    help="Findings (ownership, skipped data ...) at this severity or above fail the check [error].",
)
@click.option(
    "--config",
    "config_path",
    default=None,
    shell_complete=complete_paths,
    help="Per group/topic thresholds (TOML or JSON, docs/lag.md).",
)
@click.option("--samples", type=int, default=1, show_default=True, help="Snapshots to take.")
@sample_interval_option
@allowed_lag_option
@format_option(CHECK_FORMATS, "table for people, json (schema kafkadiag.check) or junit (XML).")
@output_option
@click.option(
    "--junit-xml",
    "junit_path",
    default=None,
    shell_complete=complete_paths,
    help="Also write a JUnit XML report to this file.",
)
def check_command(
    max_lag: int | None,
    max_total_lag: int | None,
    max_time_lag: str | None,
    worst_status: str | None,
    fail_on_findings: str | None,
    config_path: str | None,
    samples: int,
    interval: float,
    allowed_lag: int,
    output_format: str,
    output: str | None,
    junit_path: str | None,
    **connection: Any,
) -> int:
    """Check lag against thresholds: exit 0 healthy, 1 unhealthy, 3 could not check.

    Thresholds come from --config (defaults and per group/topic rules), overridden by the
    options given here. With no threshold at all, Burrow's statuses decide: a partition in STOP,
    STALL or REWIND (group status ERR) is unhealthy; one sample cannot judge a status, so that
    needs --samples 2 or more, else the result is 3. Reports: a table, JSON or JUnit XML for CI
    systems. See docs/lag.md.
    """
    from kafkadiag.collect.config import read_check_policy
    from kafkadiag.lag.check import CheckPolicy, thresholds_from_mapping

    values: dict[str, object] = {}
    if max_lag is not None:
        values["max_lag"] = max_lag
    if max_total_lag is not None:
        values["max_total_lag"] = max_total_lag
    if max_time_lag is not None:
        values["max_time_lag"] = max_time_lag
    if worst_status is not None:
        values["worst_status"] = worst_status
    if fail_on_findings is not None:
        values["fail_on_findings"] = fail_on_findings
    try:
        overrides, fields = thresholds_from_mapping(values, "options")
    except ValueError as error:
        raise click.BadParameter(str(error)) from None
    policy = read_check_policy(config_path) if config_path else CheckPolicy()
    policy = with_overrides(policy, overrides, fields)
    target = lag_target(**connection)
    return run_check(target, policy, output_format, output, junit_path, samples, interval, allowed_lag)
