"""A secured ZooKeeper, real: a digest ACL on /consumers and a TLS client port. Without
credentials the protected znodes are flagged, never guessed; with the digest identity from the
environment (never the command line) they are read; over TLS with Kafka's zookeeper.ssl.*
properties the same group reads the same; a wrong CA fails clearly in bounded time."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kafkadiag.collect.zookeeper.security import ZooKeeperSecurityError, read_security
from kafkadiag.exitcodes import ExitCode
from tests.infra.cli import partitions_of, run
from tests.infra.servers import ServerProcess
from tests.infra.tls import self_signed_certificate
from tests.infra.zookeeper_tls import start_tls_zookeeper

USER, PASSWORD = "ops", "s3cret:with:colons"
GROUP, TOPIC = "secured-group", "payments"
# A second group readable only by a SASL identity (Kafka's JAAS Client section logs in with it).
SASL_USER, SASL_PASSWORD = "kafka", "sasl-s3cret"
SASL_GROUP = "sasl-group"


@pytest.fixture(scope="module")
def secured(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ServerProcess, int, Path]]:
    from kazoo.client import KazooClient
    from kazoo.security import ACL, Id, Permissions, make_digest_acl

    server, tls_port, ca = start_tls_zookeeper(tmp_path_factory.mktemp("zk-tls"), {SASL_USER: SASL_PASSWORD})
    admin = KazooClient(hosts=server.address, auth_data=[("digest", f"{USER}:{PASSWORD}")])
    admin.start(timeout=10)
    try:
        acl = [make_digest_acl(USER, PASSWORD, all=True)]
        admin.create("/consumers", acl=acl)
        admin.create(f"/consumers/{GROUP}", acl=acl)
        for child in ("ids", "owners", "offsets"):
            admin.create(f"/consumers/{GROUP}/{child}", acl=acl)
        admin.create(f"/consumers/{GROUP}/offsets/{TOPIC}", acl=acl)
        for partition, offset in ((0, 41), (1, 7)):
            admin.create(f"/consumers/{GROUP}/offsets/{TOPIC}/{partition}", str(offset).encode(), acl=acl)
        # (the digest identity may only create children, to build the tree; it cannot read it)
        sasl_acl = [ACL(Permissions.ALL, Id("sasl", SASL_USER)), make_digest_acl(USER, PASSWORD, create=True)]
        for path in ("", "/ids", "/owners", "/offsets", f"/offsets/{TOPIC}"):
            admin.create(f"/consumers/{SASL_GROUP}{path}", acl=sasl_acl)
        admin.create(f"/consumers/{SASL_GROUP}/offsets/{TOPIC}/0", b"1234", acl=sasl_acl)
        yield server, tls_port, ca
    finally:
        admin.stop()
        admin.close()
        server.stop()


def _lag(address: str, *extra: str, env: dict[str, str] | None = None) -> tuple[int, Any, str]:
    code, out, err = run(
        ["lag", "--zookeeper", address, "--group", GROUP, "--format", "json", "--timeout", "5s", *extra],
        env=env,
    )
    return code, (json.loads(out) if out.strip() else None), err


def _offsets(document: Any) -> dict[tuple[str, int], Any]:
    return {key: entry["committed_offset"] for key, entry in partitions_of(document, GROUP).items()}


def test_without_credentials_the_acl_is_named_and_nothing_is_guessed(secured: Any) -> None:
    server, _, _ = secured
    code, document, err = _lag(server.address, env={"KAFKADIAG_ZK_DIGEST": ""})
    assert code == ExitCode.INPUT_UNREADABLE, err
    assert "not allowed to read (ZooKeeper ACL)" in json.dumps(document)
    assert all(offset is None for offset in _offsets(document).values()) if document["groups"] else True


def test_the_digest_identity_from_the_environment_reads_the_group(secured: Any) -> None:
    server, _, _ = secured
    code, document, err = _lag(server.address, env={"KAFKADIAG_ZK_DIGEST": f"{USER}:{PASSWORD}"})
    # (no broker: the watermarks are unknown, the committed offsets are exact)
    assert code in (ExitCode.OK, ExitCode.FINDINGS, ExitCode.INPUT_UNREADABLE), err
    assert _offsets(document) == {(TOPIC, 0): 41, (TOPIC, 1): 7}
    assert PASSWORD not in json.dumps(document) and PASSWORD not in err


def test_a_jaas_file_logs_in_with_sasl_digest_md5_and_reads_what_only_that_identity_may(
    secured: Any, tmp_path: Path
) -> None:
    server, _, _ = secured
    jaas = tmp_path / "jaas.conf"
    jaas.write_text(
        "Client {\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n"
        f'  username="{SASL_USER}"\n  password="{SASL_PASSWORD}";\n}};\n'
    )
    code, out, err = run(
        ["lag", "--zookeeper", server.address, "--group", SASL_GROUP, "--format", "json", "--timeout", "5s",
         "--zk-jaas-file", str(jaas)],
        env={"KAFKADIAG_ZK_DIGEST": ""},
    )  # fmt: skip
    document = json.loads(out)
    offsets = {key: entry["committed_offset"] for key, entry in partitions_of(document, SASL_GROUP).items()}
    assert offsets == {(TOPIC, 0): 1234}, err
    assert SASL_PASSWORD not in out + err
    # and without the login, the same group is flagged as not readable
    code, out, err = run(
        ["lag", "--zookeeper", server.address, "--group", SASL_GROUP, "--format", "json", "--timeout", "5s"],
        env={"KAFKADIAG_ZK_DIGEST": ""},
    )
    assert code == ExitCode.INPUT_UNREADABLE and "not allowed to read (ZooKeeper ACL)" in out


def test_a_jaas_file_with_a_wrong_password_fails_clearly(secured: Any, tmp_path: Path) -> None:
    server, _, _ = secured
    jaas = tmp_path / "jaas.conf"
    jaas.write_text(
        "Client {\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n"
        '  username="ops"\n  password="wrong";\n};\n'
    )
    started = time.monotonic()
    code, _, err = _lag(server.address, "--zk-jaas-file", str(jaas), env={"KAFKADIAG_ZK_DIGEST": ""})
    assert code in (ExitCode.INPUT_UNREADABLE, ExitCode.USAGE), err
    assert "Traceback" not in err and "wrong" not in err
    assert time.monotonic() - started < 10


def test_over_tls_with_kafkas_properties_the_same_offsets_are_read(secured: Any, tmp_path: Path) -> None:
    _, tls_port, ca = secured
    config = tmp_path / "zk-tls.properties"
    config.write_text(
        "zookeeper.ssl.client.enable=true\n"
        "zookeeper.clientCnxnSocket=org.apache.zookeeper.ClientCnxnSocketNetty\n"
        f"zookeeper.ssl.truststore.location={ca}\n"
        "zookeeper.ssl.truststore.type=PEM\n"
    )
    code, document, err = _lag(
        f"127.0.0.1:{tls_port}", "--zk-tls-config-file", str(config),
        env={"KAFKADIAG_ZK_DIGEST": f"{USER}:{PASSWORD}"},
    )  # fmt: skip
    assert document is not None, err
    assert _offsets(document) == {(TOPIC, 0): 41, (TOPIC, 1): 7}


def test_over_tls_a_certificate_from_another_ca_is_refused_in_bounded_time(
    secured: Any, tmp_path: Path
) -> None:
    _, tls_port, _ = secured
    other_ca, _ = self_signed_certificate(tmp_path, "other")
    config = tmp_path / "zk-tls.properties"
    config.write_text(f"zookeeper.ssl.truststore.location={other_ca}\nzookeeper.ssl.truststore.type=PEM\n")
    started = time.monotonic()
    code, _, err = _lag(f"127.0.0.1:{tls_port}", "--zk-tls-config-file", str(config))
    assert code == ExitCode.INPUT_UNREADABLE, err
    assert "cannot connect to ZooKeeper" in err and "CERTIFICATE_VERIFY_FAILED" in err, err
    assert time.monotonic() - started < 10


def test_security_settings_are_read_the_way_kafkas_tools_write_them(tmp_path: Path) -> None:
    jks = tmp_path / "zk.properties"
    jks.write_text("zookeeper.ssl.truststore.location=/etc/kafka/truststore.jks\n")
    with pytest.raises(ZooKeeperSecurityError, match="keytool -importkeystore"):
        read_security(str(jks), None, environ={})
    jaas = tmp_path / "kafka_jaas.conf"
    jaas.write_text(
        "KafkaServer { x required; };\nClient {\n  org.apache.zookeeper.server.auth.DigestLoginModule "
        'required username="kafka" password="p\\"w";\n};\n'
    )
    security = read_security(
        None, None, environ={"KAFKA_OPTS": f"-Xmx1g -Djava.security.auth.login.config={jaas}"}
    )
    assert security.sasl == {"mechanism": "DIGEST-MD5", "username": "kafka", "password": 'p"w'}
    with pytest.raises(ZooKeeperSecurityError, match="user:password"):
        read_security(None, None, environ={"KAFKADIAG_ZK_DIGEST": "nocolon"})
    assert read_security(None, None, environ={"KAFKADIAG_ZK_DIGEST": "a:b:c"}).digest == ("a", "b:c")


def test_jute_maxbuffer_alone_raises_the_reply_bound_and_keeps_the_port_plaintext(tmp_path: Path) -> None:
    alone = tmp_path / "zk-client.properties"
    alone.write_text("jute.maxbuffer=104857600\n")
    security = read_security(str(alone), None, environ={})
    assert security.jute_maxbuffer == 104857600 and not security.use_tls
    with_tls = tmp_path / "zk-tls.properties"
    with_tls.write_text("zookeeper.ssl.truststore.location=/ca.pem\njute.maxbuffer=4194304\n")
    security = read_security(str(with_tls), None, environ={})
    assert security.use_tls and security.jute_maxbuffer == 4194304
    with_tls.write_text("jute.maxbuffer=lots\n")
    with pytest.raises(ZooKeeperSecurityError, match="jute.maxbuffer=lots is not a number of bytes"):
        read_security(str(with_tls), None, environ={})


def test_a_jaas_file_of_openings_without_a_close_is_read_in_linear_time(tmp_path: Path) -> None:
    from kafkadiag.collect.zookeeper.security import _sasl_from_jaas
    from tests.dumps.adversarial import RATIO_LIMIT, measure

    paths = {}
    for factor in (1, 4):
        paths[factor] = tmp_path / f"jaas-{factor}x.conf"
        paths[factor].write_text("Client { " * (8_000 * factor))

    def read(factor: int) -> float:
        started = time.process_time()
        with pytest.raises(ZooKeeperSecurityError, match="no Client"):
            _sasl_from_jaas(str(paths[factor]))
        return time.process_time() - started

    scaling = measure(read)
    assert scaling.ratio <= RATIO_LIMIT, (scaling.small, scaling.large)
