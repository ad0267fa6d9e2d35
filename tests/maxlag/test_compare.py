"""The comparison logic on hand-built inputs, with every number computed by hand in the comments."""

from __future__ import annotations

import dataclasses

import pytest

from kafkadiag.collect.jmx.kafka import extract_clients
from kafkadiag.consumer_metrics import (
    NAMING_081,
    NAMING_082,
    NAMING_NEW,
    NEW_CONSUMER,
    ClientMetrics,
    FetcherPartitionLag,
    MBeanReading,
    MetricsReading,
    StreamQueue,
    consumer_settings,
)
from kafkadiag.lag.model import GroupLag, LagReport, PartitionLag
from kafkadiag.maxlag.compare import (
    DEFAULT_LAG_THRESHOLD,
    buffer_bound,
    compare,
    compare_client,
    consumer_id_of_fetcher,
    group_for_client,
    lag_threshold_for,
)
from kafkadiag.maxlag.model import (
    VERDICT_CONSUMER_BEHIND,
    VERDICT_FETCH_BOUND,
    VERDICT_FETCHER_ABSENT,
    VERDICT_FETCHER_STALE,
    VERDICT_HEALTHY,
    VERDICT_STREAMS_NOT_DRAINING,
)
from kafkadiag.rules.metricsfamily import verdict_rules
from kafkadiag.rules.registry import rules_of

CONSUMER = "g_host1-1700000000000-abcd1234"
FETCHER = f"ConsumerFetcherThread-{CONSUMER}-0-0"
SYSTEM = {
    "queued.max.message.chunks": "2",
    "fetch.message.max.bytes": "1000",
    "auto.commit.interval.ms": "200",
}
SETTINGS = consumer_settings("old", SYSTEM)


def lag_name(partition: int) -> str:
    return (
        f"kafka.server:type=FetcherLagMetrics,name=ConsumerLag,clientId=g,topic=orders,partition={partition}"
    )


def queue_name(thread: int) -> str:
    return (
        "kafka.consumer:type=ZookeeperConsumerConnector,name=FetchQueueSize,"
        f"clientId=g,topic=orders,threadId={thread}"
    )


def client(
    max_lag: int | None,
    lags: tuple[int | None, int | None],
    queues: tuple[int, int],
    threads: tuple[tuple[str, str], ...] = ((FETCHER, "WAITING"),),
) -> ClientMetrics:
    # 40 records consumed, 4000 bytes fetched: 100 bytes per record; 5 records/s.
    return ClientMetrics(
        client_id="g",
        consumer="old",
        naming=NAMING_082,
        max_lag=max_lag,
        max_lag_source="kafka.consumer:type=ConsumerFetcherManager,name=MaxLag,clientId=g",
        partitions=tuple(FetcherPartitionLag("orders", p, lags[p], lag_name(p)) for p in (0, 1)),
        queues=tuple(StreamQueue("orders", str(t), queues[t], queue_name(t)) for t in (0, 1)),
        records_consumed=40,
        bytes_fetched=4000,
        consume_rate=5.0,
        fetcher_threads=threads,
        fetcher_threads_attributed=True,
    )


def group(committed: tuple[int, int], high_watermarks: tuple[int, int]) -> GroupLag:
    partitions = tuple(
        PartitionLag(
            group="g",
            topic="orders",
            partition=p,
            committed_offset=committed[p],
            high_watermark=high_watermarks[p],
            log_start_offset=0,
            lag=high_watermarks[p] - committed[p],
            owner=f"{CONSUMER}-{p}",
        )
        for p in (0, 1)
    )
    return GroupLag(
        group="g",
        source="zookeeper",
        state="Active",
        members=(),
        partitions=partitions,
        topics=(),
        total_lag=sum(p.lag or 0 for p in partitions),
        max_lag=max(p.lag or 0 for p in partitions),
        findings=(),
        errors=(),
    )


