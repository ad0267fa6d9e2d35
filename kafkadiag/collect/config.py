"""--command-config: a Java properties file as Kafka's tools take it, mapped to kafka-python.

Kafka's own keys are accepted (security.protocol, sasl.mechanism, sasl.jaas.config,
ssl.truststore.*, ssl.keystore.*, ssl.key.password, ssl.endpoint.identification.algorithm,
request.timeout.ms, client.id), and so are librdkafka's PEM keys (ssl.ca.location,
ssl.certificate.location, ssl.key.location, sasl.username, sasl.password). JKS and PKCS12
stores cannot be read by Python's ssl module: the error says how to convert them.

`kafkadiag check --config FILE`, its thresholds (TOML or JSON), is read here too.
"""

from __future__ import annotations

import re
import sys
from typing import TYPE_CHECKING, Any

from kafkadiag.collect.errors import CommandConfigError
from kafkadiag.digits import decimal, is_decimal
from kafkadiag.errors import InputUnreadableError, UsageError

if TYPE_CHECKING:
    from kafkadiag.lag.check import CheckPolicy

# An option `name="value"`, tried only where a word starts (from inside a long word each start
# rescanned the rest of it) and a value that is never closed taken to the end (`end` is then not
# a quote, and the option dropped): a 20 KB entry took 2.7 s, growing with its square.
_JAAS_OPTION = re.compile(r'(?<!\w)(\w+)\s*=\s*"((?:[^"\\]|\\.)*)("|\\?$)')
_SECURITY_PROTOCOLS = ("PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL")
_SASL_MECHANISMS = ("PLAIN", "SCRAM-SHA-256", "SCRAM-SHA-512", "GSSAPI", "OAUTHBEARER")
# Keys that only matter to producers, consumers or the JVM: accepted and ignored quietly.
_IGNORED_PREFIXES = (
    "ssl.enabled.protocols",
    "ssl.protocol",
    "ssl.cipher.suites",
    "ssl.keymanager.",
    "ssl.trustmanager.",
)


def parse_properties(text: str) -> dict[str, str]:
    """java.util.Properties' format: key=value or key: value, # and ! comments, \\ continuations."""
    properties: dict[str, str] = {}
    logical = ""
    for raw in text.splitlines():
        line = raw.strip() if not logical else raw.lstrip()
        if not logical and (not line or line[0] in "#!"):
            continue
        if line.endswith("\\") and not line.endswith("\\\\"):
            logical += line[:-1]
            continue
        logical += line
        match = re.match(r"((?:[^=:\s\\]|\\.)+)\s*[=:\s]\s*(.*)$", logical)
        if match:
            properties[match.group(1).replace("\\", "")] = match.group(2).strip()
        elif logical:
            properties[logical] = ""
        logical = ""
    return properties


def read_command_config(path: str) -> dict[str, str]:
    from kafkadiag.collect.optionfile import OptionFileError, read_option_text

    try:
        return parse_properties(read_option_text(path))
    except OptionFileError as error:
        raise CommandConfigError(f"cannot read --command-config {path}: {error}") from None


# Keys whose value is taken as it is, under kafka-python's name.
_RENAMED = {
    "sasl.username": "sasl_plain_username",
    "sasl.password": "sasl_plain_password",
    "sasl.kerberos.service.name": "sasl_kerberos_service_name",
    "ssl.ca.location": "ssl_cafile",
    "ssl.key.location": "ssl_keyfile",
    "ssl.key.password": "ssl_password",
    "ssl.crl.location": "ssl_crlfile",
    "client.id": "client_id",
}
# Keys read together with others (the store types, checked with their stores) or not needed.
_READ_WITH_OTHERS = frozenset(
    "security.protocol ssl.truststore.type ssl.keystore.type ssl.truststore.password sasl.login.class".split()
)


def kafka_python_config(properties: dict[str, str]) -> tuple[dict[str, Any], list[str]]:
    """(kafka-python admin client settings, notes about ignored keys)."""
    config: dict[str, Any] = {}
    notes: list[str] = []
    protocol = properties.get("security.protocol", "PLAINTEXT").upper()
    if protocol not in _SECURITY_PROTOCOLS:
        raise CommandConfigError(
            f"security.protocol={protocol} is not one of {', '.join(_SECURITY_PROTOCOLS)}"
        )
    config["security_protocol"] = protocol
    for key, value in properties.items():
        if key in _RENAMED:
            config[_RENAMED[key]] = value
        elif key in _READ_WITH_OTHERS or key.startswith(_IGNORED_PREFIXES):
            continue
        elif not _mapped(key, value, properties, config):
            notes.append(f"--command-config: {key} is not used by kafkadiag")
    return config, notes


