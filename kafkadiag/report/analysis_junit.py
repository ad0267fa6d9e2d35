"""`kafkadiag dump analyze --junit-xml FILE`: the analysis as a JUnit report for CI systems.

One test case per rule of the catalogue: a rule that ran and found something at or above
`--fail-on` fails (one <failure> per finding, in the report's order), one that ran clean or
found less passes (lesser findings in its <system-out>), one that could not run is skipped
with what it needs. The input itself is a test case too, "(input)": files that could not be read
are an <error>, and caveats (an excerpt, a dump cut short, lines not understood) skip it, so a
CI dashboard never shows an all-green run for something that was not a whole dump.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, TextIO

from kafkadiag.findings import Finding, Severity
from kafkadiag.report.xml_text import escape, quoteattr
from kafkadiag.rules.base import SCOPE_DUMP
from kafkadiag.rules.engine import Report
from kafkadiag.rules.registry import RULES

_SUITE = "kafkadiag dump analyze"


def write_analysis_junit(
    stream: TextIO, report: Report, inputs: list[dict[str, Any]], fail_on: str, seconds: float
) -> None:
    threshold = Severity(fail_on)
    by_rule: dict[str, list[Finding]] = defaultdict(list)
    for finding in report.findings:
        by_rule[finding.rule].append(finding)
    skipped = {rule.code: rule for rule in report.skipped}
    unreadable = [item for item in inputs if "error" in item]
    cases: list[str] = [_input_case(report, unreadable)]
    failures = 0
    errors = 1 if unreadable else 0
    skipped_count = 1 if report.caveats and not unreadable else 0
    for rule in sorted(RULES, key=lambda rule: rule.code):
        if rule.scope != SCOPE_DUMP or (rule.code not in report.rules_run and rule.code not in skipped):
            continue
        name = quoteattr(f"{rule.code} {rule.name}")
        opening = f'    <testcase name={name} classname="kafkadiag.rules" time="0">\n'
        if rule.code in skipped:
            reason = "needs " + "; ".join(skipped[rule.code].missing)
            cases.append(f"{opening}      <skipped message={quoteattr(reason)}/>\n    </testcase>\n")
            skipped_count += 1
            continue
        found = by_rule.get(rule.code, [])
        failing = [finding for finding in found if finding.severity.at_least(threshold)]
        lesser = [finding for finding in found if not finding.severity.at_least(threshold)]
        body = [opening]
        for finding in failing:
            body.append(
                f"      <failure message={quoteattr(finding.message)} "
                f"type={quoteattr(finding.severity.value)}>{escape(_details(finding))}</failure>\n"
            )
        if lesser:
            text = "\n".join(f"{finding.severity.value}: {finding.message}" for finding in lesser)
            body.append(f"      <system-out>{escape(text)}</system-out>\n")
        body.append("    </testcase>\n")
        cases.append("".join(body))
        failures += 1 if failing else 0
    tests = len(cases)
    counts = f'tests="{tests}" failures="{failures}" errors="{errors}"'
    stream.write('<?xml version="1.0" encoding="UTF-8"?>\n')
    stream.write(f'<testsuites name="kafkadiag" {counts} time="{seconds:.3f}">\n')
    stream.write(f'  <testsuite name="{_SUITE}" {counts} skipped="{skipped_count}" time="{seconds:.3f}">\n')
    stream.write(f'    <properties>\n      <property name="verdict" value={quoteattr(report.verdict)}/>\n')
    stream.write(f'      <property name="fail_on" value={quoteattr(fail_on)}/>\n    </properties>\n')
    stream.writelines(cases)
    stream.write("  </testsuite>\n</testsuites>\n")


def _input_case(report: Report, unreadable: list[dict[str, Any]]) -> str:
    opening = '    <testcase name="(input)" classname="kafkadiag.input" time="0">\n'
    body = [opening]
    if unreadable:
        text = "\n".join(item["error"] for item in unreadable)
        message = f"{len(unreadable)} input(s) could not be read"
        body.append(f'      <error message={quoteattr(message)} type="unreadable">{escape(text)}</error>\n')
    elif report.caveats:
        message = f"{len(report.caveats)} caveat(s): the input is not a whole dump"
        body.append(f"      <skipped message={quoteattr(message)}/>\n")
    if report.caveats:
        body.append(f"      <system-out>{escape(chr(10).join(report.caveats))}</system-out>\n")
    body.append("    </testcase>\n")
    return "".join(body)


def _details(finding: Finding) -> str:
    lines = [finding.message, ""]
    if finding.threads:
        lines.append("threads: " + ", ".join(finding.threads))
    lines += [item.render() for item in finding.evidence]
    lines += ["", "remedy: " + " ".join(finding.remedy.split())]
    return "\n".join(lines)
