"""Thread names over several lines: with line breaks in them, or cut by hard wrapping.

GIVEN a real JVM (tests/dumps/programs/NamesWithLineBreaks.java) with a thread named over two lines
holding a monitor, and one named over three (a blank line in its name) BLOCKED on it, WHEN its
`jstack -l` is read, THEN both are threads with their whole names, states and frames, the waiter
is linked to the holder, and no line is left unparsed.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from kafkadiag.dumps import read_dumps
from kafkadiag.lockgraph import LockGraph
from kafkadiag.model import ThreadStatus

from ..conftest import CAPTURED
from .mangle import hard_wrap

PROGRAM = Path(__file__).parent / "programs" / "NamesWithLineBreaks.java"
HOLDER = 'holder\nsecond line "quoted" [x]'
WAITER = 'waiter "q"\n\nafter a blank line'


def test_names_over_several_lines_are_one_header_each(tmp_path: Path) -> None:
    process = subprocess.Popen(["java", "-Xmx32m", str(PROGRAM)], stdout=subprocess.PIPE, text=True)
    try:
        assert process.stdout is not None and process.stdout.readline().strip() == "READY"
        jstack = [shutil.which("jstack") or "jstack", "-l", str(process.pid)]
        dump_text = subprocess.run(jstack, capture_output=True, text=True, check=True, timeout=60).stdout
    finally:
        process.kill()
        process.wait()
    assert f'"{HOLDER}" #' in dump_text and f'"{WAITER}" #' in dump_text  # printed as they are
    path = tmp_path / "jstack-l.txt"
    path.write_text(dump_text)

    (dump,) = read_dumps(str(path))
    assert dump.unparsed_count == 0
    holder, waiter = dump.thread_named(HOLDER), dump.thread_named(WAITER)
    assert holder is not None and waiter is not None
    assert holder.status is ThreadStatus.SLEEPING and holder.nid is not None
    assert waiter.status is ThreadStatus.BLOCKED
    assert holder.line_no == dump_text.splitlines().index('"holder') + 1
    graph = LockGraph(dump)
    waiter_index = graph.index_of(WAITER)
    assert waiter_index is not None
    assert [dump.threads[i].name for i in graph.blockers(waiter_index)] == [HOLDER]

    # AND an excerpt that starts with that thread (no banner before the name's first line, as
    # spotify's threaddump-analyzer tests it) reads the whole name too
    lines = dump_text.splitlines()
    excerpt = tmp_path / "excerpt.txt"
    excerpt.write_text("\n".join(lines[lines.index('"holder') :]))
    (cut,) = read_dumps(str(excerpt))
    assert cut.threads[0].name == HOLDER


@pytest.mark.parametrize("width", [50, 60])
@pytest.mark.parametrize("strip_trailing", [False, True])
def test_a_long_name_cut_by_hard_wrapping_is_joined_back(
    tmp_path: Path, width: int, strip_trailing: bool
) -> None:
    # GIVEN the captured old-consumer stall wrapped at a width its fetcher's name is longer than
    # (the cut falls inside the name: no space in it to break at)
    capture = CAPTURED / "real-old-consumer-stall-0.8.2.2" / "jstack-l.txt"
    (original,) = read_dumps(str(capture))
    path = tmp_path / "wrapped.txt"
    path.write_text(hard_wrap(capture.read_text(), width, strip_trailing))
    # WHEN it is read THEN every thread is there under its whole name, and the caveat says so
    (dump,) = read_dumps(str(path))
    assert [thread.name for thread in dump.threads] == [thread.name for thread in original.threads]
    assert any("cut by hard wrapping" in note for note in dump.notes)
    fetcher = next(t for t in dump.threads if t.name.startswith("ConsumerFetcherThread-"))
    assert len(fetcher.name) > width and "\n" not in fetcher.name