def test_the_bound_is_streams_times_chunks_times_fetch_bytes_plus_what_is_in_hand_and_uncommitted() -> None:
    # GIVEN 3 streams, 2 fetchers, queued.max.message.chunks=4, fetch.message.max.bytes=2048,
    # 128 bytes per record (12800 / 100), 10 records/s, auto-commit every 1500 ms
    settings = consumer_settings(
        "old",
        {
            "queued.max.message.chunks": "4",
            "fetch.message.max.bytes": "2048",
            "auto.commit.interval.ms": "1500",
        },
    )
    metrics = ClientMetrics(
        "c", "old", NAMING_082, records_consumed=100, bytes_fetched=12800, consume_rate=10.0
    )
    # WHEN the bound is computed
    bound = buffer_bound(metrics, settings, streams=3, fetchers=2)
    # THEN queued = 3 x 4 x 2048 = 24576 bytes; in flight = 3 x (4 + 1) + 2 = 17 chunks = 34816 bytes
    assert bound.queued_bytes == 24576
    assert (bound.in_flight_chunks, bound.in_flight_bytes) == (17, 34816)
    # ... = 34816 / 128 = 272 records; uncommitted = 10/s x 1.5 s + 1 = 16; total 288
    assert (bound.average_record_bytes, bound.in_flight_records) == (128.0, 272)
    assert (bound.uncommitted_records, bound.records) == (16, 288)


def test_without_auto_commit_or_record_size_the_bound_says_what_it_cannot_count() -> None:
    settings = consumer_settings("old", {"auto.commit.enable": "false"})
    bound = buffer_bound(
        ClientMetrics("c", "old", NAMING_082, consume_rate=3.0), settings, streams=1, fetchers=1
    )
    # 1 x (2 + 1) + 1 = 4 chunks of the 1 MiB default
    assert (bound.in_flight_chunks, bound.in_flight_bytes) == (4, 4 * 1024 * 1024)
    assert bound.in_flight_records is None and bound.uncommitted_records is None and bound.records is None
    assert any("record size is unknown" in note for note in bound.notes)
    assert any("auto-commit is off" in note for note in bound.notes)


def test_settings_come_from_the_config_file_then_system_properties_then_kafka_defaults() -> None:
    settings = consumer_settings(
        "old",
        {"queued.max.message.chunks": "5", "fetch.message.max.bytes": "oops"},
        config={"queued.max.message.chunks": "7"},
        config_path="consumer.properties",
    )
    chunks = settings.get("queued.max.message.chunks")
    assert chunks is not None and (chunks.value, chunks.source) == (
        "7",
        "consumer config consumer.properties",
    )
    fetch = settings.get("fetch.message.max.bytes")
    assert fetch is not None and (fetch.value, fetch.source) == ("1048576", "Kafka 0.8.2 default")
    assert settings.problems == (
        "fetch.message.max.bytes='oops' (JVM system property) is not a positive number: ignored",
    )
    interval = settings.get("auto.commit.interval.ms")
    assert interval is not None and (interval.value, interval.source) == ("60000", "Kafka 0.8.2 default")


def test_lag_threshold_is_one_fetch_in_records_or_explicit_or_a_default() -> None:
    # 1000 bytes per fetch / 100 bytes per record = 10 records
    assert lag_threshold_for(client(0, (0, 0), (0, 0)), SETTINGS, None)[0] == 10
    assert lag_threshold_for(client(0, (0, 0), (0, 0)), SETTINGS, 77) == (77, "--lag-threshold")
    unknown_size = ClientMetrics("g", "old", NAMING_082)
    assert lag_threshold_for(unknown_size, SETTINGS, None)[0] == DEFAULT_LAG_THRESHOLD


