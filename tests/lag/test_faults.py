"""Faults and bad data against real servers: unreachable or frozen ZooKeeper and brokers, a
session lost mid-scan, a partition without a leader, unknown groups and topics, malformed
znodes. Each run ends in bounded time with the right exit code, a message saying what to check,
and partial results flagged per partition."""

from __future__ import annotations

import json
import time
from typing import Any

import pytest

from kafkadiag.exitcodes import ExitCode
from tests.infra import workload
from tests.infra.cli import group_of, partitions_of, run
from tests.infra.servers import ServerProcess, free_port
from tests.infra.workload import Cluster

TIMEOUT_S = 2.0
# Connecting, reading and reporting may add a little to --timeout, never multiples of it.
BOUND_S = 3 * TIMEOUT_S + 2


def timed(args: list[str]) -> tuple[int, str, str, float]:
    started = time.monotonic()
    code, out, err = run([*args, "--timeout", str(TIMEOUT_S)])
    return code, out, err, time.monotonic() - started


def test_zookeeper_unreachable_exits_3_saying_what_to_check() -> None:
    code, out, err, seconds = timed(["lag", "--zookeeper", f"127.0.0.1:{free_port()}", "--group", "g"])
    assert code == ExitCode.INPUT_UNREADABLE, (out, err)
    assert "cannot connect to ZooKeeper" in err and "Check --zookeeper" in err
    assert seconds < BOUND_S


def test_broker_unreachable_exits_3_saying_what_to_check() -> None:
    code, out, err, seconds = timed(["lag", "--bootstrap-server", f"127.0.0.1:{free_port()}", "--group", "g"])
    assert code == ExitCode.INPUT_UNREADABLE, (out, err)
    assert "cannot reach a Kafka broker" in err and "Check --bootstrap-server" in err
    assert seconds < BOUND_S


def test_check_that_cannot_reach_anything_exits_3() -> None:
    code, out, err, seconds = timed(
        ["check", "--bootstrap-server", f"127.0.0.1:{free_port()}", "--all-groups"]
    )
    assert code == ExitCode.INPUT_UNREADABLE, (out, err)
    assert seconds < BOUND_S


def test_frozen_zookeeper_is_bounded(own_zookeeper: ServerProcess) -> None:
    # GIVEN a ZooKeeper that accepts connections but answers nothing (SIGSTOP)
    own_zookeeper.pause()
    try:
        code, out, err, seconds = timed(["lag", "--zookeeper", own_zookeeper.address, "--all-groups"])
    finally:
        own_zookeeper.resume()
    assert code == ExitCode.INPUT_UNREADABLE, (out, err)
    assert "ZooKeeper" in err and seconds < BOUND_S


def test_frozen_broker_is_bounded(own_broker: ServerProcess) -> None:
    own_broker.pause()
    try:
        code, out, err, seconds = timed(["lag", "--bootstrap-server", own_broker.address, "--all-groups"])
    finally:
        own_broker.resume()
    assert code == ExitCode.INPUT_UNREADABLE, (out, err)
    assert "cannot reach a Kafka broker" in err and seconds < BOUND_S


