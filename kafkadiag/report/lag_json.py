"""`--format json` for `kafkadiag lag`: schema kafkadiag.lag, version 2 (docs/json.md).

New keys may be added within a version; renaming or removing a key or changing its type bumps it.
"""

from __future__ import annotations

import datetime
import json
from typing import TYPE_CHECKING, Any, TextIO

from kafkadiag.lag.model import GroupLag, LagReport, PartitionLag
from kafkadiag.lag.snapshot import GroupMember
from kafkadiag.rules.base import Finding
from kafkadiag.rules.groupfacts import finding_partitions, finding_topic

if TYPE_CHECKING:
    from kafkadiag.maxlag.columns import FetcherColumns, PartitionKey
    from kafkadiag.maxlag.model import MaxLagReport

SCHEMA = "kafkadiag.lag"
VERSION = 2


def iso_time(milliseconds: int) -> str:
    moment = datetime.datetime.fromtimestamp(milliseconds / 1000, tz=datetime.timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def _member(member: GroupMember) -> dict[str, Any]:
    return {
        "member_id": member.member_id,
        "client_id": member.client_id,
        "host": member.host,
        "subscription": {topic: threads for topic, threads in member.subscription},
        "pattern": member.pattern,
        "registered_ms": member.registered_ms,
        "assignment": [[topic, partition] for topic, partition in member.assignment],
        "error": member.error,
    }


def _finding(finding: Finding) -> dict[str, Any]:
    # "code" is the rule's name (kebab-case), as in version 2 before the catalogue codes; "rule"
    # is its catalogue code, the one `kafkadiag explain` takes.
    return {
        "rule": finding.rule,
        "code": finding.name,
        "severity": finding.severity.value,
        "message": finding.message,
        "topic": finding_topic(finding),
        "partitions": list(finding_partitions(finding)),
        "evidence": [line.text for line in finding.evidence],
    }


# Every PartitionLag field but the group, which the enclosing group names.
_PARTITION_KEYS = PartitionLag._fields[1:]


def _partition(partition: PartitionLag, fetcher: FetcherColumns | None) -> dict[str, Any]:
    # Built by zip: 10,000 partitions are common and a literal of 20 attribute reads costs
    # several times as much. Tuples (problems) are written as JSON arrays.
    document: dict[str, Any] = dict(zip(_PARTITION_KEYS, partition[1:]))
    document["partial"] = partition.partial
    document["fetcher"] = fetcher._asdict() if fetcher is not None else None
    return document


def group_document(
    group: GroupLag, fetcher_of: dict[PartitionKey, FetcherColumns] | None = None
) -> dict[str, Any]:
    return {
        "group": group.group,
        "source": group.source,
        "exists": group.exists,
        "state": group.state,
        "status": group.status,
        "partial": group.partial,
        "members": [_member(member) for member in group.members],
        "total_lag": group.total_lag,
        "max_lag": group.max_lag,
        "consumption_rate": group.consumption_rate,
        "production_rate": group.production_rate,
        "catch_up_s": group.catch_up_s,
        "errors": list(group.errors),
        "findings": [_finding(finding) for finding in group.findings],
        "topics": [
            {
                "topic": topic.topic,
                "partitions": topic.partitions,
                "total_lag": topic.total_lag,
                "max_lag": topic.max_lag,
                "unknown": topic.unknown,
                "consumption_rate": topic.consumption_rate,
                "production_rate": topic.production_rate,
            }
            for topic in group.topics
        ],
        "partitions": _partitions(group, fetcher_of),
    }


def _partitions(
    group: GroupLag, fetcher_of: dict[PartitionKey, FetcherColumns] | None
) -> list[dict[str, Any]]:
    if not fetcher_of:
        return [_partition(partition, None) for partition in group.partitions]
    from kafkadiag.maxlag.columns import columns_of

    return [_partition(partition, columns_of(fetcher_of, group, partition)) for partition in group.partitions]


def fetcher_document(fetcher: MaxLagReport | None) -> dict[str, Any] | None:
    """The clients' verdicts when a metrics source was given (kafkadiag.maxlag's client objects)."""
    if fetcher is None:
        return None
    from kafkadiag.report.maxlag_json import client_document

    return {
        "metrics_source": {"kind": fetcher.metrics_source_kind, "source": fetcher.metrics_source},
        "taken_at_ms": fetcher.taken_at_ms,
        "healthy": not fetcher.unhealthy,
        "notes": list(fetcher.notes),
        "errors": list(fetcher.errors),
        "clients": [client_document(client) for client in fetcher.clients],
    }


def lag_document(report: LagReport, fetcher: MaxLagReport | None = None) -> dict[str, Any]:
    fetcher_of = None
    if fetcher is not None:
        from kafkadiag.maxlag.columns import fetcher_columns

        fetcher_of = fetcher_columns(fetcher)
    return {
        "schema": SCHEMA,
        "version": VERSION,
        "taken_at": iso_time(report.taken_at_ms),
        "taken_at_ms": report.taken_at_ms,
        "duration_ms": report.duration_ms,
        "sources": dict(report.sources),
        "samples": report.samples,
        "window_s": report.window_s,
        "partial": report.partial,
        "errors": list(report.errors),
        "unreachable": [{"source": source, "error": error} for source, error in report.unreachable],
        "stats": dict(report.stats),
        "groups": [group_document(group, fetcher_of) for group in report.groups],
        "fetcher": fetcher_document(fetcher),
    }


def write_json(stream: TextIO, report: LagReport, fetcher: MaxLagReport | None = None) -> None:
    # One compact line: json's C encoder does not indent, and 10,000 partitions indented by
    # the pure-Python encoder take seconds. Pipe through `jq .` to read it.
    stream.write(json.dumps(lag_document(report, fetcher), separators=(",", ":"), check_circular=False))
    stream.write("\n")
