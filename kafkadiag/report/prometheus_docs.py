"""The metric reference of docs/prometheus.md, rendered from the family table, so that the page
cannot drift from what is exported: `python -m kafkadiag.report.prometheus_docs` prints it, and
tests/prometheus checks the page holds it between its markers."""

from __future__ import annotations

import sys

from kafkadiag.report.prometheus_names import FAMILIES, SCHEMA_VERSION, Family

BEGIN = "<!-- metric reference: rendered by python -m kafkadiag.report.prometheus_docs -->"
END = "<!-- end of metric reference -->"

# Sections by name prefix, most specific first; the first that matches takes the family.
SECTIONS = (
    ("kafkadiag_build_info", "Every form"),
    ("kafkadiag_partition_", "Per partition of a group (lag, diagnose; the fetcher's with a metrics source)"),
    ("kafkadiag_group_topic_", "Per topic of a group (lag, diagnose)"),
    ("kafkadiag_group_", "Per group (lag, diagnose)"),
    ("kafkadiag_fetcher_", "Per consumer client (maxlag; lag and diagnose with a metrics source)"),
    ("kafkadiag_stream_", "Per old-consumer stream (maxlag; lag and diagnose with a metrics source)"),
    ("kafkadiag_diagnosis_", "A diagnosis (diagnose)"),
    ("kafkadiag_", "The collection (every form)"),
)


def _section(family: Family) -> str:
    return next(title for prefix, title in SECTIONS if family.name.startswith(prefix))


def render() -> str:
    lines = [BEGIN, "", f"Schema {SCHEMA_VERSION}. Every family is a gauge.", ""]
    by_section: dict[str, list[Family]] = {}
    for family in FAMILIES.values():
        by_section.setdefault(_section(family), []).append(family)
    for _, title in SECTIONS:
        families = by_section.get(title)
        if not families:
            continue
        lines += [f"### {title}", "", "```text"]
        for family in families:
            lines += [
                f"# HELP {family.name} {family.help}",
                f"# TYPE {family.name} {family.kind}",
                f"{family.name}{{{', '.join(family.labels)}}}",
            ]
        lines += ["```", ""]
    lines.append(END)
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    sys.stdout.write(render())
