"""The real servers start, answer, and keep data: the ground every lag test stands on."""

from __future__ import annotations

from tests.infra import workload
from tests.infra.servers import ServerProcess


def test_zookeeper_session_reads_back_what_it_wrote(zookeeper: ServerProcess) -> None:
    # GIVEN a session on the test ZooKeeper
    client = workload.zk_client(zookeeper.address)
    try:
        path = f"/smoke/{workload.unique('node')}"
        # WHEN a node is written and read back
        client.create(path, b"42", makepath=True)
        data, stat = client.get(path)
        # THEN the data and its mtime are there
        assert data == b"42" and stat.mtime > 0
    finally:
        client.stop()
        client.close()


def test_broker_offsets_agree_with_an_independent_client(broker: ServerProcess) -> None:
    # GIVEN a topic with 3, 0 and 5 records in its partitions (one record per batch)
    topic = workload.unique("smoke")
    workload.create_topic(broker.address, topic, 3)
    workload.produce(broker.address, topic, {0: 3, 2: 5})
    # WHEN librdkafka reads the watermarks
    lag = workload.independent_lag(broker.address, workload.unique("nobody"), [(topic, p) for p in range(3)])
    # THEN they are the record counts
    assert [lag[(topic, p)]["high_watermark"] for p in range(3)] == [3, 0, 5]
    assert all(lag[(topic, p)]["log_start_offset"] == 0 for p in range(3))
