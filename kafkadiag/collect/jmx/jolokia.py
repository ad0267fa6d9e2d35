"""Read a consumer JVM's MBeans from a Jolokia agent (its HTTP read API), for places where only
Jolokia is open.

One GET per pattern: `<url>/read/<escaped ObjectName pattern>`; for a pattern the answer's
`value` maps each matching MBean's name to its attributes. A pattern nothing matches is answered
with status 404 and javax.management.InstanceNotFoundException ("No MBean with pattern ... found
for reading attributes"): that is an empty result, not an error. The settings come from
`java.lang:type=Runtime/SystemProperties`. Thread names are not read (that would be an exec
request). GET is used rather than a bulk POST because Jolokia's access policy may allow GET only.
Credentials: KAFKADIAG_JOLOKIA_USER / KAFKADIAG_JOLOKIA_PASSWORD (HTTP basic).
"""

from __future__ import annotations

import json
import time
import urllib.parse
from typing import Any

from kafkadiag import boundedjson
from kafkadiag.collect.jmx.errors import MetricsSourceError, MetricsSourceUsageError
from kafkadiag.collect.jmx.http import http_get, without_credentials
from kafkadiag.collect.jmx.jvm import KAFKA_PATTERNS, SETTING_PROPERTIES
from kafkadiag.collect.jmx.names import parse_object_name
from kafkadiag.consumer_metrics import SOURCE_JOLOKIA, MBeanReading, MetricsReading

USER_ENV = "KAFKADIAG_JOLOKIA_USER"
PASSWORD_ENV = "KAFKADIAG_JOLOKIA_PASSWORD"


def escape_path_part(text: str) -> str:
    """Jolokia's GET path escaping (jolokia.js `escape`): ! / and " are escaped with !, then the
    whole part is percent-encoded."""
    escaped = text.replace("!", "!!").replace("/", "!/").replace('"', '!"')
    return urllib.parse.quote(escaped, safe="")


def _document(url: str, timeout_s: float) -> dict[str, Any]:
    status, body = http_get(url, timeout_s, f"Jolokia {url}", USER_ENV, PASSWORD_ENV)
    url = without_credentials(url)
    try:
        document = boundedjson.loads(body.decode("utf-8", "replace"))
    except ValueError:
        raise MetricsSourceError(
            f"{url} answered HTTP {status} with something that is not Jolokia's JSON",
            help_text="--jolokia takes the agent's base URL, e.g. http://host:8778/jolokia (without /read).",
        ) from None
    if not isinstance(document, dict):
        raise MetricsSourceError(f"{url}: unexpected answer (not a JSON object)")
    return document


def _is_no_match(document: dict[str, Any]) -> bool:
    return document.get("status") == 404 and "InstanceNotFoundException" in str(
        document.get("error_type", "")
    )


def read_jolokia(url: str, timeout_s: float = 10.0) -> MetricsReading:
    base = url.rstrip("/")
    if not base.startswith(("http://", "https://")):
        raise MetricsSourceUsageError(f"--jolokia takes an http(s) URL, not {url!r}")
    read_at_ms = int(time.time() * 1000)
    started = time.monotonic()
    beans: list[MBeanReading] = []
    notes: list[str] = []
    for pattern in KAFKA_PATTERNS:
        document = _document(f"{base}/read/{escape_path_part(pattern)}", timeout_s)
        if _is_no_match(document):
            continue
        if document.get("status") != 200:
            notes.append(
                f"Jolokia refused reading {pattern}: {document.get('error') or document.get('status')}"
            )
            continue
        value = document.get("value")
        if not isinstance(value, dict):
            continue
        for name, attributes in sorted(value.items()):
            if not isinstance(attributes, dict):
                continue
            domain, properties = parse_object_name(name)
            beans.append(
                MBeanReading(
                    name=name,
                    domain=domain,
                    properties=tuple(properties),
                    attributes=tuple(sorted((key, _scalar(item)) for key, item in attributes.items())),
                )
            )
    system_properties: dict[str, str] = {}
    document = _document(
        f"{base}/read/{escape_path_part('java.lang:type=Runtime')}/SystemProperties", timeout_s
    )
    if document.get("status") == 200 and isinstance(document.get("value"), dict):
        system_properties = {
            key: str(value) for key, value in document["value"].items() if key in SETTING_PROPERTIES
        }
    else:
        notes.append("the JVM's system properties were not readable through Jolokia")
    notes.append("thread names are not read through Jolokia (that would need an exec request)")
    duration_ms = (time.monotonic() - started) * 1000
    return MetricsReading(
        source_kind=SOURCE_JOLOKIA,
        source=without_credentials(base),
        read_at_ms=read_at_ms,
        duration_ms=round(duration_ms, 3),
        beans=tuple(beans),
        system_properties=tuple(sorted(system_properties.items())),
        notes=tuple(notes),
        timings=(("read_ms", round(duration_ms, 3)),),
    )


def _scalar(value: Any) -> Any:
    if isinstance(value, (int, float, str, bool)) or value is None:
        return value
    return json.dumps(value, sort_keys=True)
