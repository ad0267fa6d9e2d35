"""`kafkadiag diagnose --format json`: schema `kafkadiag.diagnosis`, version 2 (docs/json.md).

Each finding is one record holding its related facts (`facts`: thread, queue, topic and
partitions, per-partition checker lag, MaxLag ...), so a script need not stitch sources together.
"""

from __future__ import annotations

import json
from typing import Any, TextIO

from kafkadiag.diagnosis import Diagnosis

SCHEMA = "kafkadiag.diagnosis"
VERSION = 2


def diagnosis_json(diagnosis: Diagnosis, fail_on: str) -> dict[str, Any]:
    worst = diagnosis.worst()
    return {
        "schema": SCHEMA,
        "version": VERSION,
        "verdict": diagnosis.verdict,
        "narrative": list(diagnosis.narrative),
        "worst_severity": worst.value if worst else None,
        "fail_on": fail_on,
        "complete": diagnosis.complete,
        "findings": [
            {
                "rule": finding.rule,
                "name": finding.name,
                "severity": finding.severity.value,
                "source": source,
                "title": finding.title,
                "message": finding.message,
                "threads": list(finding.threads),
                "evidence": [
                    {"source": e.source, "line": e.line_no, "text": e.text} for e in finding.evidence
                ],
                "remedy": " ".join(finding.remedy.split()),
                "facts": finding.details,
            }
            for source, finding in diagnosis.findings
        ],
        "caveats": list(diagnosis.caveats),
        "sources": [
            {"kind": s.kind, "target": s.target, "ok": s.ok, "detail": s.detail, "help": s.help_text or None}
            for s in diagnosis.sources
        ],
        "groups": [
            {
                "group": g.group,
                "source": g.source,
                "state": g.state,
                "exists": g.exists,
                "total_lag": g.total_lag,
                "max_lag": g.max_lag,
                "partitions": len(g.partitions),
            }
            for g in (diagnosis.lag.groups if diagnosis.lag is not None else ())
        ],  # fmt: skip
    }


def write_diagnosis(out: TextIO, diagnosis: Diagnosis, fail_on: str) -> None:
    json.dump(diagnosis_json(diagnosis, fail_on), out, ensure_ascii=False, indent=1)
    out.write("\n")
