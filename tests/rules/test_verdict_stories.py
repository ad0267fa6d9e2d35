"""The verdict line capitalises the first story it tells, so a story never starts with a thread name.

`kafkadiag dump analyze` opens with "Stalled: <story>. <story>." built from the findings' stories
(rules.engine.compose_verdict), whose first letter is made a capital. A thread named
"offset-monitor-1" must not come out as "Offset-monitor-1": every rule begins its story with
words of its own. Checked on every capture and every wild dump, so that each rule that fires on
real input is held to it.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from kafkadiag.dumps import read_dumps
from kafkadiag.errors import NoDumpFoundError
from kafkadiag.rules.engine import analyze

from ..conftest import CAPTURED, REPO

INPUTS = sorted(
    [*CAPTURED.glob("*/jstack-l.txt"), *CAPTURED.glob("*/py-spy-dump*.txt"), *CAPTURED.glob("*/*.log")]
    + list((REPO / "tests" / "wild" / "dumps").glob("*.txt"))
)


@pytest.mark.parametrize("path", INPUTS, ids=lambda p: f"{p.parent.name}/{p.name}")
def test_no_story_starts_with_a_thread_name(path: Path) -> None:
    try:
        report = analyze(read_dumps(str(path)))
    except NoDumpFoundError:
        return  # a wild file kafkadiag refuses (a Go dump): no story to tell
    for finding in report.findings:
        starts_with_name = [name for name in finding.threads if name and finding.story.startswith(name)]
        assert not starts_with_name, f"{finding.rule}: {finding.story!r}"
