"""A real ZooKeeper with a TLS client port beside its plain one (Netty, PEM key and certificate),
from the jars pyspark ships, as ZooKeeper documents the set-up (secureClientPort,
NettyServerCnxnFactory, ssl.keyStore / ssl.trustStore of type PEM)."""

from __future__ import annotations

import os
import time
from pathlib import Path

from kafkadiag.sandbox import servers
from tests.infra.tls import self_signed_certificate

NETTY_SERVER_JARS = (
    "netty-buffer-4*.jar",
    "netty-codec-4*.jar",
    "netty-common-4*.jar",
    "netty-handler-4*.jar",
    "netty-resolver-4*.jar",
    "netty-transport-4*.jar",
    "netty-transport-classes-epoll-4*.jar",
    "netty-transport-native-unix-common-4*.jar",
)


def start_tls_zookeeper(
    workdir: Path, sasl_users: dict[str, str] | None = None
) -> tuple[servers.ServerProcess, int, Path]:
    """(server, TLS port, CA certificate); the plain port is server.port. With `sasl_users`
    (name -> password) the server also takes SASL DIGEST-MD5 logins, from a JAAS Server section
    as ZooKeeper's SASL guide sets it up, and their ACL identity is `sasl:name`."""
    workdir.mkdir(parents=True, exist_ok=True)
    cert, key = self_signed_certificate(workdir / "tls", "zookeeper")
    keystore = workdir / "tls" / "zookeeper-keystore.pem"
    keystore.write_text(key.read_text() + cert.read_text())
    data_dir = workdir / "data"
    data_dir.mkdir(exist_ok=True)
    port, tls_port = servers.free_port(), servers.free_port()
    config = workdir / "zoo.cfg"
    config.write_text(
        "tickTime=2000\n"
        f"dataDir={data_dir}\n"
        f"clientPort={port}\n"
        f"secureClientPort={tls_port}\n"
        "clientPortAddress=127.0.0.1\n"
        "secureClientPortAddress=127.0.0.1\n"
        "serverCnxnFactory=org.apache.zookeeper.server.NettyServerCnxnFactory\n"
        f"ssl.keyStore.location={keystore}\n"
        "ssl.keyStore.type=PEM\n"
        f"ssl.trustStore.location={cert}\n"
        "ssl.trustStore.type=PEM\n"
        "ssl.clientAuth=none\n"
        "admin.enableServer=false\n"
        "4lw.commands.whitelist=ruok,srvr\n"
    )
    classpath = os.pathsep.join([servers.zookeeper_classpath(), *servers.kafka_jars(NETTY_SERVER_JARS)])
    sasl: list[str] = []
    if sasl_users:
        jaas = workdir / "server-jaas.conf"
        users = "\n".join(f'  user_{name}="{password}"' for name, password in sasl_users.items())
        jaas.write_text(
            f"Server {{\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n{users};\n}};\n"
        )
        sasl = [
            f"-Djava.security.auth.login.config={jaas}",
            "-Dzookeeper.authProvider.2=org.apache.zookeeper.server.auth.SASLAuthenticationProvider",
        ]
    argv = [
        servers.java_tool("java"), "-Xmx256m", "-XX:+UseSerialGC",
        "-Dzookeeper.authProvider.1=org.apache.zookeeper.server.auth.DigestAuthenticationProvider", *sasl,
        "-cp", classpath, "org.apache.zookeeper.server.ZooKeeperServerMain", str(config),
    ]  # fmt: skip
    server = servers.spawn("zookeeper-tls", argv, workdir, port)
    servers.wait_for_zookeeper_session(server, 30.0)
    deadline = time.monotonic() + 30
    while not servers.port_is_open(tls_port) and time.monotonic() < deadline:
        time.sleep(0.05)
    return server, tls_port, cert
