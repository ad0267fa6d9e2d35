"""`dump parse --format json` writes its text straight from the model (report/dump_json_text.py,
`dump_text`) rather than through json.dumps of the documented dicts; the goldens check the dicts.

GIVEN every captured fixture and every file of the shared corpus; WHEN each dump is written by
the text writer; THEN the text is exactly json.dumps(dump_json(...)): the same members, order,
spacing, escaping and numbers, so the goldens hold for what the command writes.
"""

from __future__ import annotations

import json
from pathlib import Path

from kafkadiag.dumps.summary import InputFailure, summarize_files
from kafkadiag.report.dump_json import dump_json
from kafkadiag.report.dump_json_text import dump_text

from ..conftest import CAPTURED


def _first_difference(expected: str, actual: str) -> str:
    index = next(
        (i for i, (a, b) in enumerate(zip(expected, actual)) if a != b), min(len(expected), len(actual))
    )
    return (
        f"expected ...{expected[index - 60 : index + 60]!r}\n  actual ...{actual[index - 60 : index + 60]!r}"
    )


def test_the_text_writer_writes_what_json_dumps_writes(corpus: Path) -> None:
    files = sorted(p for root in (CAPTURED, corpus) for p in root.rglob("*") if p.is_file())
    compared = 0
    for path in files:
        for result in summarize_files((str(path),), None, lambda *_: None):
            if isinstance(result, InputFailure):
                continue
            expected = json.dumps(dump_json(result), ensure_ascii=False)
            actual = dump_text(result)
            assert actual == expected, f"{path}: {_first_difference(expected, actual)}"
            compared += 1
    assert compared > 400


def test_special_numbers_and_escapes_are_written_as_json_dumps_writes_them() -> None:
    from kafkadiag.report.dump_json_text import _scalar

    for value in (
        None,
        True,
        False,
        0,
        -3,
        2**70,
        1.5,
        1e-7,
        float("nan"),
        float("inf"),
        'a"b\\\n\u0001é\u2028',
    ):
        assert _scalar(value) == json.dumps(value, ensure_ascii=False), value


# Headers at the edges of the HotSpot pattern the writer reads most headers with: each either
# gives what kafkadiag.threadheader reads or is left to it.
EDGE_HEADERS = (
    '"a" #12 [345] daemon virtual prio=5 os_prio=0 cpu=1.20ms elapsed=3.40s allocated=12K '
    "defined_classes=3 tid=0x00007f nid=0x1F waiting on condition [0x00]",
    '"a" #0012 prio=-0 os_prio=-1 cpu=1.000ms elapsed=00.10s tid=0x0000 nid=0012 runnable',
    '"a" daemon prio=10 tid=0x00007f86c4001000 nid=5891 runnable',
    '"a" #1 daemon prio=5 os_prio=0 cpu=.5ms elapsed=1.2s tid=0x1 nid=0x2 runnable',
    '"a" cpu=1e5ms tid=0x1 nid=0x2 runnable',
    '"a" #1 prio=5 tid=0x1 nid=0x2 - Thread t@7',
    '"a" prio=5 tid=0x1 nid=0x2 virtual runnable',
    '"a" prio=5 tid=0x1 nid=NA virtual runnable',
    '"a"b" prio=5 tid=0x1 nid=0x2 runnable',
    '"a" prio=5 allocated=1"2 tid=0x1 nid=0x2',
    '"a" group="main" prio=5 tid=0x1 nid=0x2',
    '"a" #\u0663 prio=5 tid=0x1 nid=0x2',
    '"a" prio=\u0665 tid=0x1 nid=0x2',
    '"a" daemonic prio=5 tid=0x1 nid=0x2',
    '"a" prio=5 tid=0x1 nid=1234567890123456789012345 runnable',
    '"a" prio=5 Id=3 tid=0x1 nid=0x2',
    '"a" prio=5 tid=0x1 nid=0x2\n[0x1]',
    '"a" tid=0xZ nid=0x2',
    '"a" prio=5 tid=0x1 nid=0x2x',
    '"a" prio=5 tid=0x1 nid=12,345',
    '"a" prio=5 tid=0x1  nid=0x2',
    '"a" prio=5 tid=105002800 nid=0x2 runnable',
    '"a" prio=5 tid=0x1 nid=0x2',
    '"a" #' + "9" * 25 + " prio=5 tid=0x1 nid=0x2",
    '"a" #007 prio=5 tid=0x1 nid=0x2 runnable',
    '"a" prio=05 os_prio=-0 tid=0x1 nid=0x2 runnable',
    '"a" prio=5 tid=0x00007F3A nid=0 runnable',
    '"a" prio=5 tid=0x0 nid=0x0 runnable',
    '"a" prio=5 tid=0x1 nid=0012 runnable',
    '"a" prio=5 cpu=0.00ms elapsed=12345678.5s tid=0x1 nid=0x2 runnable',
    '"a" prio=5 cpu=0.00001ms elapsed=123456789012345678.25s tid=0x1 nid=0x2 runnable',
    '"a" prio=5 cpu=10ms elapsed=0.1000s tid=0x1 nid=0x2 runnable',
    '"a" prio=5 cpu=010.5ms tid=0x1 nid=0x2 runnable',
)


def test_the_header_fields_are_written_as_threadheader_reads_them(corpus: Path) -> None:
    """The writer's own reading of HotSpot headers agrees with threadheader's on every header of
    the fixtures and the corpus, and on the edge cases above."""
    from kafkadiag.model import Thread, ThreadState, ThreadStatus
    from kafkadiag.report.dump_json import thread_json
    from kafkadiag.report.dump_json_text import _HOTSPOT_HEADER, _thread_head

    threads = [
        Thread(name="a", state=ThreadState.RUNNABLE, status=ThreadStatus.RUNNABLE, line_no=1, header=header)
        for header in EDGE_HEADERS
    ]
    for path in sorted(p for root in (CAPTURED, corpus) for p in root.rglob("*") if p.is_file()):
        for result in summarize_files((str(path),), None, lambda *_: None):
            if not isinstance(result, InputFailure):
                threads += result.dump.threads
    read_by_pattern = 0
    for thread in threads:
        head = _thread_head(thread)
        assert json.dumps(thread_json(thread), ensure_ascii=False).startswith(head), thread.header
        read_by_pattern += _HOTSPOT_HEADER.match(thread.header) is not None
    assert read_by_pattern > len(threads) // 2  # the pattern is what most headers go through
