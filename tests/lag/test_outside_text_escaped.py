"""Znode names and values are outside text: GIVEN a real ZooKeeper old-consumer group whose name
and topic hold a bidirectional override (U+202E; ZooKeeper refuses C0 controls in paths) and whose
owner znode holds an OSC title sequence, a CSI clear-screen and a C1 CSI, WHEN `kafkadiag lag`
shows it, THEN a terminal receives them as visible escapes, in the table, the Prometheus
exposition and the --watch view (which printed them raw), and the JSON report stays valid JSON
with the same strings in it."""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator

import pytest

from kafkadiag.exitcodes import ExitCode
from tests.infra.cli import run, watch_until
from tests.infra.servers import ServerProcess

OWNER = "owner\x1b]0;pwned\x07-\x1b[2J\x9b2J-thread"
SHOWN_OWNER = "owner\\x1b]0;pwned\\x07-\\x1b[2J\\x9b2J-thread"
RAW = ("\x1b", "\x07", "\x9b", "\u202e")


@pytest.fixture
def hostile_group(zookeeper: ServerProcess) -> Iterator[tuple[str, str]]:
    from kazoo.client import KazooClient

    group = f"billing\u202elanif-{uuid.uuid4().hex[:8]}"
    topic = f"orders\u202e-{uuid.uuid4().hex[:8]}"
    client = KazooClient(hosts=zookeeper.address, timeout=30.0)
    client.start(timeout=30)
    try:
        client.create(f"/consumers/{group}/offsets/{topic}/0", b"5", makepath=True)
        client.create(f"/consumers/{group}/owners/{topic}/0", OWNER.encode("utf-8"), makepath=True)
        client.create(f"/consumers/{group}/ids", b"", makepath=True)
        yield group, topic
    finally:
        client.delete(f"/consumers/{group}", recursive=True)
        client.stop()
        client.close()


def _lag(zookeeper: ServerProcess, group: str, *options: str) -> tuple[int, str, str]:
    return run(["lag", "--zookeeper", zookeeper.address, "--group", group, "--timeout", "5s", *options])


def test_the_table_shows_znode_text_escaped(zookeeper: ServerProcess, hostile_group: tuple[str, str]) -> None:
    group, topic = hostile_group
    code, out, err = _lag(zookeeper, group)
    assert code in (ExitCode.OK, ExitCode.INPUT_UNREADABLE), err  # no broker: the lag is unknown
    assert SHOWN_OWNER in out and group.replace("\u202e", "\\u202e") in out, out
    assert not [raw for raw in RAW if raw in out + err], out + err


def test_the_prometheus_exposition_shows_znode_text_escaped(
    zookeeper: ServerProcess, hostile_group: tuple[str, str]
) -> None:
    group, _ = hostile_group
    _, out, err = _lag(zookeeper, group, "--format", "prometheus")
    assert group.replace("\u202e", "\\\\u202e") in out, out
    assert not [raw for raw in RAW if raw in out + err], out + err


def test_the_json_report_is_valid_with_the_same_strings(
    zookeeper: ServerProcess, hostile_group: tuple[str, str]
) -> None:
    group, topic = hostile_group
    _, out, err = _lag(zookeeper, group, "--format", "json")
    assert not [raw for raw in RAW if raw in out], out
    document = json.loads(out)
    (shown,) = [entry for entry in document["groups"] if entry["group"] == group]
    assert [partition["owner"] for partition in shown["partitions"]] == [OWNER]
    assert [partition["topic"] for partition in shown["partitions"]] == [topic]


def test_the_watch_view_shows_znode_text_escaped(
    zookeeper: ServerProcess, hostile_group: tuple[str, str]
) -> None:
    # GIVEN `lag --watch` of the group, its view in a pipe
    group, _ = hostile_group
    # WHEN a view with the owner was drawn, and Ctrl-C came
    _, text = watch_until(
        ["lag", "--zookeeper", zookeeper.address, "--group", group, "--timeout", "5s", "--watch",
         "--interval", "0.3"],
        lambda shown: b"OWNER" in shown,
        {**os.environ, "KAFKADIAG_WIDTH": "200"},
    )  # fmt: skip
    # THEN the view showed the owner's escapes, not the sequences themselves
    assert SHOWN_OWNER in text, text
    assert not [raw for raw in RAW if raw in text], text
