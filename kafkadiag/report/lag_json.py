"""`--format json` for `kafkadiag lag`: schema kafkadiag.lag, version 2 (docs/json.md).

New keys may be added within a version; renaming or removing a key or changing its type bumps it.
"""

from __future__ import annotations

import datetime
import json
import math
from collections.abc import Iterator
from json.encoder import encode_basestring_ascii as _string  # the C escaping json.dumps uses
from typing import TYPE_CHECKING, Any, TextIO

from kafkadiag.findings import Finding
from kafkadiag.lag.model import GroupLag, LagReport, PartitionLag
from kafkadiag.lag.snapshot import GroupMember
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
    document = _group_head(group)
    document["partitions"] = _partitions(group, fetcher_of)
    return document


def _group_head(group: GroupLag) -> dict[str, Any]:
    """A group's document but its partitions (which come last)."""
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
    document = _report_head(report)
    document["groups"] = [group_document(group, fetcher_of) for group in report.groups]
    document["fetcher"] = fetcher_document(fetcher)
    return document


def _report_head(report: LagReport) -> dict[str, Any]:
    """A report's document but its groups and fetcher (which come last)."""
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
    }


def write_json(stream: TextIO, report: LagReport, fetcher: MaxLagReport | None = None) -> None:
    # One compact line: json's C encoder does not indent, and 10,000 partitions indented by
    # the pure-Python encoder take seconds. Pipe through `jq .` to read it.
    if fetcher is not None:  # the fetcher's columns per partition: the document, as it is defined
        stream.write(_compact(lag_document(report, fetcher)))
        stream.write("\n")
        return
    for piece in lag_pieces(report):
        stream.write(piece)


# json.dumps(document, separators=(",", ":"), check_circular=False), without a new encoder per
# call: a group's head is encoded 1,000s of times.
_compact = json.JSONEncoder(separators=(",", ":"), check_circular=False).encode


# The text writer. 10,000 partitions of 22 members each made a dict per partition for json.dumps
# to take apart again: a third of `kafkadiag lag`'s own time. The writer below produces the very
# bytes json.dumps(lag_document(report), separators=(",", ":")) produces (tests/lag/
# test_lag_json_text.py holds it to that on real reports), writing each partition from its fields.


def lag_pieces(report: LagReport) -> Iterator[str]:
    """The document of a report without a fetcher, in pieces (one per group), newline included."""
    # Every member but the groups by json.dumps, its closing brace left open for them: they are
    # the one list that grows with the cluster.
    yield _compact(_report_head(report))[:-1]
    yield ',"groups":['
    yield ",".join(map(_group_text, report.groups))
    yield '],"fetcher":null}\n'


def _group_text(group: GroupLag) -> str:
    head = _compact(_group_head(group))
    return f'{head[:-1]},"partitions":[{",".join(map(_partition_text, group.partitions))}]}}'


def _partition_text(partition: PartitionLag) -> str:
    """One partition's member, as json.dumps writes _partition(partition, None)."""
    (_, topic, number, committed, high_watermark, log_start, lag, owner, leader, last_progress_ms,
     since_progress_s, at_least, problems, status, consumption_rate, production_rate, time_lag_s,
     catch_up_s, complete, commits_without_lag, client_id, host) = partition  # fmt: skip
    partial = "true" if problems and lag is None else "false"  # PartitionLag.partial
    # 10,000s of partitions: the usual values are told inline (a plain int is its own text, None
    # is null), the rest by the helpers below; a call per member cost a third of the writing.
    return (
        f'{{"topic":{_str(topic)},'
        f'"partition":{number if type(number) is int else _int(number)},'
        f'"committed_offset":{committed if type(committed) is int else _int(committed)},'
        f'"high_watermark":{high_watermark if type(high_watermark) is int else _int(high_watermark)},'
        f'"log_start_offset":{log_start if type(log_start) is int else _int(log_start)},'
        f'"lag":{lag if type(lag) is int else _int(lag)},'
        f'"owner":{"null" if owner is None else _str(owner)},'
        f'"leader":{leader if type(leader) is int else _int(leader)},'
        f'"last_progress_ms":{"null" if last_progress_ms is None else _int(last_progress_ms)},'
        f'"since_progress_s":{"null" if since_progress_s is None else _float(since_progress_s)},'
        f'"since_progress_at_least":{_bool(at_least)},'
        f'"problems":[{",".join(map(_str, problems)) if problems else ""}],'
        f'"status":{"null" if status is None else _str(status)},'
        f'"consumption_rate":{"null" if consumption_rate is None else _float(consumption_rate)},'
        f'"production_rate":{"null" if production_rate is None else _float(production_rate)},'
        f'"time_lag_s":{"null" if time_lag_s is None else _float(time_lag_s)},'
        f'"catch_up_s":{"null" if catch_up_s is None else _float(catch_up_s)},'
        f'"complete":{"null" if complete is None else _float(complete)},'
        f'"commits_without_lag":{_int(commits_without_lag)},'
        f'"owner_client_id":{"null" if client_id is None else _str(client_id)},'
        f'"owner_host":{"null" if host is None else _str(host)},'
        f'"partial":{partial},"fetcher":null}}'
    )


# The members _partition_text writes, in order: a field added to PartitionLag must be added there
# (tests/lag/test_lag_json_text.py compares the two).
WRITTEN_PARTITION_FIELDS = (
    "group", "topic", "partition", "committed_offset", "high_watermark", "log_start_offset", "lag",
    "owner", "leader", "last_progress_ms", "since_progress_s", "since_progress_at_least", "problems",
    "status", "consumption_rate", "production_rate", "time_lag_s", "catch_up_s", "complete",
    "commits_without_lag", "owner_client_id", "owner_host",
)  # fmt: skip


# The scalars of a partition as json.dumps writes them: the types the fields hold are written
# here; anything else (never seen) by json.dumps itself, so that the bytes stay the same.


def _int(value: int | None) -> str:
    if type(value) is int:
        return int.__repr__(value)
    return "null" if value is None else json.dumps(value)


def _str(value: str | None) -> str:
    if value is None:
        return "null"
    return _string(value) if type(value) is str else json.dumps(value)


def _float(value: float | None) -> str:
    if value is None:
        return "null"
    if type(value) is float and math.isfinite(value):
        return float.__repr__(value)
    return json.dumps(value)  # NaN and the infinities by name, as json.dumps does


def _bool(value: bool) -> str:
    if value is True:
        return "true"
    return "false" if value is False else json.dumps(value)