def _mapped(key: str, value: str, properties: dict[str, str], config: dict[str, Any]) -> bool:
    """Put the setting `key` says into `config`; False when kafkadiag has no use for the key."""
    if key == "sasl.mechanism":
        mechanism = value.upper()
        if mechanism not in _SASL_MECHANISMS:
            raise CommandConfigError(f"sasl.mechanism={value} is not one of {', '.join(_SASL_MECHANISMS)}")
        config["sasl_mechanism"] = mechanism
    elif key == "sasl.jaas.config":
        options = jaas_options(value)
        named = (("username", "sasl_plain_username"), ("password", "sasl_plain_password"),
                 ("serviceName", "sasl_kerberos_service_name"))  # fmt: skip
        config.update({setting: options[option] for option, setting in named if option in options})
    elif key == "ssl.truststore.location":
        _require_pem(properties, "ssl.truststore.type", key, value)
        config["ssl_cafile"] = value
    elif key in ("ssl.keystore.location", "ssl.certificate.location"):
        if key == "ssl.keystore.location":
            _require_pem(properties, "ssl.keystore.type", key, value)
        config["ssl_certfile"] = value
        config.setdefault("ssl_keyfile", value)
    elif key == "ssl.keystore.password":
        config.setdefault("ssl_password", value)
    elif key == "ssl.endpoint.identification.algorithm":
        config["ssl_check_hostname"] = value.strip().lower() == "https"
    elif key == "request.timeout.ms":
        config["request_timeout_ms"] = _positive_int(key, value)
    elif key == "api.version":
        config["api_version"] = _api_version(value)
    else:
        return False
    return True


def _require_pem(properties: dict[str, str], type_key: str, key: str, value: str) -> None:
    from kafkadiag.collect.optionfile import pem_file_problem

    store_type = properties.get(type_key, "JKS").upper()
    if store_type != "PEM":
        raise CommandConfigError(
            f"{key}={value} is a {store_type} store, which Python cannot read",
            help_text=(
                f"Convert it to PEM (keytool -importkeystore -srckeystore {value} -destkeystore store.p12 "
                f"-deststoretype PKCS12, then openssl pkcs12 -in store.p12 -out store.pem -nodes) and set "
                f"{type_key}=PEM with {key} pointing at the PEM file."
            ),
        )
    problem = pem_file_problem(value)
    if problem is not None:
        raise CommandConfigError(f"cannot use {key}={value}: {problem}")


def _api_version(value: str) -> tuple[int, ...]:
    """api.version=0.8.2 pins the broker's version (kafka-python's api_version): a broker before
    0.10 does not answer the version probe, and a pinned client never sends it."""
    parts = value.strip().split(".")
    if not 2 <= len(parts) <= 3 or not all(is_decimal(part) for part in parts):
        raise CommandConfigError(f"api.version={value} is not a Kafka version such as 0.8.2 or 2.8")
    return tuple(int(part) for part in parts)


def _positive_int(key: str, value: str) -> int:
    number = decimal(value)
    if number is None or number <= 0:
        raise CommandConfigError(f"{key}={value} is not a positive number")
    return number


def jaas_options(text: str) -> dict[str, str]:
    """The name="value" options of a JAAS login module entry, backslash escapes undone."""
    return {name: _unescape(value) for name, value, end in _JAAS_OPTION.findall(text) if end == '"'}


def _unescape(text: str) -> str:
    return re.sub(r"\\(.)", r"\1", text)


def _toml(text: str) -> Any:
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # the same parser, before it joined the standard library
        import tomli as tomllib
    try:
        return tomllib.loads(text)
    except RecursionError:  # the parser recurses per nested array or inline table
        raise ValueError("arrays or tables nested too deeply to read") from None


def read_check_policy(path: str) -> CheckPolicy:
    """A TOML or JSON file with [defaults] and [[rule]] tables (docs/lag.md)."""
    from kafkadiag import boundedjson
    from kafkadiag.collect.optionfile import OptionFileError, read_option_text
    from kafkadiag.lag.check import policy_from_document

    try:
        text = read_option_text(path)
    except OptionFileError as error:
        raise InputUnreadableError(
            f"cannot read --config {path}: {error}",
            help_text="Check the path of the check configuration file.",
        ) from None
    try:
        if path.endswith(".json"):
            document = boundedjson.loads(text)
        else:
            document = _toml(text)
        if not isinstance(document, dict):
            raise ValueError("the configuration must be a table of [defaults] and [[rule]] entries")
        return policy_from_document(document)
    except ValueError as error:
        raise UsageError(
            f"--config {path}: {error}",
            help_text="See docs/lag.md, section 'kafkadiag check', for the format.",
        ) from None
