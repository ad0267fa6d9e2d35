"""A dump inside JSON log records: one JSON object per line, the dump's text in one of its fields.

A JVM in a container prints kill -3 output to its stdout, and Docker's json-file driver stores
every line of it as a record of its own, the text in "log":

    {"log":"\\"main\\" #1 prio=5 os_prio=0 tid=0x... nid=0x1 waiting on condition\\n","stream":"stdout"}

`journalctl -o json` keeps it in "MESSAGE", and log shippers' exports (Elasticsearch, Loki,
Datadog) in "message" or "msg", often a whole multi-line message per record. The field's text is
read in place of each record, split at its own line breaks; lines that are not such records pass
unchanged.
"""

from __future__ import annotations

from typing import Any

from kafkadiag import boundedjson
from kafkadiag.dumps.lines import ReadStats

# The fields log pipelines put a line's text in, most specific first.
TEXT_FIELDS = ("log", "MESSAGE", "message", "msg")
# Records are recognised when most written lines of the sample are, among the first ones looked at.
RECORDS_LOOKED_AT = 200
RECORD_SHARE = 0.8


def text_field(sample: list[str]) -> str | None:
    """The field holding the text, when the sample's lines are JSON log records; else None."""
    written = [line for line in sample[:RECORDS_LOOKED_AT] if line.strip()]
    if not written:
        return None
    counts = dict.fromkeys(TEXT_FIELDS, 0)
    for line in written:
        record = _record(line)
        if record is None:
            continue
        for field in TEXT_FIELDS:
            if isinstance(record.get(field), str):
                counts[field] += 1
                break
    field, count = max(counts.items(), key=lambda item: item[1])
    return field if count >= RECORD_SHARE * len(written) else None


def _record(line: str) -> dict[str, Any] | None:
    stripped = line.strip()
    if not (stripped.startswith("{") and stripped.endswith("}")):
        return None
    try:
        record = boundedjson.loads(stripped)
    except ValueError:
        return None
    return record if isinstance(record, dict) else None


class RecordText:
    """Maps batches of lines to the text of their records' `field`; counts, in `stats`, the
    records that held several lines (line numbers then count the text's lines, not the file's)."""

    def __init__(self, field: str, stats: ReadStats) -> None:
        self.field = field
        self.stats = stats
        stats.log_records_field = field

    def __call__(self, batch: list[str]) -> list[str]:
        out: list[str] = []
        for line in batch:
            record = _record(line) if line[:1] == "{" or line.lstrip()[:1] == "{" else None
            text = record.get(self.field) if record is not None else None
            if not isinstance(text, str):
                out.append(line)
                continue
            if text.endswith("\n"):
                text = text[:-1]
            if "\n" in text:
                self.stats.multi_line_records += 1
                out.extend(text.replace("\r\n", "\n").split("\n"))
            else:
                out.append(text.rstrip("\r"))
        return out
