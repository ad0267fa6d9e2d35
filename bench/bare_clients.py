"""The bare libraries doing what kafkadiag's lag scans do, as whole cold processes, for
bench/lag_bench.py to compare against:

    python bench/bare_clients.py zookeeper HOSTS/CHROOT GROUP [BOOTSTRAP [API_VERSION]]
        What ConsumerOffsetChecker and `kafkadiag lag --zookeeper` read of one old-consumer group,
        through kazoo's public async API: the offsets' and owners' topic listings, then every
        partition listing, then every offset and owner znode, each level sent at once
        (get_*_async). With BOOTSTRAP, also the latest and earliest offset of every partition
        read, through kafka-python's consumer (end_offsets, beginning_offsets; API_VERSION such
        as 0.8.2 pins the protocol for a broker before ApiVersions).
    python bench/bare_clients.py kafka BOOTSTRAP [--json]
        kafka-python's public admin API for every group: list_groups, describe_groups,
        list_group_offsets (batched per coordinator), then list_partition_offsets for the latest
        and earliest offsets of every committed partition. With --json, also the answer a lag
        tool gives: every partition's committed offset, watermarks and lag, as one JSON document.

Prints the number of offsets read (so a run that read nothing is not mistaken for a fast one),
or with --json the document.
"""

from __future__ import annotations

import logging
import sys


def zookeeper(hosts: str, group: str, bootstrap: str = "", api_version: str = "") -> int:
    from kazoo.client import KazooClient

    client = KazooClient(hosts=hosts, read_only=True)
    client.start(timeout=30)
    try:
        base = f"/consumers/{group}"
        topic_dirs = [
            f"{base}/{kind}/{topic}"
            for kind in ("offsets", "owners")
            for topic in client.get_children(f"{base}/{kind}")
        ]
        listings = [client.get_children_async(path) for path in topic_dirs]
        paths = [
            f"{path}/{partition}"
            for path, listing in zip(topic_dirs, listings)
            for partition in listing.get(timeout=30)
        ]
        reads = [client.get_async(path) for path in paths]
        values = {path: read.get(timeout=30)[0] for path, read in zip(paths, reads)}
        offsets = {path: int(value) for path, value in values.items() if "/offsets/" in path}
    finally:
        client.stop()
        client.close()
    if bootstrap:
        _watermarks(bootstrap, api_version, {tuple(path.rsplit("/", 2)[1:]) for path in offsets})
    return len(offsets)


def _watermarks(bootstrap: str, api_version: str, partitions: set[tuple[str, ...]]) -> None:
    from kafka import KafkaConsumer, TopicPartition

    logging.getLogger("kafka").setLevel(logging.CRITICAL)
    pinned = {"api_version": tuple(int(part) for part in api_version.split("."))} if api_version else {}
    consumer = KafkaConsumer(bootstrap_servers=bootstrap, enable_auto_commit=False, **pinned)
    try:
        wanted = [TopicPartition(topic, int(partition)) for topic, partition in partitions]
        latest = consumer.end_offsets(wanted)
        earliest = consumer.beginning_offsets(wanted)
        assert len(latest) == len(earliest) == len(wanted), "not every partition's offsets were read"
    finally:
        consumer.close()


def kafka(bootstrap: str, as_json: str = "") -> int:
    from kafka import KafkaAdminClient
    from kafka.admin import OffsetSpec

    logging.getLogger("kafka").setLevel(logging.CRITICAL)
    admin = KafkaAdminClient(bootstrap_servers=bootstrap, request_timeout_ms=60000)
    try:
        groups = [listed["group_id"] for listed in admin.list_groups()]
        try:
            admin.describe_groups(groups)
        except ValueError:
            # kafka-python 3.0 cannot decode some brokers' authorized_operations bits (Tansu sets
            # all 32); the request and its answer still took their time.
            pass
        committed = admin.list_group_offsets({group: None for group in groups})
        partitions = {tp for offsets in committed.values() for tp in offsets}
        latest = admin.list_partition_offsets({tp: OffsetSpec.LATEST for tp in partitions})
        earliest = admin.list_partition_offsets({tp: OffsetSpec.EARLIEST for tp in partitions})
        if as_json:
            _write_lag(committed, latest, earliest)
        return sum(len(offsets) for offsets in committed.values())
    finally:
        admin.close()


def _write_lag(committed: dict, latest: dict, earliest: dict) -> None:
    import json

    groups = []
    for group, offsets in sorted(committed.items()):
        rows = []
        for tp, offset in sorted(offsets.items()):
            end = latest[tp].offset
            rows.append({"topic": tp.topic, "partition": tp.partition, "committed_offset": offset.offset,
                         "high_watermark": end, "log_start_offset": earliest[tp].offset,
                         "lag": end - offset.offset})  # fmt: skip
        groups.append({"group": group, "total_lag": sum(row["lag"] for row in rows), "partitions": rows})
    sys.stdout.write(json.dumps({"groups": groups}, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    kind, *arguments = sys.argv[1:]
    count = zookeeper(*arguments) if kind == "zookeeper" else kafka(*arguments)
    if "--json" not in arguments:
        print(count)