def test_session_lost_mid_scan_flags_what_was_not_read(
    own_zookeeper: ServerProcess, broker: ServerProcess, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN an old-consumer group with 400 partitions committed, on a ZooKeeper that freezes
    # after kafkadiag listed the offsets and before it read them
    cluster = Cluster(own_zookeeper.address, broker.address)
    try:
        topic = cluster.topic(4, {0: 5, 1: 5, 2: 5, 3: 5})
        group = cluster.old_group()
        group.commit({(topic, partition): 1 for partition in range(4)})
        other = f"{topic}-other"
        cluster.client.ensure_path(f"/consumers/{group.group}/offsets/{other}")
        transaction = cluster.client.transaction()
        for partition in range(400):
            transaction.create(f"/consumers/{group.group}/offsets/{other}/{partition}", b"7")
        transaction.commit()
        from kafkadiag.collect.zookeeper import scan as collector

        original_wave = collector._WaveReader._wave

        def freezing_wave(self: Any, paths: Any, method: str) -> Any:
            if self.round_trips == 3:  # the wave that reads every offset znode
                own_zookeeper.pause()
            return original_wave(self, paths, method)

        monkeypatch.setattr(collector._WaveReader, "_wave", freezing_wave)
        # WHEN kafkadiag reads the group
        try:
            code, out, err, seconds = timed(
                ["lag", "--zookeeper", cluster.zookeeper, "--group", group.group, "--format", "json"]
            )
        finally:
            own_zookeeper.resume()
        # THEN it stops waiting in bounded time, exits 3, and every unread offset is flagged
        assert code == ExitCode.INPUT_UNREADABLE, (out, err)
        assert seconds < BOUND_S
        document = json.loads(out)
        assert document["partial"] is True
        assert any("partial" in error for error in document["errors"]), document["errors"]
        partitions = partitions_of(document, group.group)
        assert len(partitions) == 404
        # (SIGSTOP lands asynchronously: the server may still answer a few requests in flight)
        unread = [entry for entry in partitions.values() if entry["committed_offset"] is None]
        assert len(unread) > 300
        assert all(entry["partial"] and "ZooKeeper" in " ".join(entry["problems"]) for entry in unread)
        read = [entry for entry in partitions.values() if entry["committed_offset"] is not None]
        assert all(entry["committed_offset"] in (1, 7) for entry in read)

        # (when SIGSTOP lands late, a later wave (owners, registrations) may be cut instead: a
        # read offset is then flagged for that ZooKeeper reason; the other topic exists only in
        # ZooKeeper, so its offsets that were read lack watermarks, and say so)
        def explained(entry: dict[str, Any]) -> bool:
            problems = " ".join(entry["problems"])
            return "ZooKeeper" in problems or (entry["topic"] == other and "UNKNOWN_TOPIC" in problems)

        assert all(not entry["partial"] or explained(entry) for entry in read), [
            entry["problems"] for entry in read if not explained(entry)
        ][:3]
        assert "results are partial" in err
    finally:
        try:
            cluster.close()
        except Exception:  # noqa: BLE001 - the frozen server may have expired these sessions
            pass


def test_malformed_znodes_are_flagged_per_partition_and_the_rest_is_read(cluster: Cluster) -> None:
    # GIVEN a group with a non-numeric offset, a registration that is not JSON, and a topic
    # registration that is not JSON, next to good offsets
    topic = cluster.topic(3, {0: 4, 1: 4, 2: 4})
    group = cluster.old_group()
    group.commit({(topic, 0): 1, (topic, 1): "12abc", (topic, 2): 4})
    cluster.client.create(
        f"/consumers/{group.group}/ids/{group.group}_h-1-deadbeef", b"{not json", makepath=True
    )
    broken_topic = workload.unique("broken")
    cluster.client.create(f"/brokers/topics/{broken_topic}", b"[1,2")
    group.commit({(broken_topic, 0): 3})
    # WHEN kafkadiag reads it
    code, out, err = run(
        ["lag", "--zookeeper", cluster.zookeeper, "--group", group.group, "--format", "json"]
    )
    # THEN exit 3 says the results are partial; the bad partition quotes its znode; the good
    # ones are exact
    assert code == ExitCode.INPUT_UNREADABLE, (out, err)
    document = json.loads(out)
    partitions = partitions_of(document, group.group)
    assert partitions[(topic, 0)]["lag"] == 3 and partitions[(topic, 2)]["lag"] == 0
    bad = partitions[(topic, 1)]
    assert bad["committed_offset"] is None and bad["lag"] is None and bad["partial"]
    assert bad["problems"] == [
        f"offset unreadable: /consumers/{group.group}/offsets/{topic}/1 holds '12abc' "
        "(not a plain decimal number)"
    ]
    findings = group_of(document, group.group)["findings"]
    assert {"unreadable-offset", "malformed-registration"} <= {finding["code"] for finding in findings}
    # each by its catalogue rule, the code `kafkadiag explain` takes
    assert {"KD603", "KD605"} <= {finding["rule"] for finding in findings}
    member = group_of(document, group.group)["members"][0]
    assert "not a consumer registration" in member["error"]
    broken = partitions[(broken_topic, 0)]
    assert broken["lag"] is None and any("UNKNOWN_TOPIC_OR_PARTITION" in p for p in broken["problems"])
    assert "results are partial" in err


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        ("12_000", "not a plain decimal number"),  # Python's int() would accept it
        (" 42\n", "not a plain decimal number"),
        (str(2**70), "beyond a signed 64-bit offset"),
        ("-5", "a negative offset"),
    ],
)
def test_offsets_are_parsed_as_kafka_parses_them(cluster: Cluster, raw: str, why: str) -> None:
    topic = cluster.topic(2, {0: 4, 1: 4})
    group = cluster.old_group()
    group.commit({(topic, 0): 2, (topic, 1): raw})
    code, out, err = run(
        ["lag", "--zookeeper", cluster.zookeeper, "--group", group.group, "--format", "json"]
    )
    assert code == ExitCode.INPUT_UNREADABLE, (out, err)
    partitions = partitions_of(json.loads(out), group.group)
    bad = partitions[(topic, 1)]
    assert bad["committed_offset"] is None and bad["lag"] is None
    assert bad["problems"] == [
        f"offset unreadable: /consumers/{group.group}/offsets/{topic}/1 holds {raw!r} ({why})"
    ]
    assert partitions[(topic, 0)]["lag"] == 2


