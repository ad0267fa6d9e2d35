"""Render docs/wild-dumps.md from the catalogue: `python -m tests.wild.table > docs/wild-dumps.md`."""

from __future__ import annotations

import sys

from tests.wild.catalogue import WildDump, load

HEADER = """\
# Thread dumps from the wild

Generated from `tests/wild/catalogue.toml` by `python -m tests.wild.table > docs/wild-dumps.md`;
`tests/wild/test_wild.py` fails when this page and the catalogue disagree, and runs
`kafkadiag dump analyze` on every file to check the result column.

Each dump was published by someone else (an issue tracker, a pull request, a blog post, a README)
and is kept verbatim in `tests/wild/dumps/`, markup, escapes and annotations included. The cause
is what the public discussion established. "Named" means a finding of the listed rule names every
culprit thread; a miss says why kafkadiag does not name the culprit today.
"""


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def _result(dump: WildDump) -> str:
    if dump.named:
        result = "named (" + ", ".join(dump.rules) + ")"
    else:
        result = f"missed: {dump.miss}"
    if dump.note:
        result += f" {dump.note}"
    return result


def render(dumps: list[WildDump]) -> str:
    named = sum(dump.named for dump in dumps)
    clients = [dump for dump in dumps if dump.kafka_client]
    clients_named = sum(dump.named for dump in clients)
    lines = [
        HEADER,
        f"{len(dumps)} dumps, {len(clients)} of them in Kafka clients. kafkadiag names the culprit in "
        f"{named} of {len(dumps)} ({clients_named} of {len(clients)} Kafka-client dumps).",
        "",
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
