"""`kafkadiag diagnose --format prometheus`: the verdict, the findings per rule and severity and
each source's state, plus the lag the diagnosis read (names in report/prometheus_names.py)."""

from __future__ import annotations

from typing import TextIO

from kafkadiag.diagnosis import Diagnosis
from kafkadiag.report.prometheus_text import Exposition, cluster_of

# The verdict's first word (diagnose/narrative.py) -> its label value.
VERDICTS = {"Healthy": "healthy", "At risk": "at_risk", "Stalled": "stalled", "Incomplete": "incomplete"}


def verdict_label(verdict: str) -> str:
    head = verdict.split(":", 1)[0].strip()
    return VERDICTS.get(head, head.lower().replace(" ", "_"))


def write_prometheus(stream: TextIO, diagnosis: Diagnosis, cluster_name: str | None = None) -> None:
    exposition = Exposition()
    lag = diagnosis.lag
    cluster = cluster_of(lag.sources if lag is not None else (), cluster_name)
    if lag is not None:
        from kafkadiag.report.lag_prometheus import add_lag_report

        add_lag_report(exposition, lag, cluster_name=cluster)
    else:
        exposition.add_build_info()
    labels = (("cluster", cluster),)
    exposition.add("kafkadiag_diagnosis_verdict", (*labels, ("verdict", verdict_label(diagnosis.verdict))), 1)
    counts: dict[tuple[str, str], int] = {}
    for _, finding in diagnosis.findings:
        key = (finding.rule, finding.severity.value)
        counts[key] = counts.get(key, 0) + 1
    for (code, severity), count in sorted(counts.items()):
        exposition.add(
            "kafkadiag_diagnosis_findings", (*labels, ("code", code), ("severity", severity)), count
        )
    for source in diagnosis.sources:
        source_labels = (*labels, ("kind", source.kind), ("target", source.target))
        exposition.add("kafkadiag_diagnosis_source_up", source_labels, int(source.ok))
    exposition.write(stream)
