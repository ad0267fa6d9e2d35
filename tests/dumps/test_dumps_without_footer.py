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


def test_a_class_histogram_after_a_dump_without_footer_ends_it_whole() -> None:
    # GIVEN TDA's test log: a Java 5 dump (no footer) and -XX:+PrintClassHistogram's table after it
    path = Path(__file__).parent / "public" / "tda-testwithhistogram.log"
    text = path.read_text()
    heading = text.splitlines().index(next(line for line in text.splitlines() if "#instances" in line)) + 1
    # WHEN it is read THEN the dump ends before the histogram, whole, with its 14 threads, and
    # none of the histogram's 1,087 lines is taken for a line of the dump
    (dump,) = read_dumps(str(path))
    assert len(dump.threads) == 14
    assert not dump.truncated
    assert dump.end_line_no < heading
    assert dump.unparsed_count == 0
