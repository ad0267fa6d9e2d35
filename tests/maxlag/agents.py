"""Stand-ins for a Jolokia agent and a Prometheus JMX exporter, for the tests only.

Honest about what is real: no Jolokia or JMX exporter jar runs here (none is installed, and the
tests download nothing). The HTTP server below is started by the test on 127.0.0.1 and a free
port; it answers Jolokia's read protocol and serves the exporter's text exposition, and every
value it serves was read moments before from the real reproducer JVM over JMX (`refresh`). The
renderers follow those agents' sources: Jolokia's ReadHandler (canonical names as keys, 404 with
InstanceNotFoundException when a pattern matches nothing) and the JMX exporter's JmxCollector
(defaultExport/safeName naming, or rules wrapped as `^.*(?:pattern).*$` and matched against
`domain<k=v, ...><>Attribute: value`).
"""

from __future__ import annotations

import json
import re
import threading
import time
import urllib.parse
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from kafkadiag.collect.jmx.names import parse_object_name
from kafkadiag.consumer_metrics import MBeanReading, MetricsReading

# ---- ObjectName helpers -------------------------------------------------------------------


def raw_parts(name: str) -> tuple[str, list[tuple[str, str]]]:
    """Domain and key properties exactly as written (quotes kept), in registration order."""
    if name.startswith('"'):
        colon = name.index('":') + 1
    else:
        colon = name.index(":")
    domain, rest = name[:colon], name[colon + 1 :]
    properties: list[tuple[str, str]] = []
    key, quoted, current = "", False, ""
    index = 0
    while index < len(rest):
        char = rest[index]
        if char == "\\" and quoted:
            current += rest[index : index + 2]
            index += 2
            continue
        if char == '"':
            quoted = not quoted
        if char == "=" and not quoted and not key:
            key, current = current, ""
        elif char == "," and not quoted:
            properties.append((key, current))
            key, current = "", ""
        else:
            current += char
        index += 1
    if key:
        properties.append((key, current))
    return domain, properties


def canonical_name(bean: MBeanReading) -> str:
    domain, properties = raw_parts(bean.name)
    return domain + ":" + ",".join(f"{k}={v}" for k, v in sorted(properties))


def matches(bean: MBeanReading, pattern: str) -> bool:
    domain, wanted = parse_object_name(pattern)
    if bean.domain != domain:
        return False
    have = dict(bean.properties)
    if not pattern.endswith(",*") and len(have) != len(wanted):
        return False
    return all(have.get(key) == value for key, value in wanted)


# ---- Jolokia --------------------------------------------------------------------------------


def jolokia_unescape(path: str) -> str:
    text = urllib.parse.unquote(path)
    out, index = [], 0
    while index < len(text):
        if text[index] == "!" and index + 1 < len(text):
            out.append(text[index + 1])
            index += 2
        else:
            out.append(text[index])
            index += 1
    return "".join(out)


def jolokia_read(reading: MetricsReading, mbean: str, attribute: str | None) -> dict[str, Any]:
    request = {"mbean": mbean, "type": "read", **({"attribute": attribute} if attribute else {})}
    stamp = int(time.time())
    if mbean == "java.lang:type=Runtime" and attribute == "SystemProperties":
        return {
            "request": request,
            "value": dict(reading.system_properties),
            "timestamp": stamp,
            "status": 200,
        }
    found = [bean for bean in reading.beans if matches(bean, mbean)]
    if not found:
        return {
            "request": request,
            "error_type": "javax.management.InstanceNotFoundException",
            "error": f"javax.management.InstanceNotFoundException : No MBean with pattern {mbean} found for "
            "reading attributes",
            "status": 404,
            "timestamp": stamp,
        }
    value = {canonical_name(bean): dict(bean.attributes) for bean in found}
    return {"request": request, "value": value, "timestamp": stamp, "status": 200}


# ---- Prometheus JMX exporter --------------------------------------------------------------------

_UNSAFE = re.compile(r"[^a-zA-Z0-9:_]")
_UNDERSCORES = re.compile(r"__+")


def safe_name(text: str) -> str:
    return _UNDERSCORES.sub("_", _UNSAFE.sub("_", text))


