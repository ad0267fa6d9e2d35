"""Reports of `kafkadiag check`: text for people, JSON (schema kafkadiag.check v1), JUnit XML.

JUnit: one <testsuite name="kafkadiag check">, one <testcase> per group (classname
"kafkadiag.check.<source>"); a <failure> lists the violated thresholds, an <error> says what
could not be checked. CI systems (Jenkins, GitLab, GitHub Actions reporters) show them per group.
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from kafkadiag.lag.check import UNCHECKED, UNHEALTHY, CheckResult, Violation
from kafkadiag.lag.model import LagReport
from kafkadiag.report.lag_json import group_document, iso_time
from kafkadiag.report.textpage import paint
from kafkadiag.report.xml_text import escape, quoteattr

SCHEMA = "kafkadiag.check"
VERSION = 2


def check_document(result: CheckResult, report: LagReport) -> dict[str, Any]:
    groups = {(group.group, group.source): group for group in report.groups}
    return {
        "schema": SCHEMA,
        "version": VERSION,
        "verdict": result.verdict,
        "taken_at": iso_time(report.taken_at_ms),
        "samples": report.samples,
        "window_s": report.window_s,
        "errors": list(result.errors),
        "groups": [
            {
                "group": verdict.group,
                "source": verdict.source,
                "verdict": verdict.verdict,
                "checks": list(verdict.checks),
                "violations": [
                    {
                        "check": violation.check,
                        "rule": violation.rule,
                        "message": violation.message,
                        "topic": violation.topic,
                        "partition": violation.partition,
                    }
                    for violation in verdict.violations
                ],
                "unchecked": list(verdict.unchecked),
                "lag": group_document(groups[(verdict.group, verdict.source)])
                if (verdict.group, verdict.source) in groups
                else None,
            }
            for verdict in result.verdicts
        ],
    }


def write_check_json(stream: TextIO, result: CheckResult, report: LagReport) -> None:
    stream.write(json.dumps(check_document(result, report), separators=(",", ":")))
    stream.write("\n")


def write_check_text(stream: TextIO, result: CheckResult, report: LagReport) -> None:
    from kafkadiag.report.findings_text import coded_lead
    from kafkadiag.report.textpage import Page

    page = Page(stream)
    for verdict in result.verdicts:
        paint(stream, verdict.verdict.upper(), pad=9)
        stream.write(f" {verdict.group} ({verdict.source})\n")
        for violation in verdict.violations:
            # A failed check, coloured as a finding is: its rule code, or the threshold's name.
            page.paragraph(violation.message, indent=4, lead=coded_lead(page, f"{_label(violation)}:"))
        for reason in verdict.unchecked[:20]:
            stream.write(f"    not checked: {reason}\n")
        if len(verdict.unchecked) > 20:
            stream.write(f"    ... and {len(verdict.unchecked) - 20} more not checked\n")
    for error in result.errors:
        paint(stream, "PROBLEM", "bold red", pad=9)
        stream.write(f" {error}\n")
    counts = {
        kind: sum(1 for verdict in result.verdicts if verdict.verdict == kind)
        for kind in ("healthy", UNHEALTHY, UNCHECKED)
    }
    stream.write(
        f"\n{result.verdict}: {counts['healthy']} healthy, {counts[UNHEALTHY]} unhealthy, "
        f"{counts[UNCHECKED]} not checked ({report.samples} sample(s))\n"
    )


def _label(violation: Violation) -> str:
    """The check that failed; a finding's by its catalogue code and name ("KD608 no-owner")."""
    if violation.rule is None:
        return violation.check
    return f"{violation.rule} {violation.check.removeprefix('finding:')}"


def write_junit(stream: TextIO, result: CheckResult, report: LagReport) -> None:
    failures = sum(1 for verdict in result.verdicts if verdict.verdict == UNHEALTHY)
    errors = sum(1 for verdict in result.verdicts if verdict.verdict == UNCHECKED) + (
        1 if result.errors else 0
    )
    tests = len(result.verdicts) + (1 if result.errors else 0)
    seconds = report.duration_ms / 1000
    stream.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    stream.write(
        f'<testsuites name="kafkadiag" tests="{tests}" failures="{failures}" errors="{errors}" '
        f'time="{seconds:.3f}">\n'
    )
    stream.write(
        f'  <testsuite name="kafkadiag check" tests="{tests}" failures="{failures}" errors="{errors}" '
        f'skipped="0" time="{seconds:.3f}" timestamp={quoteattr(iso_time(report.taken_at_ms))}>\n'
    )
    for verdict in result.verdicts:
        name = quoteattr(verdict.group)
        classname = quoteattr(f"kafkadiag.check.{verdict.source}")
        stream.write(f'    <testcase name={name} classname={classname} time="0">\n')
        if verdict.violations:
            message = f"{len(verdict.violations)} threshold(s) exceeded"
            lines = [f"{_label(v)}: {v.message}" for v in verdict.violations]
            body = "\n".join(lines + [f"not checked: {reason}" for reason in verdict.unchecked])
            stream.write(
                f'      <failure message={quoteattr(message)} type="unhealthy">{escape(body)}</failure>\n'
            )
        if verdict.unchecked and not verdict.violations:
            message = "could not be checked completely"
            body = "\n".join(verdict.unchecked)
            stream.write(
                f'      <error message={quoteattr(message)} type="unchecked">{escape(body)}</error>\n'
            )
        if verdict.checks:
            stream.write(f"      <system-out>{escape('checks: ' + ', '.join(verdict.checks))}</system-out>\n")
        stream.write("    </testcase>\n")
    if result.errors:
        stream.write('    <testcase name="(collection)" classname="kafkadiag.check" time="0">\n')
        body = "\n".join(result.errors)
        stream.write(
            f'      <error message="some data could not be read" type="unchecked">{escape(body)}</error>\n'
        )
        stream.write("    </testcase>\n")
    stream.write("  </testsuite>\n</testsuites>\n")
