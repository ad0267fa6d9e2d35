"""Python dumps carried by a log pipeline: every line behind the same prefix.

faulthandler, py-spy and gdb write to a terminal or stderr; under systemd, docker compose or a
container runtime each line reaches the log with a prefix (journald's date, host and unit, the
compose service's column, the runtime's timestamp and stream). GIVEN each captured Python dump
with such a prefix in front of every line, WHEN it is read, THEN it gives the same format,
threads and frames as the capture itself.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkadiag.dumps import read_dumps
from kafkadiag.model import ThreadDump

from ..conftest import CAPTURED

PREFIXES = {
    "journald": "Nov 27 02:31:{second:02d} host1 worker[14623]: ",
    "compose": "worker_1  | ",
    "cri": "2026-11-27T02:31:{second:02d}.{nanos:09d}Z stderr F ",
}
CAPTURES = (
    "pyfmt-poll-queue-full/faulthandler-sigusr1.txt",
    "pyfmt-poll-queue-full/gdb-py-bt.txt",
    "py-poll-queue-full/py-spy-dump.txt",
    "py-poll-queue-full/py-spy-dump-locals.txt",
    "pyfmt-poll-queue-full/current-frames-recipe.txt",
    "pyfmt-poll-queue-full/faulthandler-later.txt",
)


def prefixed(text: str, prefix: str) -> str:
    lines = text.split("\n")
    return "\n".join(
        prefix.format(second=index % 60, nanos=index * 7919) + line for index, line in enumerate(lines)
    )


def summary(dump: ThreadDump) -> list[tuple[str, tuple[str, ...]]]:
    return [(thread.name, tuple(frame.function for frame in thread.frames)) for thread in dump.threads]


@pytest.mark.parametrize("pipeline", sorted(PREFIXES))
@pytest.mark.parametrize("capture", CAPTURES)
def test_a_prefixed_python_dump_reads_as_the_dump_itself(tmp_path: Path, capture: str, pipeline: str) -> None:
    source = CAPTURED / capture
    assert source.is_file(), f"{capture} is missing: run fixtures/capture.py"
    (original,) = list(read_dumps(str(source)))
    path = tmp_path / "from-the-log.txt"
    path.write_text(prefixed(source.read_text(), PREFIXES[pipeline]))
    (read,) = list(read_dumps(str(path)))
    assert read.format is original.format
    assert summary(read) == summary(original)
    assert read.unparsed_count == original.unparsed_count
