"""Old-consumer lag from a real ZooKeeper, laid out as ZookeeperConsumerConnector writes it,
over real topics with real records in a real broker; watermarks cross-checked with librdkafka."""

from __future__ import annotations

import json

from tests.infra import workload
from tests.infra.cli import group_of, partitions_of, run, run_json
from tests.infra.workload import Cluster


def test_old_consumer_lag_agrees_with_zookeeper_and_librdkafka(cluster: Cluster) -> None:
    # GIVEN a 3-partition topic holding 10, 5 and 0 records, and one consumer with 3 threads that
    # committed 4, 5 and 0 (the broker is found through the chroot's /brokers/ids, as
    # ConsumerOffsetChecker found it)
    topic = cluster.topic(3, {0: 10, 1: 5})
    group = cluster.old_group()
    consumer = group.join({topic: 3})
    owners = workload.range_assignment({topic: 3}, {consumer: {topic: 3}})
    group.own(owners)
    group.commit({(topic, 0): 4, (topic, 1): 5, (topic, 2): 0})
    # WHEN kafkadiag reads the group with --zookeeper only
    document = run_json(["lag", "--zookeeper", cluster.zookeeper, "--group", group.group])
    # THEN every number is ZooKeeper's offset against the broker's watermark
    reported = partitions_of(document, group.group)
    independent = workload.independent_lag(cluster.bootstrap, "nobody", [(topic, p) for p in range(3)])
    for partition, committed in ((0, 4), (1, 5), (2, 0)):
        entry = reported[(topic, partition)]
        assert entry["committed_offset"] == committed
        assert entry["high_watermark"] == independent[(topic, partition)]["high_watermark"]
        assert entry["log_start_offset"] == independent[(topic, partition)]["log_start_offset"]
        assert entry["lag"] == entry["high_watermark"] - committed
        assert entry["owner"] == owners[(topic, partition)]
        assert entry["since_progress_s"] is not None and entry["since_progress_s"] >= 0
        assert entry["problems"] == []
    assert [reported[(topic, p)]["lag"] for p in range(3)] == [6, 0, 0]
    summary = group_of(document, group.group)
    assert summary["source"] == "zookeeper" and summary["state"] == "Active"
    assert summary["total_lag"] == 6 and summary["findings"] == []
    assert document["sources"] == {"zookeeper": cluster.zookeeper}
    assert document["stats"]["zookeeper_round_trips"] <= 5
    # AND `diagnose` finds nothing wrong with this group (no KD6xx finding): exit 0
    code, out, err = run(
        ["diagnose", "--zookeeper", cluster.zookeeper, "--group", group.group, "--format", "json"]
    )
    assert code == 0 and json.loads(out)["findings"] == [], out + err