def _escape_label(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def _numeric(value: Any) -> float | None:
    if isinstance(value, bool):
        return 1.0 if value else 0.0
    if isinstance(value, (int, float)):
        return float(value)
    return None


def exporter_default(reading: MetricsReading, lowercase: bool = False) -> str:
    """JmxCollector.defaultExport for every numeric attribute."""
    lines = []
    for bean in reading.beans:
        domain, properties = raw_parts(bean.name)
        for attribute, value in bean.attributes:
            number = _numeric(value)
            if number is None:
                continue
            name = safe_name(f"{domain}_{properties[0][1]}_{attribute}")
            if lowercase:
                name = name.lower()
            labels = ",".join(f'{safe_name(k)}="{_escape_label(v)}"' for k, v in properties[1:])
            lines.append(f"# HELP {name} {attribute} ({bean.name})")
            lines.append(f"# TYPE {name} untyped")
            lines.append(f"{name}{{{labels},}} {number!r}" if labels else f"{name} {number!r}")
    return "\n".join(lines) + "\n"


# example_configs/kafka-consumer-producer-0-8-2.yml, consumer rules (lowercaseOutputName: true)
CONSUMER_RULES = [
    (
        r"^kafka.consumer<type=(.+), name=(.+), clientId=(.+)><>"
        r"(FiveMinuteRate|MeanRate|OneMinuteRate|FifteenMinuteRate)",
        r"kafka_consumer_\1_\2_rate",
        {"client": r"\3", "calculation": r"\4"},
    ),
    (
        r"^kafka.consumer<type=(.+), name=(.+), clientId=(.+)><>Value",
        r"kafka_consumer_\1_\2",
        {"client": r"\3"},
    ),
    (
        r"^kafka.consumer<type=(.+), name=(.+), clientId=(.+)><>Count",
        r"kafka_consumer_\1_\2_total",
        {"client": r"\3"},
    ),
]


def exporter_rules(reading: MetricsReading) -> str:
    """JmxCollector with the rules above: beans no rule matches (kafka.server) are not exported."""
    lines = []
    for bean in reading.beans:
        domain, properties = raw_parts(bean.name)
        bean_name = domain + "<" + ", ".join(f"{k}={v}" for k, v in properties) + ">" + "<>"
        for attribute, value in bean.attributes:
            number = _numeric(value)
            if number is None:
                continue
            subject = f"{bean_name}{attribute}: {value}"
            for pattern, name_template, label_templates in CONSUMER_RULES:
                match = re.fullmatch(f"^.*(?:{pattern}).*$", subject)
                if match is None:
                    continue
                name = safe_name(match.expand(name_template)).lower()
                labels = ",".join(
                    f'{safe_name(key)}="{_escape_label(match.expand(template))}"'
                    for key, template in sorted(label_templates.items())
                )
                lines.append(f"{name}{{{labels},}} {number!r}")
                break
    return "\n".join(lines) + "\n"


# ---- the server -------------------------------------------------------------------------------


class AgentDouble:
    """One HTTP server answering /jolokia/read/... and /metrics from the latest reading."""

    def __init__(self, read: Callable[[], MetricsReading], exposition: str = "default") -> None:
        self.read = read
        self.exposition = exposition
        self.reading: MetricsReading | None = None
        self.requests: list[tuple[str, str]] = []
        self.status_override: int | None = None
        self.body_override: bytes | None = None
        self.server: ThreadingHTTPServer | None = None

    def refresh(self) -> MetricsReading:
        self.reading = self.read()
        return self.reading

    @property
    def base(self) -> str:
        assert self.server is not None
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        agent = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _send(self, status: int, body: bytes, content_type: str) -> None:
                self.send_response(status)
                self.send_header("Content-Type", content_type)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_GET(self) -> None:  # noqa: N802 - http.server's name
                agent.requests.append(("GET", self.path))
                if agent.status_override is not None:
                    self._send(agent.status_override, agent.body_override or b"", "text/html")
                    return
                assert agent.reading is not None, "refresh() the agent before reading it"
                if self.path.startswith("/jolokia/read/"):
                    rest = self.path[len("/jolokia/read/") :]
                    parts = [jolokia_unescape(part) for part in re.split(r"(?<!!)/", rest)]
                    document = jolokia_read(agent.reading, parts[0], parts[1] if len(parts) > 1 else None)
                    self._send(200, json.dumps(document).encode(), "application/json")
                elif self.path == "/metrics":
                    if agent.exposition == "rules":
                        text = exporter_rules(agent.reading)
                    else:
                        text = exporter_default(
                            agent.reading, lowercase=agent.exposition == "default-lowercase"
                        )
                    self._send(200, text.encode(), "text/plain; version=0.0.4; charset=utf-8")
                else:
                    self._send(404, b"<html>not found</html>", "text/html")

            def do_POST(self) -> None:  # noqa: N802
                agent.requests.append(("POST", self.path))
                self._send(405, b"", "text/plain")

        return Handler

    @contextmanager
    def serving(self) -> Iterator[AgentDouble]:
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        thread.start()
        try:
            yield self
        finally:
            self.server.shutdown()
            self.server.server_close()
            thread.join(timeout=5)