def test_partition_without_a_leader_is_flagged_and_the_others_are_exact(cluster: Cluster) -> None:
    # GIVEN a topic ZooKeeper registers with 3 partitions, of which the brokers know only 2
    # (partition 2 has no leader in the cluster's metadata, and ZooKeeper's state says leader -1)
    topic = workload.unique("leaderless")
    workload.create_topic(cluster.bootstrap, topic, 2)
    workload.produce(cluster.bootstrap, topic, {0: 5, 1: 5})
    workload.register_topic(cluster.client, topic, 3, cluster.broker_id)
    # as the controller records an offline partition
    offline = json.dumps({"controller_epoch": 1, "leader": -1, "version": 1, "leader_epoch": 1, "isr": []})
    cluster.client.set(f"/brokers/topics/{topic}/partitions/2/state", offline.encode())
    group = cluster.old_group()
    group.commit({(topic, 0): 2, (topic, 1): 5, (topic, 2): 1})
    # WHEN kafkadiag reads it
    code, out, err = run(
        ["lag", "--zookeeper", cluster.zookeeper, "--group", group.group, "--format", "json"]
    )
    # THEN partition 2 is flagged with why, and partitions 0 and 1 are exact
    assert code == ExitCode.INPUT_UNREADABLE, (out, err)
    partitions = partitions_of(json.loads(out), group.group)
    assert partitions[(topic, 0)]["lag"] == 3 and partitions[(topic, 1)]["lag"] == 0
    leaderless = partitions[(topic, 2)]
    assert leaderless["committed_offset"] == 1 and leaderless["lag"] is None
    # with ZooKeeper's own record of the partition as evidence
    assert leaderless["problems"] == [
        "watermarks unknown: partition unknown to the brokers' metadata (no leader); "
        f"ZooKeeper /brokers/topics/{topic}/partitions/2/state: no leader, isr []"
    ]


def test_unknown_group_and_unknown_topic_exit_3(cluster: Cluster, broker: ServerProcess) -> None:
    missing_group = workload.unique("missing")
    code, out, err = run(
        [
            "lag",
            "--zookeeper",
            cluster.zookeeper,
            "--bootstrap-server",
            broker.address,
            "--group",
            missing_group,
        ]
    )
    assert code == ExitCode.INPUT_UNREADABLE, (out, err)
    assert f"group(s) not found: {missing_group}" in err
    # An unknown topic is reported, and asking about it does not create it (read-only).
    missing_topic = workload.unique("missing")
    code, out, err = run(
        ["lag", "--bootstrap-server", broker.address, "--all-groups", "--topic", missing_topic]
    )
    assert code == ExitCode.INPUT_UNREADABLE, (out, err)
    assert f"topic {missing_topic}" in err and "UNKNOWN_TOPIC_OR_PARTITION" in err
    from confluent_kafka.admin import AdminClient

    assert (
        missing_topic not in AdminClient({"bootstrap.servers": broker.address}).list_topics(timeout=10).topics
    )


def test_broker_unreachable_keeps_the_zookeeper_offsets(cluster: Cluster) -> None:
    # GIVEN old-consumer offsets readable in ZooKeeper but a broker address that answers nothing
    topic = cluster.topic(1, {0: 3})
    group = cluster.old_group()
    group.commit({(topic, 0): 2})
    code, out, err, seconds = timed(
        [
            "lag",
            "--zookeeper",
            cluster.zookeeper,
            "--bootstrap-server",
            f"127.0.0.1:{free_port()}",
            "--group",
            group.group,
            "--format",
            "json",
        ]
    )
    # THEN the offsets are reported with unknown lag, flagged, exit 3
    assert code == ExitCode.INPUT_UNREADABLE, (out, err)
    entry = partitions_of(json.loads(out), group.group)[(topic, 0)]
    assert entry["committed_offset"] == 2 and entry["lag"] is None and entry["partial"]
    assert "cannot reach a Kafka broker" in err and seconds < BOUND_S


def test_a_dead_host_in_the_zookeeper_list_is_skipped(cluster: Cluster) -> None:
    # GIVEN a connect string whose first host answers nothing, as when one ensemble member is down
    topic = cluster.topic(1, {0: 4})
    group = cluster.old_group()
    group.commit({(topic, 0): 1})
    dead = f"127.0.0.1:{free_port()}"
    connect = f"{dead},{cluster.zookeeper}"  # the chroot goes at the end of the whole list
    # WHEN kafkadiag reads through it
    code, out, err, seconds = timed(
        ["lag", "--zookeeper", connect, "--group", group.group, "--format", "json"]
    )
    # THEN the live host serves the read
    assert code == ExitCode.OK, (out, err)
    assert partitions_of(json.loads(out), group.group)[(topic, 0)]["lag"] == 3
    assert seconds < BOUND_S
