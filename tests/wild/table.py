"""Render docs/wild-dumps.md from the catalogue: `python -m tests.wild.table > docs/wild-dumps.md`."""

from __future__ import annotations

import sys

from tests.wild.catalogue import CLASSES, WildDump, load

HEADER = """\
# Thread dumps from the wild

Generated from `tests/wild/catalogue.toml` by `python -m tests.wild.table > docs/wild-dumps.md`;
`tests/wild/test_wild.py` fails when this page and the catalogue disagree, and runs
`kafkadiag dump analyze` on every file to check the result column.

Each dump was published by someone else (an issue tracker, a pull request, a blog post, a README)
and is kept verbatim in `tests/wild/dumps/`, markup, escapes and annotations included. The cause
is what the public discussion established. "Named" means a finding of the listed rule names every
culprit thread; a miss says why kafkadiag does not name the culprit today. A healthy dump is one of
a class's shape in which nothing is wrong: no rule may report anything in it.
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _result(dump: WildDump) -> str:
    if dump.healthy:
        result = "healthy: no finding"
    elif dump.named:
        result = "named (" + ", ".join(dump.rules) + ")"
    else:
        result = f"missed: {dump.miss}"
    if dump.note:
        result += f" {dump.note}"
    return result


def _classes(dumps: list[WildDump]) -> list[str]:
    """Per class of incident: its dumps, how many kafkadiag names, and its healthy dumps."""
    lines = [
        "By class of incident (a dump may be an example of more than one):",
        "",
        "| class | dumps | culprit named | healthy dumps (silent) |",
        "|---|---|---|---|",
    ]
    for name, description in CLASSES.items():
        members = [dump for dump in dumps if name in dump.classes and not dump.healthy]
        healthy = sum(1 for dump in dumps if name in dump.classes and dump.healthy)
        named = sum(dump.named for dump in members)
        lines.append(f"| {description} | {len(members)} | {named} of {len(members)} | {healthy} |")
    return [*lines, ""]


def render(dumps: list[WildDump]) -> str:
    stalls = [dump for dump in dumps if not dump.healthy]
    named = sum(dump.named for dump in stalls)
    clients = [dump for dump in stalls if dump.kafka_client]
    clients_named = sum(dump.named for dump in clients)
    healthy = len(dumps) - len(stalls)
    lines = [
        HEADER,
        f"{len(stalls)} dumps of stalls, {len(clients)} of them in Kafka clients, and {healthy} healthy "
        f"dumps. kafkadiag names the culprit in {named} of {len(stalls)} ({clients_named} of "
        f"{len(clients)} Kafka-client dumps).",
        "",
        *_classes(dumps),
        "| file | source | Kafka client | established cause | kafkadiag |",
        "|---|---|---|---|---|",
    ]
    for dump in dumps:
        source = f"[{_cell(dump.title)}]({dump.source})"
        if dump.via:
            source += f" ([text]({dump.via}))"
        lines.append(
            f"| `{dump.slug}.txt` | {source} | {'yes' if dump.kafka_client else 'no'} "
            f"| {_cell(dump.cause)} | {_cell(_result(dump))} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    sys.stdout.write(render(load()))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
