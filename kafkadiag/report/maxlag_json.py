"""`kafkadiag maxlag --format json`: schema kafkadiag.maxlag, version 1 (docs/json.md).

New keys may be added within a version; renaming or removing a key or changing its type bumps it.
"""

from __future__ import annotations

import dataclasses
import datetime
import json
from typing import Any, TextIO

from kafkadiag.maxlag.model import ClientComparison, MaxLagReport

SCHEMA = "kafkadiag.maxlag"
VERSION = 1


def _iso_time(milliseconds: int) -> str:
    moment = datetime.datetime.fromtimestamp(milliseconds / 1000, tz=datetime.timezone.utc)
    return moment.isoformat(timespec="milliseconds").replace("+00:00", "Z")


def client_document(client: ClientComparison) -> dict[str, Any]:
    # One literal, key for key the client object of docs/json.md: its length is the schema's.
    return {
        "client_id": client.client_id,
        "group": client.group,
        "group_source": client.group_source,
        "consumer": client.consumer,
        "naming": client.naming,
        "verdict": client.verdict,
        "rule": client.rule,  # the catalogue code of an unhealthy verdict (KD701 ...), null when healthy
        "title": client.title,
        "healthy": client.healthy,
        "complete": client.complete,
        "summary": client.summary,
        "evidence": list(client.evidence),
        "remedy": client.remedy,
        "max_lag": client.max_lag,
        "max_lag_source": client.max_lag_source,
        "min_fetch_rate": client.min_fetch_rate,
        "fetcher_lag_total": client.fetcher_lag_total,
        "checker_lag_total": client.checker_lag_total,
        "gap_total": client.gap_total,
        "lag_threshold": client.lag_threshold,
        "lag_threshold_source": client.lag_threshold_source,
        "bound": dataclasses.asdict(client.bound) if client.bound is not None else None,
        "settings": [
            {"name": setting.name, "value": setting.value, "source": setting.source}
            for setting in client.settings.settings
        ],
        "fetcher_threads": [{"name": name, "state": state} for name, state in client.fetcher_threads],
        "partitions": [
            {
                "topic": p.topic,
                "partition": p.partition,
                "fetcher_lag": p.fetcher_lag,
                "fetched": p.fetched,
                "checker_lag": p.checker_lag,
                "committed_offset": p.committed_offset,
                "high_watermark": p.high_watermark,
                "gap": p.gap,
                "owner": p.owner,
                "stream": p.stream,
                "fetcher_source": p.fetcher_source,
                "problems": list(p.problems),
            }
            for p in client.partitions
        ],
        "streams": [
            {
                "topic": s.topic,
                "thread_id": s.thread_id,
                "queue_size": s.queue_size,
                "capacity": s.capacity,
                "state": s.state,
                "partitions": list(s.partitions),
                "owner": s.owner,
                "source": s.source,
            }
            for s in client.streams
        ],
        "notes": list(client.notes),
    }


def maxlag_document(report: MaxLagReport) -> dict[str, Any]:
    return {
        "schema": SCHEMA,
        "version": VERSION,
        "taken_at": _iso_time(report.taken_at_ms),
        "taken_at_ms": report.taken_at_ms,
        "metrics_source": {"kind": report.metrics_source_kind, "source": report.metrics_source},
        "lag_sources": dict(report.lag_sources),
        "healthy": not report.unhealthy,
        "complete": not report.incomplete,
        "timings_ms": dict(report.timings),
        "notes": list(report.notes),
        "errors": list(report.errors),
        "clients": [client_document(client) for client in report.clients],
    }


def write_json(stream: TextIO, report: MaxLagReport) -> None:
    stream.write(json.dumps(maxlag_document(report), separators=(",", ":")) + "\n")
