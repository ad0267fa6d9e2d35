"""Partition watermarks: per leader, one ListOffsets request for the latest offsets and one for
the earliest (the protocol accepts a partition only once per request), in the same round."""

from __future__ import annotations

from collections import defaultdict

from kafkadiag.collect.kafka.bootstrap import address_text
from kafkadiag.collect.kafka.errors import error_name
from kafkadiag.collect.kafka.metadata import metadata
from kafkadiag.collect.kafka.requests import EARLIEST, LATEST, ListOffsetsRequest, by_topic
from kafkadiag.collect.kafka.rounds import KafkaScan, Rounds
from kafkadiag.lag.snapshot import BrokerPartition, TopicLayout

Partition = tuple[str, int]


def read_watermarks(rounds: Rounds, result: KafkaScan, wanted: dict[str, set[int]]) -> None:
    layouts = metadata(rounds, result, set(wanted))
    result.topics.extend(layouts[topic] for topic in sorted(layouts))
    problems: dict[Partition, str] = {}
    leaders = _leaders(wanted, layouts, problems)
    by_leader: dict[int, list[Partition]] = defaultdict(list)
    for key, leader in leaders.items():
        by_leader[leader].append(key)
    found = _list_offsets(rounds, by_leader, problems)
    for topic, partition in sorted(set(leaders) | set(problems)):
        values = found.get((topic, partition), {})
        result.partitions.append(
            BrokerPartition(
                topic=topic,
                partition=partition,
                leader=leaders.get((topic, partition)),
                high_watermark=values.get(LATEST),
                log_start_offset=values.get(EARLIEST),
                error=problems.get((topic, partition)),
            )
        )


def _leaders(
    wanted: dict[str, set[int]], layouts: dict[str, TopicLayout], problems: dict[Partition, str]
) -> dict[Partition, int]:
    """Each wanted partition's leader (every partition of a topic wanted with none named), in
    topic and partition order; the others' reasons go to `problems`."""
    leaders: dict[Partition, int] = {}
    for topic, partitions in sorted(wanted.items()):
        layout = layouts[topic]
        if layout.error is not None:
            for partition in partitions:
                problems[(topic, partition)] = layout.error
            continue
        leader_of = dict(layout.leaders)
        for partition in sorted(partitions or set(layout.partitions)):
            leader = leader_of.get(partition)
            if leader is None:
                problems[(topic, partition)] = "partition unknown to the brokers' metadata (no leader)"
            elif leader < 0:
                problems[(topic, partition)] = "leader not available"
            else:
                leaders[(topic, partition)] = leader
    return leaders


def _list_offsets(
    rounds: Rounds, by_leader: dict[int, list[Partition]], problems: dict[Partition, str]
) -> dict[Partition, dict[int, int]]:
    """Each partition's offsets by timestamp (LATEST, EARLIEST); failures go to `problems`."""
    calls = [
        ((leader, timestamp), leader, ListOffsetsRequest(by_topic(leader_partitions), timestamp))
        for leader, leader_partitions in sorted(by_leader.items())
        for timestamp in (LATEST, EARLIEST)
    ]
    found: dict[Partition, dict[int, int]] = defaultdict(dict)
    for (leader, timestamp), answer, reason in rounds.send(calls):
        if reason is not None:
            where = address_text(rounds.client.brokers.get(leader))
            kind = "high watermark" if timestamp == LATEST else "log-start offset"
            for key in by_leader[leader]:
                problems.setdefault(key, f"leader {leader}{where} did not answer for the {kind}: {reason}")
            continue
        for listed in answer:
            key = (listed.topic, listed.partition_index)
            listed_error = error_name(listed.error_code)
            if listed_error:
                problems.setdefault(key, f"ListOffsets on leader {leader}: {listed_error}")
                continue
            if listed.offset < 0:  # ListOffsets v0 may answer an empty list
                problems.setdefault(key, f"ListOffsets on leader {leader}: no offset in the answer")
                continue
            found[key][timestamp] = listed.offset
    return found