def test_full_queue_is_streams_not_draining_naming_the_full_and_the_starving_stream() -> None:
    # GIVEN stream 0's queue full (2 of 2), stream 1's empty, MaxLag 0 (frozen: the fetcher is
    # blocked), committed 26/7 against high watermarks 50/20
    result = compare_client(
        client(0, (0, 0), (2, 0)), SETTINGS, group((26, 7), (50, 20)), thread_names_read=True
    )
    # THEN the verdict names the full queue, its thread and partition, and the starving one
    assert result.verdict == VERDICT_STREAMS_NOT_DRAINING and not result.healthy
    # the catalogue rule whose verdict it is, and its title
    assert result.rule == "KD701" and result.title.startswith("A full stream queue blocks the fetcher")
    assert "orders thread 0 (partitions 0)" in result.summary
    assert "empty (starving): orders thread 1" in result.summary
    assert [(s.thread_id, s.state, s.partitions, s.owner) for s in result.streams] == [
        ("0", "full", (0,), f"{CONSUMER}-0"),
        ("1", "empty", (1,), f"{CONSUMER}-1"),
    ]
    # ... per partition: checker lag 50-26 = 24 and 20-7 = 13, fetcher lag 0, gap 24 and 13
    assert [(p.checker_lag, p.fetcher_lag, p.gap, p.stream) for p in result.partitions] == [
        (24, 0, 24, "orders/0"),
        (13, 0, 13, "orders/1"),
    ]
    assert (result.checker_lag_total, result.fetcher_lag_total, result.gap_total) == (37, 0, 37)
    # ... evidence quotes the queue MBean with its value and capacity, and the remedy says what to do
    assert f"{queue_name(0)} = 2 of 2 chunks (thread {CONSUMER}-0), partitions 0" in result.evidence
    assert "capacity: queued.max.message.chunks=2 (JVM system property)" in result.evidence
    assert "jstack -l PID" in result.remedy and f"{CONSUMER}-0" in result.remedy and FETCHER in result.remedy


def test_fetcher_lag_above_one_fetch_with_empty_queues_is_fetch_bound() -> None:
    # GIVEN MaxLag 190 with lags 190/185 (threshold: 10 records per fetch), queues empty,
    # checker lags 191/186
    result = compare_client(client(190, (190, 185), (0, 0)), SETTINGS, group((10, 15), (201, 201)))
    assert result.verdict == VERDICT_FETCH_BOUND and result.rule == "KD702"
    assert "MaxLag 190 > 10" in result.summary and "2 of 2 queues empty" in result.summary
    assert [p.gap for p in result.partitions] == [1, 1]
    assert "fetch.message.max.bytes=1000 (JVM system property)" in result.remedy


def test_gap_beyond_what_the_consumer_can_hold_is_a_stale_fetcher() -> None:
    # GIVEN MaxLag 0, queues empty, but committed offsets 200 and 150 behind the high watermarks.
    # The bound: 2 x (2 + 1) + 1 = 7 chunks x 1000 bytes / 100 = 70 records + 5/s x 0.2 s + 1 = 2 -> 72
    result = compare_client(client(0, (0, 0), (0, 0)), SETTINGS, group((0, 50), (200, 200)))
    assert result.bound is not None and result.bound.records == 72
    assert result.gap_total == 350
    assert result.verdict == VERDICT_FETCHER_STALE and result.rule == "KD704"
    assert (
        "trail the fetch offsets by 350 records, more than the consumer can hold: 72 records"
        in result.summary
    )


def test_no_fetcher_thread_or_never_fetched_is_stale_even_within_the_bound() -> None:
    # GIVEN thread names were read and there is no ConsumerFetcherThread for the client
    no_thread = compare_client(
        client(0, (0, 0), (0, 0), threads=()), SETTINGS, group((5, 5), (5, 5)), None, True
    )
    assert no_thread.verdict == VERDICT_FETCHER_STALE
    assert "no ConsumerFetcherThread-* thread runs" in no_thread.summary
    # GIVEN every partition's ConsumerLag still reads -1 (never fetched)
    never = compare_client(client(0, (None, None), (0, 0)), SETTINGS, group((5, 5), (5, 5)))
    assert (
        never.verdict == VERDICT_FETCHER_STALE and "never fetched any of its 2 partition(s)" in never.summary
    )
    assert [p.fetched for p in never.partitions] == [False, False]


def test_both_near_zero_is_healthy_and_a_gap_within_the_bound_too() -> None:
    # GIVEN MaxLag 0, queues 1 and 0, committed 1 behind on partition 1 (consumed, not committed yet)
    result = compare_client(client(0, (0, 0), (1, 0)), SETTINGS, group((30, 29), (30, 30)))
    assert result.verdict == VERDICT_HEALTHY and result.healthy and result.complete
    assert result.rule is None and result.title == "Healthy: fetcher caught up, streams draining"
    assert (
        result.summary == "client g: healthy: MaxLag 0 (threshold 10), gap 1 records within the bound of 72; "
        "queues 1, 0 of 2"
    )


