"""`lag --format json` is written as text, member by member: its bytes must be exactly those of
json.dumps over the documented dict (kafkadiag.report.lag_json.lag_document), on real reports."""

from __future__ import annotations

import io
import json
import math

from kafkadiag.collect.gather import Collector, LagTarget
from kafkadiag.collect.lagread import take_samples
from kafkadiag.lag.model import LagReport, PartitionLag
from kafkadiag.lag.window import evaluate_window
from kafkadiag.report.lag_json import WRITTEN_PARTITION_FIELDS, lag_document, write_json
from tests.infra import workload
from tests.infra.workload import Cluster


def reference_text(report: LagReport) -> str:
    return json.dumps(lag_document(report), separators=(",", ":"), check_circular=False) + "\n"


def written_text(report: LagReport) -> str:
    stream = io.StringIO()
    write_json(stream, report)
    return stream.getvalue()


def varied_groups(cluster: Cluster) -> tuple[str, ...]:
    """An old consumer with members and owners, a new group with a non-ASCII name, a group
    committed past the high watermark (a finding), and a group nobody knows."""
    topic = cluster.topic(2, {0: 10, 1: 4})
    old = cluster.old_group()
    consumer = old.join({topic: 1}, host="h\u00f6st")
    old.own(workload.range_assignment({topic: 2}, {consumer: {topic: 1}}))
    old.commit({(topic, 0): 6, (topic, 1): 4})
    non_ascii = workload.unique("gr\u00fcppe-\u2603")
    workload.commit_offsets_without_joining(cluster.bootstrap, non_ascii, {(topic, 0): 1, (topic, 1): 2})
    ahead = workload.unique("ahead")
    workload.commit_offsets_without_joining(cluster.bootstrap, ahead, {(topic, 0): 50})
    return old.group, non_ascii, ahead, workload.unique("nobody")


def test_one_snapshot_is_written_as_json_dumps_writes_it(cluster: Cluster) -> None:
    # GIVEN groups of every source and shape, read from real servers
    groups = varied_groups(cluster)
    target = LagTarget(bootstrap_servers=cluster.bootstrap, zookeeper=cluster.zookeeper, groups=groups)
    with Collector(target) as collector:
        snapshots = take_samples(collector, 1, 0.0)
    report = evaluate_window(snapshots, 0)
    # THEN the report holds what makes the writer work (members, findings, an unknown group)
    assert any(group.members for group in report.groups)
    assert any(group.findings for group in report.groups)
    assert any(group.exists is False for group in report.groups)
    # and its text is json.dumps's, byte for byte
    assert written_text(report) == reference_text(report)


def test_a_sampled_window_with_rates_and_statuses_is_written_as_json_dumps_writes_it(
    cluster: Cluster,
) -> None:
    # GIVEN three samples of the same groups: rates, statuses and completeness are floats/strings
    groups = varied_groups(cluster)
    target = LagTarget(bootstrap_servers=cluster.bootstrap, zookeeper=cluster.zookeeper, groups=groups)
    with Collector(target) as collector:
        snapshots = take_samples(collector, 3, 0.2)
    report = evaluate_window(snapshots, 0)
    partitions = [partition for group in report.groups for partition in group.partitions]
    assert any(partition.status is not None for partition in partitions)
    assert any(partition.consumption_rate is not None for partition in partitions)
    # THEN its text is json.dumps's, byte for byte
    assert written_text(report) == reference_text(report)


def test_values_json_spells_by_name_or_escapes_are_written_as_json_dumps_writes_them(
    cluster: Cluster,
) -> None:
    # GIVEN a real report whose partitions are given the values json.dumps treats apart: the
    # non-finite floats, control characters (DEL, C1, a lone surrogate), non-ASCII text, 2**64
    groups = varied_groups(cluster)
    target = LagTarget(bootstrap_servers=cluster.bootstrap, zookeeper=cluster.zookeeper, groups=groups)
    with Collector(target) as collector:
        report = evaluate_window(take_samples(collector, 1, 0.0), 0)
    group = report.groups[0]
    odd = group.partitions[0]._replace(
        committed_offset=2**64,
        since_progress_s=math.inf,
        consumption_rate=-math.inf,
        production_rate=math.nan,
        catch_up_s=1e16,
        complete=0.1,
        since_progress_at_least=True,
        owner="\x7f\x9b\ud800 \u00e9",
        owner_host="h\u00f6st\n",
        problems=("watermarks unknown: \u2603", "tab\there"),
        lag=None,
    )
    replaced = LagReport(
        taken_at_ms=report.taken_at_ms,
        sources=report.sources,
        groups=(type(group)(**{**group.__dict__, "partitions": (odd, *group.partitions[1:])}),),
        errors=("a \x1b[2J error",),
        stats=report.stats,
    )
    # THEN its text is json.dumps's, byte for byte (the partition is partial: problems, no lag)
    text = written_text(replaced)
    assert text == reference_text(replaced)
    assert json.loads(text)["groups"][0]["partitions"][0]["partial"] is True


def test_the_writer_writes_every_field_of_a_partition_in_order() -> None:
    # a field added to PartitionLag must be written by the text writer too
    assert WRITTEN_PARTITION_FIELDS == PartitionLag._fields
