"""The bare libraries doing what kafkadiag's lag scans do, as whole cold processes, for
bench/lag_bench.py to compare against:

    python bench/bare_clients.py zookeeper HOSTS/CHROOT GROUP
        kazoo async reads of one old-consumer group: the offsets' topic listing, then every
        partition listing, then every offset znode, each level sent at once (get_*_async).
    python bench/bare_clients.py kafka BOOTSTRAP
        kafka-python's public admin API for every group: list_groups, describe_groups,
        list_group_offsets (batched per coordinator), then list_partition_offsets for the latest
        and earliest offsets of every committed partition.

Prints the number of offsets read (so a run that read nothing is not mistaken for a fast one).
"""

from __future__ import annotations

import logging
import sys


def zookeeper(hosts: str, group: str) -> int:
    from kazoo.client import KazooClient

    client = KazooClient(hosts=hosts, read_only=True)
    client.start(timeout=30)
    try:
        base = f"/consumers/{group}/offsets"
        topics = client.get_children(base)
        listings = [client.get_children_async(f"{base}/{topic}") for topic in topics]
        paths = [
            f"{base}/{topic}/{partition}"
            for topic, listing in zip(topics, listings)
            for partition in listing.get(timeout=30)
        ]
        reads = [client.get_async(path) for path in paths]
        offsets = [int(read.get(timeout=30)[0]) for read in reads]
        return len(offsets)
    finally:
        client.stop()
        client.close()


def kafka(bootstrap: str) -> int:
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
        admin.list_partition_offsets({tp: OffsetSpec.LATEST for tp in partitions})
        admin.list_partition_offsets({tp: OffsetSpec.EARLIEST for tp in partitions})
        return sum(len(offsets) for offsets in committed.values())
    finally:
        admin.close()


if __name__ == "__main__":
    kind, *arguments = sys.argv[1:]
    count = zookeeper(*arguments) if kind == "zookeeper" else kafka(*arguments)
    print(count)
