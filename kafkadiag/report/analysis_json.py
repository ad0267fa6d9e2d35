"""`kafkadiag dump analyze --format json`: schema `kafkadiag.analysis`, version 1 (docs/json.md)."""

from __future__ import annotations

import json
from typing import Any, TextIO

from kafkadiag.findings import Finding
from kafkadiag.rules.engine import Report

SCHEMA = "kafkadiag.analysis"
VERSION = 1


def finding_json(finding: Finding) -> dict[str, Any]:
    return {
        "rule": finding.rule,
        "name": finding.name,
        "severity": finding.severity.value,
        "title": finding.title,
        "message": finding.message,
        "threads": list(finding.threads),
        "evidence": [
            {"source": item.source, "line": item.line_no, "text": item.text} for item in finding.evidence
        ],
        "remedy": " ".join(finding.remedy.split()),
        "series": finding.series,
        "dumps": [index + 1 for index in finding.dumps],
        "details": finding.details,
    }


def report_json(report: Report, inputs: list[dict[str, Any]], fail_on: str) -> dict[str, Any]:
    worst = report.worst()
    return {
        "schema": SCHEMA,
        "version": VERSION,
        "verdict": report.verdict,
        "worst_severity": worst.value if worst else None,
        "fail_on": fail_on,
        "findings": [finding_json(finding) for finding in report.findings],
        "skipped_rules": [
            {"rule": skipped.code, "name": skipped.name, "missing": list(skipped.missing)}
            for skipped in report.skipped
        ],
        "rules_run": list(report.rules_run),
        "caveats": list(report.caveats),
        "series": [
            {
                "name": s.name,
                "sources": list(s.sources),
                "dumps": s.dumps,
                "threads": s.threads,
                "kafka_threads": dict(s.kafka_threads),
            }
            for s in report.series
        ],
        "inputs": inputs,
    }


def write_report(out: TextIO, report: Report, inputs: list[dict[str, Any]], fail_on: str) -> None:
    json.dump(report_json(report, inputs, fail_on), out, ensure_ascii=False, indent=1)
    out.write("\n")