def test_a_client_without_fetcher_metrics_is_absent() -> None:
    result = compare_client(ClientMetrics("g", "old", "none"), SETTINGS, None)
    assert result.verdict == VERDICT_FETCHER_ABSENT and not result.healthy and result.rule == "KD705"
    assert not result.complete and any("--group" in note for note in result.notes)
    metrics_only = compare_client(ClientMetrics("g", "old", "none"), SETTINGS, None, checker_requested=False)
    assert metrics_only.complete and any("--zookeeper" in note for note in metrics_only.notes)


def test_without_checker_lag_the_fetcher_side_still_gives_a_verdict_marked_incomplete() -> None:
    result = compare_client(client(0, (0, 0), (2, 0)), SETTINGS, None)
    assert result.verdict == VERDICT_STREAMS_NOT_DRAINING and not result.complete
    assert [p.checker_lag for p in result.partitions] == [None, None]


def test_new_consumer_records_lag_max_above_one_fetch_is_consumer_behind() -> None:
    metrics = ClientMetrics(
        "app",
        NEW_CONSUMER,
        NAMING_NEW,
        max_lag=5000,
        max_lag_source="consumer-fetch-manager-metrics records-lag-max",
        partitions=(FetcherPartitionLag("t", 0, 5000, "x"),),
        consume_rate=100.0,
        bytes_rate=100000.0,
    )
    settings = consumer_settings(NEW_CONSUMER, {})
    # 1048576 bytes per partition fetch / 1000 bytes per record = 1048 records
    result = compare_client(metrics, settings, None)
    assert result.lag_threshold == 1048
    assert result.verdict == VERDICT_CONSUMER_BEHIND and result.rule == "KD703"


def test_fetcher_thread_names_give_the_consumer_id() -> None:
    assert consumer_id_of_fetcher(FETCHER) == CONSUMER
    assert consumer_id_of_fetcher("ConsumerFetcherThread-my-group_h-1-2-3-ab-1-12") == "my-group_h-1-2-3-ab"
    assert consumer_id_of_fetcher("main") is None


def test_a_client_maps_to_the_group_of_its_name_or_the_only_group() -> None:
    g = group((0, 0), (0, 0))
    assert group_for_client("g", [g]) is g
    assert group_for_client("other-client", [g]) is g
    other = GroupLag("h", "zookeeper", None, (), (), (), 0, None, (), ())
    assert group_for_client("x", [g, other]) is None


def test_a_group_in_zookeeper_and_kafka_counts_where_the_client_commits() -> None:
    # GIVEN the same group read from both sources (an old consumer with dual commit), Kafka first
    # as the lag report sorts them
    in_zookeeper = group((0, 0), (0, 0))
    in_kafka = dataclasses.replace(in_zookeeper, source="kafka")
    groups = [in_kafka, in_zookeeper]
    # THEN the old consumer's checker lag is ZooKeeper's, the new consumer's Kafka's, by name or not
    assert group_for_client("g", groups) is in_zookeeper
    assert group_for_client("g", groups, "new") is in_kafka
    assert group_for_client("other", groups) is in_zookeeper
    # AND the fetcher columns land on that group's rows only
    from kafkadiag.maxlag.columns import fetcher_columns

    report = compare([client(0, (0, 0), (2, 0))], {"g": SETTINGS}, LagReport(0, (), tuple(groups), (), ()))
    assert {key[:2] for key in fetcher_columns(report)} == {("g", "zookeeper")}


def test_compare_reports_an_expected_client_missing_from_the_metrics_as_absent() -> None:
    report = compare([client(0, (0, 0), (0, 0))], {"*": SETTINGS}, None, expected_clients=["g", "billing"])
    assert [(c.client_id, c.verdict) for c in report.clients] == [
        ("g", VERDICT_HEALTHY),
        ("billing", VERDICT_FETCHER_ABSENT),
    ]
    assert report.unhealthy and report.incomplete


def bean(name: str, **attributes: object) -> MBeanReading:
    from kafkadiag.collect.jmx.names import parse_object_name

    domain, properties = parse_object_name(name)
    return MBeanReading(name, domain, tuple(properties), tuple(sorted(attributes.items())))


