"""`maxlag --prometheus` reads an exposition's labels in linear time, whatever a line holds.

A label line of 256 KB (a name without `=`, runs of spaces, a value whose quote never closes) did
not finish in 300 s: the label pattern was tried from every character of the line, each try
scanning the rest of it, and --timeout (a wait for the exporter) does not bound the parsing.
"""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

from kafkadiag.collect.jmx.prometheus import parse_exposition

from ..dumps.adversarial import RATIO_LIMIT, measure

SERIES = 'kafka_consumer_ConsumerFetcherManager_Value{name="MaxLag",clientId="c1",'


def _label_lines(size: int) -> list[str]:
    """Series lines whose labels are `size` characters of what made the pattern rescan."""
    return [
        SERIES + filler * (size // len(filler)) + "} 5.0" for filler in ("a", " ", "a1", 'k="\\"', 'k="v",')
    ]


def test_label_lines_are_read_in_linear_time() -> None:
    # GIVEN label lines of 64 KB (1x) and 256 KB (4x)
    texts = {factor: "\n".join(_label_lines(64 * 1024 * factor)) for factor in (1, 4)}

    def parse(factor: int) -> float:
        started = time.perf_counter()
        parse_exposition(texts[factor])
        return time.perf_counter() - started

    # WHEN parsed THEN 4x takes about 4 times as long
    scaling = measure(parse)
    assert scaling.ratio <= RATIO_LIMIT, (
        f"1x {scaling.small * 1000:.1f} ms, 4x {scaling.large * 1000:.1f} ms ({scaling.ratio:.1f} times)"
    )


def test_labels_read_as_the_exposition_format_writes_them() -> None:
    samples = parse_exposition(
        'm{a="1", b="two words",c="x\\"y"} 1\n'
        'm{clientId="c1, topic=t, threadId=0",} 2\n'
        'm{a="1" junk b="2"} 3\n'
        'm{a="never closed} 4\n'
    )
    assert [labels for _, labels, _ in samples] == [
        {"a": "1", "b": "two words", "c": 'x"y'},
        {"clientId": "c1, topic=t, threadId=0"},
        {"a": "1", "b": "2"},
        {},
    ]


def test_maxlag_on_a_256_kb_label_line_answers_in_seconds(tmp_path: Path) -> None:
    # GIVEN a saved exposition whose MaxLag series has a 256 KB label line beside a good one
    exposition = tmp_path / "metrics.txt"
    exposition.write_text("\n".join([*_label_lines(256 * 1024), SERIES + "} 5.0"]) + "\n", encoding="utf-8")
    # WHEN maxlag reads it
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "kafkadiag", "maxlag", "--prometheus", str(exposition), "--timeout", "5s"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    elapsed = time.monotonic() - started
    # THEN it answers (the client's MaxLag is read), well within --timeout
    assert done.returncode == 0, done.stderr
    assert "MaxLag 5" in done.stdout, done.stdout
    assert elapsed < 5, f"{elapsed:.1f} s"
