"""Thread names that hold line breaks: jstack prints them as they are, the header over several lines.

GIVEN a real JVM (tests/dumps/programs/NamesWithLineBreaks.java) with a thread named over two lines
holding a monitor, and one named over three (a blank line in its name) BLOCKED on it, WHEN its
`jstack -l` is read, THEN both are threads with their whole names, states and frames, the waiter
is linked to the holder, and no line is left unparsed.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

from kafkadiag.dumps import read_dumps
from kafkadiag.lockgraph import LockGraph
from kafkadiag.model import ThreadStatus

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