def reading(*beans: MBeanReading, threads: tuple[tuple[str, str], ...] = ()) -> MetricsReading:
    return MetricsReading("jmx", "test", 0, 0.0, beans=beans, threads=threads)


def test_extracts_kafka_0_8_2_names() -> None:
    (metrics,) = extract_clients(
        reading(
            bean("kafka.consumer:type=ConsumerFetcherManager,name=MaxLag,clientId=g", Value=12),
            bean("kafka.consumer:type=ConsumerFetcherManager,name=MinFetchRate,clientId=g", Value=9.5),
            bean(lag_name(0), Value=12),
            bean(lag_name(1), Value=-1),
            bean(queue_name(0), Value=2),
            bean(queue_name(1), Value=0),
            bean(
                "kafka.consumer:type=ConsumerTopicMetrics,name=MessagesPerSec,clientId=g",
                Count=50,
                OneMinuteRate=2.5,
            ),
            bean("kafka.consumer:type=ConsumerTopicMetrics,name=BytesPerSec,clientId=g", Count=6000),
            bean(
                "kafka.consumer:type=ConsumerTopicMetrics,name=BytesPerSec,clientId=g,topic=orders",
                Count=6000,
            ),
            threads=((FETCHER, "WAITING"), ("main", "RUNNABLE")),
        )
    )
    assert (metrics.client_id, metrics.naming, metrics.max_lag, metrics.min_fetch_rate) == (
        "g",
        NAMING_082,
        12,
        9.5,
    )
    assert [(p.partition, p.lag) for p in metrics.partitions] == [(0, 12), (1, None)]
    assert [(q.thread_id, q.size) for q in metrics.queues] == [("0", 2), ("1", 0)]
    # 6000 bytes / 50 records = 120 bytes per record (the all-topics meters, not the sum with per-topic)
    assert (metrics.records_consumed, metrics.bytes_fetched, metrics.average_record_bytes) == (
        50,
        6000,
        120.0,
    )
    assert metrics.consume_rate == 2.5
    assert metrics.fetcher_threads == ((FETCHER, "WAITING"),)


def test_fetcher_threads_belong_to_the_only_client_whatever_its_client_id() -> None:
    # GIVEN client.id "app-1" for group "orders": the fetcher thread names the group, not the client
    thread = ("ConsumerFetcherThread-orders_h-1700000000000-abcd1234-0-1", "WAITING")
    lag = "kafka.consumer:type=ConsumerFetcherManager,name=MaxLag,clientId="
    (only,) = extract_clients(reading(bean(lag + "app-1", Value=0), threads=(thread,)))
    assert only.fetcher_threads == (thread,) and only.fetcher_threads_attributed
    # GIVEN two clients in one JVM: threads go by group prefix, or stay unattributed
    first, second = extract_clients(
        reading(bean(lag + "app-1", Value=0), bean(lag + "orders", Value=0), threads=(thread,))
    )
    assert (first.client_id, first.fetcher_threads, first.fetcher_threads_attributed) == ("app-1", (), False)
    assert (second.client_id, second.fetcher_threads, second.fetcher_threads_attributed) == (
        "orders",
        (thread,),
        True,
    )
    # ... so the client whose threads cannot be told apart is not called stale for want of one
    result = compare_client(first, SETTINGS, None, thread_names_read=True)
    assert result.verdict == VERDICT_HEALTHY


