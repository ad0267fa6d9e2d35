"""A capture bundle's metrics.json read back (`diagnose --from DIR`): the reading `capture` wrote
comes back equal, and a file that is not one is a named input error, never a traceback."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest

from kafkadiag.collect.jmx.recorded import read_recorded_metrics
from kafkadiag.consumer_metrics import MBeanReading, MetricsReading
from kafkadiag.errors import InputUnreadableError


def _written_as_capture_does(reading: MetricsReading, path: Path) -> None:
    # kafkadiag.collect.capture._capture_metrics writes exactly this
    path.write_text(json.dumps(dataclasses.asdict(reading), indent=1, default=str) + "\n", encoding="utf-8")


def test_a_recorded_reading_reads_back_equal(tmp_path: Path) -> None:
    # GIVEN a reading of the old consumer's MBeans as capture records it
    reading = MetricsReading(
        source_kind="pid",
        source="pid 4711",
        read_at_ms=1_796_184_006_841,
        duration_ms=427.1,
        beans=(
            MBeanReading(
                "kafka.consumer:type=ConsumerFetcherManager,name=MaxLag,clientId=orders",
                "kafka.consumer",
                (("type", "ConsumerFetcherManager"), ("name", "MaxLag"), ("clientId", "orders")),
                (("Value", 0),),
            ),
        ),
        system_properties=(("queued.max.message.chunks", "2"),),
        threads=(("ConsumerFetcherThread-orders_h-1-abc-0-0", "WAITING"),),
        notes=("started the local management agent",),
    )
    path = tmp_path / "metrics.json"
    _written_as_capture_does(reading, path)
    # WHEN it is read back
    back = read_recorded_metrics(str(path))
    # THEN everything the comparison reads is as it was, and the source says it was recorded
    assert back.beans == reading.beans and back.threads == reading.threads
    assert back.system_properties == reading.system_properties and back.read_at_ms == reading.read_at_ms
    assert back.source_kind == "pid" and back.source == f"pid 4711, recorded in {path}"


@pytest.mark.parametrize(
    "text",
    [
        "[]",
        '{"source_kind": "pid"}',
        '{"source_kind": "pid", "source": "x", "read_at_ms": "soon"}',
        '{"source_kind": "pid", "source": "x", "read_at_ms": 1, "beans": [["not", "a bean"]]}',
        '{"source_kind": "pid", "source": "x", "read_at_ms": 1, "beans": [{"name": 1, "domain": "d"}]}',
        "[" * 100_000,
        "not json at all",
    ],
)
def test_a_file_that_is_not_a_recorded_reading_is_a_named_input_error(tmp_path: Path, text: str) -> None:
    path = tmp_path / "metrics.json"
    path.write_text(text)
    with pytest.raises(InputUnreadableError, match="not fetcher metrics recorded by kafkadiag capture"):
        read_recorded_metrics(str(path))
