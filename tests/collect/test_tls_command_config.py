"""--command-config with security.protocol=SSL against a real broker behind a real TLS listener.

The broker advertises a TLS relay's address (tests/infra/tls.py), so kafkadiag bootstraps and
reads group offsets and watermarks over TLS only, with the CA named in a Kafka-style properties
file. A wrong CA and a plaintext client against the TLS port fail with a clear message and exit 3.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafkadiag.exitcodes import ExitCode
from tests.infra import workload
from tests.infra.cli import partitions_of, run, run_json
from tests.infra.servers import ServerProcess, free_port, start_tansu
from tests.infra.tls import TlsRelay, self_signed_certificate


@pytest.fixture
def tls_broker(tmp_path: Path) -> Iterator[tuple[TlsRelay, ServerProcess, Path]]:
    relay_port = free_port()
    cert, key = self_signed_certificate(tmp_path / "tls")
    broker = start_tansu(tmp_path / "tansu", advertised_port=relay_port)
    relay = TlsRelay(relay_port, ("127.0.0.1", broker.port), cert, key)
    try:
        yield relay, broker, cert
    finally:
        relay.close()
        broker.stop()


def _ssl(cafile: Path) -> dict[str, Any]:
    return {"security_protocol": "SSL", "ssl_cafile": str(cafile)}


def _write_group(relay: TlsRelay, cafile: Path, topic: str, group: str) -> None:
    """A topic with 7 and 3 records and a group that committed 2 and 3, all over TLS."""
    from kafka import KafkaAdminClient, KafkaProducer, TopicPartition
    from kafka.admin import NewTopic
    from kafka.structs import OffsetAndMetadata

    admin = KafkaAdminClient(bootstrap_servers=relay.address, **_ssl(cafile))
    producer = KafkaProducer(bootstrap_servers=relay.address, acks=1, **_ssl(cafile))
    try:
        admin.create_topics([NewTopic(topic, num_partitions=2, replication_factor=1)])
        for partition, count in ((0, 7), (1, 3)):
            for index in range(count):
                producer.send(topic, value=f"{index}".encode(), partition=partition).get(timeout=30)
        admin.alter_group_offsets(
            group,
            {
                TopicPartition(topic, 0): OffsetAndMetadata(2, "", -1),
                TopicPartition(topic, 1): OffsetAndMetadata(3, "", -1),
            },
        )
    finally:
        producer.close(timeout=5)
        admin.close()


def test_lag_over_tls_with_a_kafka_style_command_config(tls_broker, tmp_path: Path) -> None:
    # GIVEN a broker reachable only over TLS and a group with committed offsets on it
    relay, _, cafile = tls_broker
    topic, group = workload.unique("tls-orders"), workload.unique("tls-group")
    _write_group(relay, cafile, topic, group)
    config = tmp_path / "client.properties"
    config.write_text(
        "# as kafka-consumer-groups.sh --command-config takes it\n"
        "security.protocol=SSL\n"
        "ssl.truststore.type=PEM\n"
        f"ssl.truststore.location={cafile}\n"
        "ssl.endpoint.identification.algorithm=https\n"
    )
    sessions_before = relay.handshakes
    # WHEN kafkadiag reads the group's lag with that file
    document = run_json(
        ["lag", "--bootstrap-server", relay.address, "--command-config", str(config), "--group", group]
    )
    # THEN the numbers are the broker's, read over TLS sessions it opened itself
    rows = partitions_of(document, group)
    assert (
        rows[(topic, 0)]["high_watermark"],
        rows[(topic, 0)]["committed_offset"],
        rows[(topic, 0)]["lag"],
    ) == (7, 2, 5)
    assert (
        rows[(topic, 1)]["high_watermark"],
        rows[(topic, 1)]["committed_offset"],
        rows[(topic, 1)]["lag"],
    ) == (3, 3, 0)
    assert not document["partial"]
    assert relay.handshakes > sessions_before


def test_wrong_ca_and_plaintext_against_tls_fail_clearly(tls_broker, tmp_path: Path) -> None:
    relay, _, _ = tls_broker
    other_ca, _ = self_signed_certificate(tmp_path / "other", name="stranger")
    wrong = tmp_path / "wrong-ca.properties"
    wrong.write_text(f"security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location={other_ca}\n")
    # WHEN the CA does not sign the broker's certificate THEN exit 3, saying the broker was not
    # reached and why, and no document claims numbers it does not have
    code, out, err = run(
        ["lag", "--bootstrap-server", relay.address, "--command-config", str(wrong), "--group", "g",
         "--timeout", "3", "--format", "json"]
    )  # fmt: skip
    assert code == ExitCode.INPUT_UNREADABLE, err
    assert f"cannot reach a Kafka broker at {relay.address}" in err
    assert "CERTIFICATE_VERIFY_FAILED" in err  # the cause, not only "unable to bootstrap"
    assert "--command-config" in err
    (group,) = json.loads(out)["groups"]
    assert group["exists"] is None and group["total_lag"] is None and group["partitions"] == []
    # (the relay's thread counts the refused handshake a moment after the client gave up)
    deadline = time.monotonic() + 5
    while relay.failed_handshakes < 1 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert relay.failed_handshakes >= 1
    # WHEN a plaintext client talks to the TLS port THEN the same, within the timeout
    code, _, err = run(["lag", "--bootstrap-server", relay.address, "--group", "g", "--timeout", "3"])
    assert code == ExitCode.INPUT_UNREADABLE and f"cannot reach a Kafka broker at {relay.address}" in err


def test_connections_closed_while_idle_are_opened_afresh(tls_broker) -> None:
    from kafkadiag.collect.kafka.client import KafkaClient
    from kafkadiag.collect.kafka.requests import ListGroupsRequest

    relay, _, cafile = tls_broker
    client = KafkaClient(relay.address, _ssl(cafile), 10)
    try:

        def list_groups() -> None:
            ((answer, reason),) = client.round([(None, ListGroupsRequest())], time.monotonic() + 10)
            assert reason is None and answer.error_code == 0

        list_groups()
        opened = relay.handshakes
        # WHEN the connection stays idle (TLS 1.3 session tickets may arrive meanwhile) THEN it is reused
        time.sleep(0.3)
        list_groups()
        assert relay.handshakes == opened
        # WHEN the far end closes it between rounds THEN the next round opens a new one and succeeds
        relay.drop_sessions()
        time.sleep(0.3)
        list_groups()
        assert relay.handshakes == opened + 1
    finally:
        client.close()


@pytest.mark.parametrize("delay_s", [0.04, 0.1, 0.2])
def test_a_slow_tls_link_is_not_taken_for_a_broker_before_the_version_probe(
    tls_broker, tmp_path: Path, delay_s: float
) -> None:
    # GIVEN the TLS listener behind a long link, so that the handshake takes whole round trips and
    # the version answer comes after kafkadiag's first look (0.25 s) would have ended
    from tests.infra.latency import LatencyRelay

    relay, _, cafile = tls_broker
    topic, group = workload.unique("slow-tls"), workload.unique("slow-tls-group")
    _write_group(relay, cafile, topic, group)
    config = tmp_path / "client.properties"
    config.write_text(f"security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location={cafile}\n")
    host, port = relay.address.rsplit(":", 1)
    with LatencyRelay((host, int(port)), delay_s) as slow:
        # WHEN kafkadiag bootstraps through it
        code, out, err = run(
            ["lag", "--bootstrap-server", slow.address, "--command-config", str(config), "--group", group,
             "--timeout", "20", "--format", "json"]
        )  # fmt: skip
    # THEN it spoke to the broker as the current broker it is (a broker taken for 0.9 is spoken to
    # with old versions and read wrongly or not at all), and the numbers are the broker's
    assert code == ExitCode.FINDINGS or code == ExitCode.OK, (code, err)
    rows = partitions_of(json.loads(out), group)
    assert (rows[(topic, 0)]["lag"], rows[(topic, 1)]["lag"]) == (5, 0), rows
    assert slow.connections >= 1