def test_extracts_kafka_0_8_1_quoted_names() -> None:
    consumer = "my-group_host-a-1700000000000-abcd1234"
    (metrics,) = extract_clients(
        reading(
            bean('"kafka.consumer":type="ConsumerFetcherManager",name="my-client-MaxLag"', Value=3),
            bean(
                '"kafka.server":type="FetcherLagMetrics",name="my-client-host_broker-1-port_9092-my-topic-2-7-ConsumerLag"',
                Value=3,
            ),
            bean(
                f'"kafka.consumer":type="ZookeeperConsumerConnector",name="my-client-my-group-my-topic-2-{consumer}-1-FetchQueueSize"',
                Value=10,
            ),
            bean(
                '"kafka.consumer":type="ConsumerTopicMetrics",name="my-client-AllTopicsMessagesPerSec"',
                Count=10,
            ),
            bean(
                '"kafka.consumer":type="ConsumerTopicMetrics",name="my-client-AllTopicsBytesPerSec"',
                Count=1000,
            ),
        )
    )
    assert (metrics.client_id, metrics.naming, metrics.max_lag) == ("my-client", NAMING_081, 3)
    assert [(p.topic, p.partition, p.lag) for p in metrics.partitions] == [("my-topic-2", 7, 3)]
    assert [(q.topic, q.thread_id, q.size, q.consumer_id) for q in metrics.queues] == [
        ("my-topic-2", "1", 10, consumer)
    ]
    assert metrics.average_record_bytes == 100.0


@pytest.mark.parametrize("per_partition_beans", [True, False], ids=["kafka-1.1+", "kafka-0.10"])
def test_extracts_the_new_consumer_both_per_partition_spellings(per_partition_beans: bool) -> None:
    client_bean = "kafka.consumer:type=consumer-fetch-manager-metrics,client-id=app"
    beans = [
        bean(
            client_bean,
            **{"records-lag-max": 42.0, "records-consumed-rate": 10.0, "bytes-consumed-rate": 2000.0},
            **({} if per_partition_beans else {"orders-3.records-lag": 42.0, "orders-1.records-lag": 0.0}),
        )
    ]
    if per_partition_beans:
        beans += [
            bean(f"{client_bean},topic=orders,partition=3", **{"records-lag": 42.0}),
            bean(f"{client_bean},topic=orders,partition=1", **{"records-lag": 0.0}),
            bean(f"{client_bean},topic=orders", **{"records-consumed-rate": 10.0}),
        ]
    (metrics,) = extract_clients(reading(*beans))
    assert (metrics.client_id, metrics.consumer, metrics.max_lag) == ("app", NEW_CONSUMER, 42)
    assert [(p.partition, p.lag) for p in metrics.partitions] == [(1, 0), (3, 42)]
    assert metrics.average_record_bytes == 200.0


def test_lag_report_for_compare() -> None:
    # compare() takes the lag engine's report as is
    report = compare(
        [client(0, (0, 0), (0, 0))],
        {"g": SETTINGS},
        LagReport(0, (("zookeeper", "zk:2181"),), (group((3, 3), (3, 3)),), (), ()),
    )
    (only,) = report.clients
    assert (
        only.group == "g"
        and only.checker_lag_total == 0
        and report.lag_sources == (("zookeeper", "zk:2181"),)
    )


def test_partition_columns_for_the_lag_table() -> None:
    from kafkadiag.maxlag.columns import fetcher_columns
    from kafkadiag.report.maxlag_table import FETCHER_COLUMNS, fetcher_cells

    report = compare(
        [client(0, (0, 0), (2, 0))], {"g": SETTINGS}, LagReport(0, (), (group((26, 7), (50, 20)),), (), ())
    )
    columns = {
        key: dict(zip(FETCHER_COLUMNS, fetcher_cells(numbers)))
        for key, numbers in fetcher_columns(report).items()
    }
    assert set(columns) == {("g", "zookeeper", "orders", 0), ("g", "zookeeper", "orders", 1)}
    assert columns[("g", "zookeeper", "orders", 0)] == {
        "FETCHER-LAG": "0",
        "GAP": "24",
        "STREAM": "orders/0",
        "QUEUE": "2/2",
        "VERDICT": "streams-not-draining",
    }
    assert tuple(columns[("g", "zookeeper", "orders", 1)]) == FETCHER_COLUMNS


def test_every_verdict_rule_of_the_catalogue_is_tried_once_absent_first() -> None:
    # GIVEN the KD7 family of the catalogue
    family = {rule.code for rule in rules_of("cluster") if rule.code.startswith("KD7")}
    # THEN the comparison tries each of its rules once, absent metrics before anything else
    tried = [rule.code for rule in verdict_rules()]
    assert sorted(tried) == sorted(family) and len(tried) == len(set(tried))
    assert tried[:2] == ["KD705", "KD701"]
