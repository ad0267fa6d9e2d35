"""docs/rules.md, generated from the registry (`kafkadiag rules --format markdown`)."""

from __future__ import annotations

from kafkadiag.rules.registry import RETIRED_CODES, RULES

HEADER = """# Rule catalogue

Generated from the rule registry by `kafkadiag rules --format markdown > docs/rules.md`; a test
fails when this file and the registry disagree. `kafkadiag explain CODE` prints one rule.

Codes: KD0xx about the analysis itself, KD1xx generic JVM waits, KD2xx the old (ZooKeeper)
consumer, KD3xx the Java clients (`KafkaConsumer.poll`, `KafkaProducer`), KD4xx Python consumers (py-spy),
KD5xx several dumps of one process over time; `kafkadiag diagnose` adds KD6xx the committed
offsets and ownership (the lag engine), KD7xx the consumer's fetcher metrics (MaxLag comparison)
and KD8xx the stories joined across every source.
"""


def render_markdown() -> str:
    parts = [HEADER, "| code | name | severity | title |", "|---|---|---|---|"]
    parts += [f"| {r.code} | {r.name} | {r.severity.value} | {r.title} |" for r in RULES]
    for rule in RULES:
        parts.append("")
        parts.append(f"## {rule.code} {rule.name}")
        parts.append("")
        lines = list(rule.describe())
        parts.append(f"**{rule.title}**")
        parts.append("")
        for line in lines[1:]:
            parts.append(f"- {line}" if line.startswith(("Severity", "Needs")) else line)
    if RETIRED_CODES:
        parts.append("")
        parts.append("Retired codes (never reused): " + ", ".join(sorted(RETIRED_CODES)))
    return "\n".join(parts).rstrip() + "\n"
