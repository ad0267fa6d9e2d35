"""The Prometheus text exposition format (version 0.0.4), shared by every `--format prometheus`.

Samples are gathered per family and written family by family with their HELP and TYPE lines,
as the format requires (a family's samples must not be split). Unknown values are left out
rather than exported as NaN, so alerts on `absent()` and on the value stay distinct.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import TextIO

from kafkadiag import __version__
from kafkadiag.report.prometheus_names import FAMILIES, SCHEMA_VERSION
from kafkadiag.report.safe_text import printable

CONTENT_TYPE = "text/plain; version=0.0.4; charset=utf-8"

# The option a source came from -> the store it names in the `source` label.
_SOURCE_OPTIONS = {"zookeeper": "zookeeper", "bootstrap_servers": "kafka"}


def escape(value: str) -> str:
    # Control characters first, as visible \xNN text, whose backslash is then escaped like any.
    return printable(value).replace("\\", "\\\\").replace("\n", "\\n").replace('"', '\\"')


def format_value(value: float | int) -> str:
    if isinstance(value, float):
        return repr(round(value, 6))
    return str(value)


def cluster_of(sources: Iterable[tuple[str, str]], name: str | None = None) -> str:
    """The `cluster` label: the name given (--cluster-name), else the bootstrap servers as given,
    else the ZooKeeper connect string, so that two clusters' series never merge."""
    if name:
        return name
    named = dict(sources)
    return named.get("bootstrap_servers") or named.get("zookeeper") or ""


def source_label(option: str) -> str:
    return _SOURCE_OPTIONS.get(option, option)


class Exposition:
    """Samples by family; `add` checks the family's label names, so a reporter cannot export a
    series that docs/prometheus.md does not describe."""

    def __init__(self) -> None:
        self._samples: dict[str, list[str]] = {}

    def add(self, name: str, labels: Iterable[tuple[str, object]], value: float | int | None) -> None:
        if value is None:
            return
        pairs = tuple(labels)
        family = FAMILIES[name]
        if tuple(label for label, _ in pairs) != family.labels:
            raise ValueError(f"{name} takes labels {family.labels}, not {[label for label, _ in pairs]}")
        inner = ",".join(f'{label}="{escape(str(text))}"' for label, text in pairs)
        rendered = f"{name}{{{inner}}}" if inner else name
        self._samples.setdefault(name, []).append(f"{rendered} {format_value(value)}")

    def add_build_info(self) -> None:
        self.add("kafkadiag_build_info", (("version", __version__), ("schema", SCHEMA_VERSION)), 1)

    def write(self, stream: TextIO) -> None:
        for name, family in FAMILIES.items():
            samples = self._samples.get(name)
            if samples:
                stream.write(f"# HELP {name} {family.help}\n# TYPE {name} {family.kind}\n")
                stream.write("\n".join(samples) + "\n")
