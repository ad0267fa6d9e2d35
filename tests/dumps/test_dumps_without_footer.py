"""Dumps of JVMs that print no `JNI global references` footer (JDK 5, HP-UX): the next dump's banner
ends the one before, whole; only the input ending inside a thread says the last dump may be cut.
"""

from __future__ import annotations

import re
from pathlib import Path

from kafkadiag.dumps import read_dumps

from ..conftest import CAPTURED


def test_a_dump_followed_by_the_next_is_whole_without_a_footer(tmp_path: Path) -> None:
    # GIVEN a real kill -3 log of several dumps, its footers taken out
    log = (CAPTURED / "healthy" / "kill3-stdout.log").read_text()
    without_footer = re.sub(r"(?m)^JNI global ref.*\n", "", log)
    assert without_footer != log
    path = tmp_path / "no-footer.log"
    path.write_text(without_footer)
    # WHEN it is read
    dumps = list(read_dumps(str(path)))
    # THEN every dump but the last is whole; the last one, ending with the input, may be cut
    assert len(dumps) >= 2
    assert [dump.truncated for dump in dumps] == [False] * (len(dumps) - 1) + [True]
    assert [len(dump.threads) for dump in dumps] == [
        len(dump.threads) for dump in read_dumps(str(CAPTURED / "healthy" / "kill3-stdout.log"))
    ]
