"""How to reach a secured ZooKeeper, taken the way Kafka's own tools take it.

- TLS: `--zk-tls-config-file FILE`, a Java properties file with Kafka's `zookeeper.ssl.*` names
  (as `kafka-configs.sh --zk-tls-config-file` reads): `zookeeper.ssl.client.enable`,
  `zookeeper.ssl.truststore.location` / `.type`, `zookeeper.ssl.keystore.location` / `.type` /
  `.password`, `zookeeper.ssl.endpoint.identification.enable`. Python's ssl module reads PEM
  files only: JKS and PKCS12 stores are refused with the command that converts them. The same
  file may set `jute.maxbuffer` (ZooKeeper's own client property) to read replies larger than
  kafkadiag's bound of 64 MiB, from an ensemble whose jute.maxbuffer is larger.
- Credentials never come from the command line (it is visible in `ps`):
  `KAFKADIAG_ZK_DIGEST=user:password` adds a digest identity (as `addauth digest` does), and a
  JAAS file (`--zk-jaas-file FILE`, or `KAFKADIAG_ZK_JAAS_FILE`, or the
  `-Djava.security.auth.login.config=FILE` in `KAFKA_OPTS` that Kafka's tools use) with a
  `Client` section of DigestLoginModule logs in with SASL DIGEST-MD5.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import Any

from kafkadiag.collect.config import jaas_options, parse_properties
from kafkadiag.collect.optionfile import OptionFileError, pem_file_problem, read_option_text
from kafkadiag.digits import decimal
from kafkadiag.errors import UsageError

DIGEST_ENV = "KAFKADIAG_ZK_DIGEST"
JAAS_ENV = "KAFKADIAG_ZK_JAAS_FILE"
# The `Client { ... };` section, found by its opening and then the first `};` after it: a lazy
# pattern from every "Client {" to a closing that never comes rescanned the rest of the file.
_JAAS_SECTION_START = re.compile(r"\bClient\s*\{")
_JAAS_SECTION_END = re.compile(r"\}\s*;")


class ZooKeeperSecurityError(UsageError):
    HELP_TEXT = (
        "--zk-tls-config-file takes Kafka's zookeeper.ssl.* properties with PEM files "
        "(zookeeper.ssl.truststore.type=PEM); credentials come from $KAFKADIAG_ZK_DIGEST "
        "(user:password) or a JAAS file's Client section (--zk-jaas-file). See docs/lag.md."
    )


@dataclass(frozen=True)
class ZooKeeperSecurity:
    use_tls: bool = False
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    key_password: str | None = None
    check_hostname: bool = True
    digest: tuple[str, str] | None = None  # (user, password) for addauth digest
    sasl: dict[str, str] = field(default_factory=dict)  # kazoo sasl_options
    # The largest reply to read, where the file sets jute.maxbuffer (as ZooKeeper's client reads
    # it from its own config file) above kafkadiag's bound (collect/zookeeper/framing.py).
    jute_maxbuffer: int | None = None

    def kazoo_options(self) -> dict[str, Any]:
        options: dict[str, Any] = {}
        if self.use_tls:
            options.update(
                use_ssl=True,
                ca=self.ca_file,
                certfile=self.cert_file,
                keyfile=self.key_file,
                keyfile_password=self.key_password,
                verify_certs=True,
                check_hostname=self.check_hostname,
            )
        if self.digest is not None:
            options["auth_data"] = [("digest", f"{self.digest[0]}:{self.digest[1]}")]
        if self.sasl:
            options["sasl_options"] = dict(self.sasl)
        return options

    def describe(self) -> str:
        parts = ["TLS" if self.use_tls else "plaintext"]
        if self.digest is not None:
            parts.append(f"digest identity {self.digest[0]}")
        if self.sasl:
            parts.append(f"SASL {self.sasl.get('mechanism')} as {self.sasl.get('username')}")
        return ", ".join(parts)


NO_SECURITY = ZooKeeperSecurity()


def read_security(
    tls_config_file: str | None, jaas_file: str | None, environ: dict[str, str] | None = None
) -> ZooKeeperSecurity:
    environ = dict(os.environ) if environ is None else environ
    settings: dict[str, Any] = {}
    if tls_config_file:
        settings.update(_tls_settings(tls_config_file))
    digest = environ.get(DIGEST_ENV)
    if digest:
        user, colon, password = digest.partition(":")
        if not colon or not user:
            raise ZooKeeperSecurityError(f"${DIGEST_ENV} must be user:password")
        settings["digest"] = (user, password)
    jaas = jaas_file or environ.get(JAAS_ENV) or _jaas_from_kafka_opts(environ.get("KAFKA_OPTS", ""))
    if jaas:
        settings["sasl"] = _sasl_from_jaas(jaas)
    return ZooKeeperSecurity(**settings)


def _tls_settings(path: str) -> dict[str, Any]:
    try:
        properties = parse_properties(read_option_text(path))
    except OptionFileError as error:
        raise ZooKeeperSecurityError(f"cannot read --zk-tls-config-file {path}: {error}") from None
    # TLS unless the file says otherwise, or names no zookeeper.ssl.* setting at all (a file
    # that only raises jute.maxbuffer for a plaintext port)
    tls_named = any(key.startswith("zookeeper.ssl.") for key in properties)
    enabled = properties.get("zookeeper.ssl.client.enable", str(tls_named)).strip().lower() == "true"
    settings: dict[str, Any] = {"use_tls": enabled}
    for kind, key in (("truststore", "ca_file"), ("keystore", "cert_file")):
        location = properties.get(f"zookeeper.ssl.{kind}.location")
        if not location:
            continue
        store_type = properties.get(f"zookeeper.ssl.{kind}.type", "").strip().upper()
        if store_type != "PEM" and not location.lower().endswith((".pem", ".crt")):
            raise ZooKeeperSecurityError(
                f"zookeeper.ssl.{kind}.location={location} is a {store_type or 'JKS'} store; kafkadiag reads "
                f"PEM only: convert it (keytool -importkeystore -srckeystore {location} -destkeystore "
                f"store.p12 -deststoretype PKCS12, then openssl pkcs12 -in store.p12 -out store.pem -nodes) "
                f"and set zookeeper.ssl.{kind}.type=PEM"
            )
        problem = pem_file_problem(location)
        if problem is not None:
            raise ZooKeeperSecurityError(f"cannot use zookeeper.ssl.{kind}.location={location}: {problem}")
        settings[key] = location
    if "cert_file" in settings:
        # a PEM keystore holds the key beside the certificate
        settings["key_file"] = settings["cert_file"]
        settings["key_password"] = properties.get("zookeeper.ssl.keystore.password") or None
    identification = properties.get("zookeeper.ssl.endpoint.identification.enable", "true")
    settings["check_hostname"] = identification.strip().lower() == "true"
    maxbuffer = properties.get("jute.maxbuffer")
    if maxbuffer is not None:
        settings["jute_maxbuffer"] = _byte_count("jute.maxbuffer", maxbuffer)
    return settings


def _byte_count(name: str, text: str) -> int:
    value = decimal(text.strip())
    if value is None or value <= 0:
        raise ZooKeeperSecurityError(f"{name}={text} is not a number of bytes")
    return value


def _jaas_from_kafka_opts(kafka_opts: str) -> str | None:
    match = re.search(r"-Djava\.security\.auth\.login\.config=(\S+)", kafka_opts)
    return match.group(1) if match else None


def _sasl_from_jaas(path: str) -> dict[str, str]:
    try:
        text = read_option_text(path)
    except OptionFileError as error:
        raise ZooKeeperSecurityError(f"cannot read the JAAS file {path}: {error}") from None
    start = _JAAS_SECTION_START.search(text)
    end = _JAAS_SECTION_END.search(text, start.end()) if start is not None else None
    if start is None or end is None:
        raise ZooKeeperSecurityError(
            f"{path} has no Client {{ ... }}; section (the one ZooKeeper clients use)"
        )
    body = text[start.end() : end.start()]
    options = jaas_options(body)
    if "DigestLoginModule" not in body or "username" not in options:
        raise ZooKeeperSecurityError(
            f"{path}: kafkadiag logs in to ZooKeeper with DigestLoginModule (SASL DIGEST-MD5) "
            "and a username and password; Kerberos logins are not supported"
        )
    return {
        "mechanism": "DIGEST-MD5",
        "username": options["username"],
        "password": options.get("password", ""),
    }
