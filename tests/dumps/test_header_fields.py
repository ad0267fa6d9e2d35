"""Thread headers other dump analysers test and kafkadiag must read the same way.

The headers are verbatim from those projects' tests: spotify/threaddump-analyzer's tests.js
(commit 8984bcd7, tests "thread header 7" and "thread header 9": TeamCity's thread dump page,
ids with thousands separators, a `group="main"` field) and AdoptOpenJDK/mjprof's
JStackMetadataStackTest (commit 63741f53: fields in another order, runs of spaces). Each is read as
a dump (with a stack under it where the project had one), through the parser's own paths.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkadiag.dumps import read_dumps
from kafkadiag.model import ThreadState

TEAMCITY = (
    '"Queued build chains changes collector 8" daemon group="main" prio=5 tid=431,909 nid=431,909 waiting '
)
SEPARATED_IDS = '"Connect thread foo.net session" prio=5 tid=8,057,104 nid=8,057,104'
MIXED_ORDER = (
    '"qtp188618231-14"   nid=0xd17 tid=0x0007fd8d8d5b000  prio=10 '
    "waiting for monitor entry [0x00007fd8ae207000]"
)
MISSING_FIELDS = '"qtp188618231-14"   nid=0xd17  waiting for monitor entry [0x00007fd8ae207000]'
STACK = (
    "   java.lang.Thread.State: BLOCKED (on object monitor)\n"
    "\tat org.apache.hadoop.hdfs.DFSUtil.<clinit>(DFSUtil.java:128)\n"
    "\tat org.apache.hadoop.hdfs.DFSClient.<init>(DFSClient.java:437)\n"
)


@pytest.mark.parametrize(
    ("header", "name", "tid", "nid", "priority", "daemon"),
    [
        (TEAMCITY, "Queued build chains changes collector 8", 431909, 431909, 5, True),
        (SEPARATED_IDS, "Connect thread foo.net session", 8057104, 8057104, 5, False),
        (MIXED_ORDER, "qtp188618231-14", 0x0007FD8D8D5B000, 0xD17, 10, False),
        (MISSING_FIELDS, "qtp188618231-14", None, 0xD17, None, False),
    ],
)
@pytest.mark.parametrize("with_stack", [False, True])
def test_fields_in_any_order_spacing_and_grouping(
    tmp_path: Path,
    header: str,
    name: str,
    tid: int | None,
    nid: int,
    priority: int | None,
    daemon: bool,
    with_stack: bool,
) -> None:
    # GIVEN the header after another thread (so that the parser's loop is inside a dump when it
    # reads it), with or without a stack under it
    first = (
        '"main" #1 prio=5 os_prio=0 tid=0x00007f0001 nid=0x10 runnable [0x0]\n'
        "   java.lang.Thread.State: RUNNABLE\n"
    )
    path = tmp_path / "dump.txt"
    path.write_text(
        "Full thread dump OpenJDK 64-Bit Server VM (11.0.2+9 mixed mode):\n\n"
        + first
        + "\tat Main.main(Main.java:1)\n\n"
        + header
        + "\n"
        + (STACK if with_stack else "")
        + "\n",
        encoding="utf-8",
    )
    # WHEN it is read
    (dump,) = read_dumps(str(path))
    # THEN the name ends at its own quote and every field is read
    thread = dump.threads[1]
    assert thread.name == name
    fields = thread.fields
    assert (fields.tid, fields.nid, fields.priority, fields.daemon) == (tid, nid, priority, daemon)
    if with_stack:
        assert thread.state is ThreadState.BLOCKED and len(thread.frames) == 2
    elif header in (MIXED_ORDER, MISSING_FIELDS):
        assert thread.state is ThreadState.BLOCKED  # "waiting for monitor entry", after the fields
    assert dump.unparsed_count == 0
