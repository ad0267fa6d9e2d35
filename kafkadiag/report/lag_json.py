"""`--format json` for `kafkadiag lag`: schema kafkadiag.lag, version 1 (docs/lag.md).

New keys may be added within a version; renaming or removing a key or changing its type bumps it.
"""

from __future__ import annotations

import datetime
import json
from typing import Any, TextIO

from kafkadiag.collect.snapshot import GroupMember
from kafkadiag.lag.model import Finding, GroupLag, LagReport, PartitionLag

SCHEMA = "kafkadiag.lag"
VERSION = 1


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
    return {
        "code": finding.code,
        "severity": finding.severity,
        "message": finding.message,
        "topic": finding.topic,
        "partitions": list(finding.partitions),
        "evidence": list(finding.evidence),
    }


# Every PartitionLag field but the group, which the enclosing group names.
_PARTITION_KEYS = PartitionLag._fields[1:]


def _partition(partition: PartitionLag) -> dict[str, Any]:
    # Built by zip: 10,000 partitions are common and a literal of 20 attribute reads costs
    # several times as much. Tuples (problems) are written as JSON arrays.
    document = dict(zip(_PARTITION_KEYS, partition[1:]))
    document["partial"] = partition.partial
    return document


def group_document(group: GroupLag) -> dict[str, Any]:
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
        "partitions": [_partition(partition) for partition in group.partitions],
    }


def lag_document(report: LagReport) -> dict[str, Any]:
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
        "stats": dict(report.stats),
        "groups": [group_document(group) for group in report.groups],
    }


def write_json(stream: TextIO, report: LagReport) -> None:
    # One compact line: json's C encoder does not indent, and 10,000 partitions indented by
    # the pure-Python encoder take seconds. Pipe through `jq .` to read it.
    stream.write(json.dumps(lag_document(report), separators=(",", ":"), check_circular=False))
    stream.write("\n")