def test_ownership_problems_are_each_named_with_their_znodes(cluster: Cluster) -> None:
    # GIVEN a group whose two consumers disagree on their subscription, one partition claimed by
    # a consumer that is no longer registered, one partition nobody owns, one owned partition
    # with no offset node, and more threads on a topic than it has partitions
    orders = cluster.topic(4, {0: 3, 1: 3, 2: 3, 3: 3}, prefix="orders")
    audit = cluster.topic(1, {0: 2}, prefix="audit")
    group = cluster.old_group()
    first = group.join({orders: 2})
    second = group.join({orders: 1, audit: 2})
    ghost = f"{group.group}_gone-1700000000000-deadbeef"
    group.own(
        {
            (orders, 0): f"{first}-0",
            (orders, 1): f"{first}-1",
            (orders, 3): f"{ghost}-0",
            (audit, 0): f"{second}-0",
        }
    )
    group.commit({(orders, 0): 1, (orders, 1): 3, (orders, 3): 0})
    # WHEN kafkadiag reads it
    code, out, err = run(
        ["lag", "--zookeeper", cluster.zookeeper, "--group", group.group, "--format", "json"]
    )
    document = json.loads(out)
    findings = {finding["code"]: finding for finding in group_of(document, group.group)["findings"]}
    # THEN each problem is a finding that quotes the znodes it rests on
    base = f"/consumers/{group.group}"
    assert set(findings) >= {
        "unregistered-owner",
        "no-owner",
        "owned-without-offset",
        "subscription-mismatch",
        "idle-threads",
    }, findings
    assert f"{base}/owners/{orders}/3 = '{ghost}-0'" in findings["unregistered-owner"]["evidence"]
    assert findings["no-owner"]["topic"] == orders and findings["no-owner"]["partitions"] == [2]
    assert findings["owned-without-offset"]["topic"] == audit and findings["owned-without-offset"][
        "partitions"
    ] == [0]
    assert any(first in line for line in findings["subscription-mismatch"]["evidence"])
    assert findings["idle-threads"]["topic"] == audit
    # and a partition with no offset is not an unreadable one: the read was complete
    assert code == 0, err
    # AND `diagnose` reports each of them in the one catalogue, with the same facts
    code, out, err = run(
        ["diagnose", "--zookeeper", cluster.zookeeper, "--group", group.group, "--format", "json"]
    )
    assert code == 1, err
    diagnosed = {finding["rule"]: finding for finding in json.loads(out)["findings"]}
    assert {"KD607", "KD608", "KD609", "KD610", "KD611"} <= set(diagnosed), diagnosed
    assert diagnosed["KD608"]["facts"] == {"group": group.group, "source": "zookeeper", "topic": orders,
                                           "partitions": [2]}  # fmt: skip
    assert any(f"{base}/owners/{orders}/3" in item["text"] for item in diagnosed["KD607"]["evidence"])
    assert diagnosed["KD609"]["severity"] == "info" and diagnosed["KD607"]["severity"] == "error"


def test_group_with_offsets_and_no_live_consumer(cluster: Cluster) -> None:
    # GIVEN a group whose consumers all left (their ephemeral nodes are gone), offsets remain
    topic = cluster.topic(2, {0: 4, 1: 4})
    group = cluster.old_group()
    consumer = group.join({topic: 1})
    group.own(workload.range_assignment({topic: 2}, {consumer: {topic: 1}}))
    group.commit({(topic, 0): 4, (topic, 1): 1})
    group.leave(consumer)
    # WHEN kafkadiag reads it
    document = run_json(["lag", "--zookeeper", cluster.zookeeper, "--group", group.group])
    summary = group_of(document, group.group)
    # THEN the lag is there, nobody owns anything and the finding says nothing consumes
    assert summary["state"] == "NoConsumers" and summary["members"] == []
    assert [finding["code"] for finding in summary["findings"]] == ["offsets-without-consumer"]
    assert summary["total_lag"] == 3
    assert all(entry["owner"] is None for entry in summary["partitions"])
    # AND `diagnose` says the same in the one catalogue: KD606, a warning (exit 1 at --fail-on warning)
    code, out, err = run(
        ["diagnose", "--zookeeper", cluster.zookeeper, "--group", group.group, "--format", "json"]
    )
    assert code == 1, err
    assert [finding["rule"] for finding in json.loads(out)["findings"]] == ["KD606"]


def test_all_groups_in_a_chroot_with_a_topic_filter(cluster: Cluster) -> None:
    # GIVEN two groups on two topics inside this test's chroot
    first_topic = cluster.topic(1, {0: 5})
    second_topic = cluster.topic(1, {0: 7})
    first, second = cluster.old_group(), cluster.old_group()
    first.commit({(first_topic, 0): 5, (second_topic, 0): 1})
    second.commit({(second_topic, 0): 7})
    # WHEN kafkadiag lists all groups, for the second topic only
    document = run_json(
        ["lag", "--zookeeper", cluster.zookeeper, "--all-groups", "--topic", second_topic],
    )
    # THEN it sees exactly the chroot's groups, each with only that topic
    assert sorted(group["group"] for group in document["groups"]) == sorted([first.group, second.group])
    assert partitions_of(document, first.group).keys() == {(second_topic, 0)}
    assert partitions_of(document, first.group)[(second_topic, 0)]["lag"] == 6
    assert partitions_of(document, second.group)[(second_topic, 0)]["lag"] == 0
