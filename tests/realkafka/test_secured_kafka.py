"""A real Kafka 4.1 broker that only speaks SASL_SSL with SCRAM-SHA-256 (its credentials in a JAAS
file, users created with the storage format), and ACLs enforced by the StandardAuthorizer.

kafkadiag reads it through a Kafka-style --command-config, as kafka-consumer-groups does; a user
refused DESCRIBE on a group gets that group named in the report (exit 3), the other groups read.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafkadiag.exitcodes import ExitCode
from kafkadiag.sandbox import kafka_servers
from tests.infra import workload
from tests.infra.cli import group_of, partitions_of, run, run_json
from tests.infra.real_kafka import RealKafka, with_group_coordinator
from tests.infra.tls import self_signed_certificate

USERS = {"admin": "admin-secret", "reader": "reader-secret"}
MECHANISM = "SCRAM-SHA-256"


class SecuredKafka(RealKafka):
    ca: Path

    def properties(self, user: str, password: str | None = None) -> Path:
        """A Kafka-style client properties file for `user`."""
        path = self.workdir / f"{user}-{password or 'ok'}.properties"
        secret = password if password is not None else USERS[user]
        path.write_text(
            "security.protocol=SASL_SSL\n"
            f"sasl.mechanism={MECHANISM}\n"
            "sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required "
            f'username="{user}" password="{secret}";\n'
            "ssl.truststore.type=PEM\n"
            f"ssl.truststore.location={self.ca}\n"
        )
        return path

    def client_settings(self) -> dict[str, Any]:
        return {
            "security_protocol": "SASL_SSL",
            "sasl_mechanism": MECHANISM,
            "sasl_plain_username": "admin",
            "sasl_plain_password": USERS["admin"],
            "ssl_cafile": str(self.ca),
        }


@pytest.fixture(scope="module")
def secured_kafka(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SecuredKafka]:
    workdir = tmp_path_factory.mktemp("kafka-41-sasl-ssl")
    cert, key = self_signed_certificate(workdir / "tls")
    keystore = workdir / "tls" / "broker-keystore.pem"
    keystore.write_text(key.read_text() + cert.read_text())
    jaas = workdir / "kafka-server-jaas.conf"
    jaas.write_text(
        "KafkaServer {\n  org.apache.kafka.common.security.scram.ScramLoginModule required\n"
        f'  username="admin" password="{USERS["admin"]}";\n}};\n'
    )
    settings = {
        "sasl.enabled.mechanisms": MECHANISM,
        "sasl.mechanism.inter.broker.protocol": MECHANISM,
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": str(keystore),
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": str(cert),
        "authorizer.class.name": "org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        # The controller listener is plaintext (ANONYMOUS); admin is the inter-broker user.
        "super.users": "User:admin;User:ANONYMOUS",
        "allow.everyone.if.no.acl.found": "false",
    }
    scram = tuple(
        argument
        for user, password in USERS.items()
        for argument in ("--add-scram", f"{MECHANISM}=[name={user},password={password}]")
    )
    broker = kafka_servers.start_kraft_broker(
        "4.1.1",
        workdir / "kafka",
        listener="SASL_SSL",
        settings=settings,
        format_arguments=scram,
        jvm_options=(f"-Djava.security.auth.login.config={jaas}",),
    )
    secured = SecuredKafka(broker, workdir)
    secured.ca = cert
    with_group_coordinator(secured)
    try:
        yield secured
    finally:
        broker.stop()


def _commit(kafka: SecuredKafka, group: str, offsets: dict[tuple[str, int], int]) -> None:
    from kafka import KafkaAdminClient, TopicPartition
    from kafka.structs import OffsetAndMetadata

    admin = KafkaAdminClient(bootstrap_servers=kafka.address, **kafka.client_settings())
    try:
        admin.alter_group_offsets(
            group, {TopicPartition(t, p): OffsetAndMetadata(o, "", -1) for (t, p), o in offsets.items()}
        )
    finally:
        admin.close()


def _allow_describe(kafka: SecuredKafka, user: str, topic: str, group: str) -> None:
    from kafka import KafkaAdminClient
    from kafka.admin import ACL, ACLOperation, ACLPermissionType, ResourcePattern, ResourceType

    admin = KafkaAdminClient(bootstrap_servers=kafka.address, **kafka.client_settings())
    try:
        acls = [
            ACL(
                f"User:{user}",
                "*",
                ACLOperation.DESCRIBE,
                ACLPermissionType.ALLOW,
                ResourcePattern(kind, name),
            )
            for kind, name in ((ResourceType.TOPIC, topic), (ResourceType.GROUP, group))
        ]
        result = admin.create_acls(acls)
        assert not result["failed"], result
    finally:
        admin.close()


def test_sasl_ssl_scram_reads_equal_consumer_groups_describe(secured_kafka: SecuredKafka) -> None:
    # GIVEN a group with committed offsets on a SASL_SSL-only broker
    topic, group = workload.unique("invoices"), workload.unique("billing")
    secured_kafka.create_topic(topic, 2)
    secured_kafka.produce(topic, {0: 7, 1: 3})
    _commit(secured_kafka, group, {(topic, 0): 2, (topic, 1): 3})
    config = secured_kafka.properties("admin")
    # WHEN kafkadiag and kafka-consumer-groups read it with the same client properties
    document = run_json(
        [
            "lag",
            "--bootstrap-server",
            secured_kafka.address,
            "--command-config",
            str(config),
            "--group",
            group,
        ]
    )
    described = secured_kafka.consumer_groups_describe(group, "--command-config", str(config))
    # THEN they agree, over SCRAM and TLS
    reported = partitions_of(document, group)
    for key, row in described.items():
        assert str(reported[key]["committed_offset"]) == row["CURRENT-OFFSET"], (key, reported[key], row)
        assert str(reported[key]["high_watermark"]) == row["LOG-END-OFFSET"], (key, reported[key], row)
        assert str(reported[key]["lag"]) == row["LAG"], (key, reported[key], row)
    assert group_of(document, group)["total_lag"] == 5


def test_a_group_the_acls_refuse_is_named_and_the_others_are_read(secured_kafka: SecuredKafka) -> None:
    # GIVEN two groups on one topic, and a user allowed DESCRIBE on the topic and the first group only
    topic = workload.unique("orders")
    allowed, refused = workload.unique("allowed"), workload.unique("refused")
    secured_kafka.create_topic(topic, 1)
    secured_kafka.produce(topic, {0: 6})
    _commit(secured_kafka, allowed, {(topic, 0): 4})
    _commit(secured_kafka, refused, {(topic, 0): 1})
    _allow_describe(secured_kafka, "reader", topic, allowed)
    reader = secured_kafka.properties("reader")
    # WHEN that user reads both
    code, out, err = run(
        ["lag", "--bootstrap-server", secured_kafka.address, "--command-config", str(reader),
         "--group", allowed, "--group", refused, "--format", "json"]
    )  # fmt: skip
    # THEN the allowed group is read, the refused one is named with the broker's reason, exit 3
    assert code == ExitCode.INPUT_UNREADABLE, (code, out, err)
    import json

    document = json.loads(out)
    assert partitions_of(document, allowed)[(topic, 0)]["lag"] == 2
    refused_errors = " ".join(group_of(document, refused)["errors"])
    assert "GROUP_AUTHORIZATION_FAILED" in refused_errors, group_of(document, refused)
    assert f"{refused} (not allowed to describe the group (GROUP_AUTHORIZATION_FAILED" in err, err
    assert allowed not in err, err


def test_a_wrong_password_is_a_clear_failure(secured_kafka: SecuredKafka) -> None:
    # GIVEN client properties with a wrong SCRAM password
    wrong = secured_kafka.properties("reader", password="not-the-password")
    # WHEN kafkadiag reads with them
    code, out, err = run(
        ["lag", "--bootstrap-server", secured_kafka.address, "--command-config", str(wrong), "--all-groups"]
    )
    # THEN it says authentication failed, exit 3
    assert code == ExitCode.INPUT_UNREADABLE, (code, out, err)
    assert "authentication" in (out + err).lower(), (out, err)


@pytest.mark.parametrize("delay_s", [0.05, 0.12, 0.3])
def test_over_a_slow_link_credentials_are_judged_and_not_the_link(
    secured_kafka: SecuredKafka, delay_s: float
) -> None:
    # GIVEN the broker behind a long link: each byte arrives delay_s late, both ways, so the TLS
    # handshake alone outlasts kafkadiag's first look for a version answer
    from tests.infra.latency import LatencyRelay

    host, port = secured_kafka.address.rsplit(":", 1)
    with LatencyRelay((host, int(port)), delay_s) as relay:
        # WHEN kafkadiag bootstraps through it with a wrong password
        wrong = secured_kafka.properties("reader", password="not-the-password")
        code, out, err = run(
            ["lag", "--bootstrap-server", relay.address, "--command-config", str(wrong), "--all-groups",
             "--timeout", "20"]
        )  # fmt: skip
        # THEN the broker's refusal is what it reports, not an unreachable broker or an old one
        assert code == ExitCode.INPUT_UNREADABLE, (code, out, err)
        assert "authentication" in err.lower(), err
        assert "cannot reach" not in err and "0.9" not in err, err
        # and with the right one it reads, over the same link
        code, out, err = run(
            ["lag", "--bootstrap-server", relay.address, "--command-config",
             str(secured_kafka.properties("admin")), "--all-groups", "--timeout", "20"]
        )  # fmt: skip
        assert code in (ExitCode.OK, ExitCode.FINDINGS), (code, out, err)
        assert relay.connections >= 1
