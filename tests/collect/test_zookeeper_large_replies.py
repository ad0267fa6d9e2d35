"""A reply larger than kafkadiag's ZooKeeper bound (64 MiB), from a real ZooKeeper whose
jute.maxbuffer allows it: named with what to raise, and read once `jute.maxbuffer` is raised.

ZooKeeper sends at most its jute.maxbuffer (1 MiB by default); sites that raise it for large znodes
or child lists need kafkadiag to read as much, as ZooKeeper's own client does when its
jute.maxbuffer is raised. A wrong port announcing a huge frame is still named as one
(tests/collect/test_zookeeper_not_zookeeper.py).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest

from kafkadiag.collect.zookeeper.framing import MAX_FRAME_BYTES
from kafkadiag.sandbox.servers import ServerProcess, start_zookeeper
from tests.infra.cli import run

JUTE_MAXBUFFER = 100_000_000
BIG = MAX_FRAME_BYTES + (6 << 20)  # an offset znode of 70 MiB


@pytest.fixture(scope="module")
def large_zookeeper(tmp_path_factory: pytest.TempPathFactory) -> Iterator[ServerProcess]:
    from kazoo.client import KazooClient

    server = start_zookeeper(
        tmp_path_factory.mktemp("zookeeper-large"),
        jvm_options=("-Xmx768m", f"-Djute.maxbuffer={JUTE_MAXBUFFER}"),
    )
    client = KazooClient(hosts=server.address, timeout=30.0)
    try:
        client.start(timeout=30)
        client.create("/consumers/big/offsets/orders/0", b"x" * BIG, makepath=True)
        client.create("/consumers/big/ids", makepath=True)
        client.stop()
        client.close()
        yield server
    finally:
        server.stop()


def test_a_reply_past_the_bound_names_jute_maxbuffer_and_raising_it_reads_it(
    large_zookeeper: ServerProcess, tmp_path: Path
) -> None:
    # GIVEN a group whose offset znode is 70 MiB, in a ZooKeeper whose jute.maxbuffer allows it
    arguments = ["lag", "--zookeeper", large_zookeeper.address, "--group", "big", "--timeout", "30s"]
    # WHEN kafkadiag reads it with its bound of 64 MiB
    code, out, err = run([*arguments, "--format", "json"])
    # THEN exit 3, naming the size and what to raise
    assert code == 3, err
    assert f"past the {MAX_FRAME_BYTES:,} bytes read from ZooKeeper" in err, err
    assert "jute.maxbuffer" in err and "--zk-tls-config-file" in err, err
    # WHEN the bound is raised as the ensemble's is, in a file that sets nothing else
    settings = tmp_path / "zookeeper-client.properties"
    settings.write_text(f"jute.maxbuffer={JUTE_MAXBUFFER}\n")
    code, out, err = run([*arguments, "--zk-tls-config-file", str(settings), "--format", "json"])
    # THEN the session stays plaintext, the znode is read, and its value named as no offset
    assert "does not speak" not in err, err
    (group,) = json.loads(out)["groups"]
    assert group["exists"] is True, group
    rules = {finding["rule"] for finding in group["findings"]}
    assert "KD603" in rules, group["findings"]
