"""Fetcher metrics as `kafkadiag capture` recorded them (a bundle's metrics.json): the reading
read back, so `diagnose --from DIR` judges the consumer's MBeans as the live `diagnose --pid` does.

The file is a MetricsReading written as JSON (`collect.capture`); it comes from another host or a
ticket, so it is read through the bounded JSON reader and every field is checked for its type:
what does not fit is an InputUnreadableError naming the file, not a traceback.
"""

from __future__ import annotations

from typing import Any

from kafkadiag import boundedjson
from kafkadiag.consumer_metrics import MBeanReading, MetricsReading
from kafkadiag.errors import InputUnreadableError

# A capture of a consumer with 10,000 partitions writes a few MB.
MAX_RECORDED_BYTES = 64 << 20


def read_recorded_metrics(path: str) -> MetricsReading:
    try:
        with open(path, "rb") as handle:
            data = handle.read(MAX_RECORDED_BYTES + 1)
    except OSError as error:
        raise InputUnreadableError(f"cannot read {path}: {error.strerror or error}") from None
    if len(data) > MAX_RECORDED_BYTES:
        raise InputUnreadableError(
            f"{path} is over {MAX_RECORDED_BYTES >> 20} MiB: not metrics kafkadiag recorded"
        )
    try:
        document = boundedjson.loads(data.decode("utf-8"))
        return _reading(document, path)
    except (ValueError, TypeError, KeyError) as error:
        raise InputUnreadableError(
            f"{path} is not fetcher metrics recorded by kafkadiag capture ({error})",
            "Give the metrics.json a capture wrote, or diagnose the bundle's dumps without it.",
        ) from None


def _reading(document: Any, path: str) -> MetricsReading:
    if not isinstance(document, dict):
        raise TypeError("the file holds no JSON object")
    return MetricsReading(
        source_kind=_text(document["source_kind"]),
        source=f"{_text(document['source'])}, recorded in {path}",
        read_at_ms=_integer(document["read_at_ms"]),
        duration_ms=float(_number(document.get("duration_ms", 0))),
        beans=tuple(_bean(bean) for bean in _list(document.get("beans", []))),
        system_properties=_pairs(document.get("system_properties", []), str),
        threads=_pairs(document.get("threads", []), str),
        vm=_pairs(document.get("vm", []), object),
        notes=tuple(_text(note) for note in _list(document.get("notes", []))),
    )


def _bean(bean: Any) -> MBeanReading:
    if not isinstance(bean, dict):
        raise TypeError("an MBean that is not an object")
    return MBeanReading(
        name=_text(bean["name"]),
        domain=_text(bean["domain"]),
        properties=_pairs(bean.get("properties", []), str),
        attributes=_pairs(bean.get("attributes", []), object),
        errors=_pairs(bean.get("errors", []), str),
    )


def _pairs(value: Any, kind: type) -> tuple[tuple[str, Any], ...]:
    pairs = []
    for pair in _list(value):
        if not isinstance(pair, list) or len(pair) != 2 or not isinstance(pair[0], str):
            raise TypeError("a name/value pair that is not one")
        if kind is str and not isinstance(pair[1], str):
            raise TypeError(f"{pair[0]!r} is not text")
        pairs.append((pair[0], pair[1]))
    return tuple(pairs)


def _list(value: Any) -> list[Any]:
    if not isinstance(value, list):
        raise TypeError("a list that is not one")
    return value


def _text(value: Any) -> str:
    if not isinstance(value, str):
        raise TypeError(f"{value!r} is not text")
    return value


def _integer(value: Any) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise TypeError(f"{value!r} is not a whole number")
    return value


def _number(value: Any) -> float:
    if not isinstance(value, (int, float)) or isinstance(value, bool):
        raise TypeError(f"{value!r} is not a number")
    return float(value)
