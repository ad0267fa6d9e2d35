"""Real dumps re-laid-out the way logs and tools mangle them must parse to the same threads.

Each variant is produced from a real dump in the shared corpus by a transformation users meet:
kill -3 output with a log prefix on every line, CRLF, spaces for tabs, no blank lines, several
dumps appended to one log with application output in between, gzip.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from kafkadiag.dumps import read_dumps
from kafkadiag.model import ThreadDump

SOURCES = [
    "dumpling/jstack/deadlock-and-friends.log",
    "dumpling/factory/oraclejdk-1.8.log",
    "dumpling/factory/ownable-synchronizers.log",
    "jthreaddump/many-virtual-threads.txt",
    "jthreaddump/deadlock.txt",
]


def fingerprint(dump: ThreadDump) -> list[tuple]:
    return [
        (
            t.name,
            t.state,
            t.status,
            tuple(f.text for f in t.frames),
            tuple((e.kind, e.lock_id, e.frame_index) for e in t.lock_events),
            t.held_synchronizers,
            t.java_id,
            t.nid,
        )
        for t in dump.threads
    ]


def parse_one(path: Path) -> ThreadDump:
    dumps = list(read_dumps(str(path)))
    assert len(dumps) == 1, [d.line_no for d in dumps]
    return dumps[0]


def write(tmp_path: Path, name: str, text: str) -> Path:
    path = tmp_path / name
    path.write_bytes(text.encode("utf-8"))
    return path


@pytest.fixture(params=SOURCES)
def original(request: pytest.FixtureRequest, corpus: Path) -> tuple[str, ThreadDump]:
    text = (corpus / request.param).read_text(encoding="utf-8", errors="replace")
    text = text.replace("\r\n", "\n")
    return text, parse_one(corpus / request.param)


PREFIXES = [
    "2024-05-01T10:11:12.123456789Z stdout F ",  # container runtime (CRI) log
    "May  1 10:11:12 broker-3 java[4711]: ",  # syslog / journald
    "10:11:12,345 INFO  [stdout] (Thread-9) ",  # application server logging stdout
]


@pytest.mark.parametrize("prefix", PREFIXES)
def test_log_prefix_on_every_line_is_stripped(tmp_path: Path, original, prefix: str) -> None:
    # GIVEN a real dump whose every line went through a log pipeline that prefixes it
    text, expected = original
    lines = text.split("\n")
    stamped = "\n".join(prefix.replace("12", str(10 + i % 50)) + line for i, line in enumerate(lines))
    # WHEN it is parsed
    dump = parse_one(write(tmp_path, "prefixed.log", stamped))
    # THEN the threads are exactly those of the clean dump
    assert fingerprint(dump) == fingerprint(expected)


def test_crlf_and_spaces_for_tabs_change_nothing(tmp_path: Path, original) -> None:
    text, expected = original
    mangled = text.replace("\t", "        ").replace("\n", "\r\n")
    assert fingerprint(parse_one(write(tmp_path, "crlf.txt", mangled))) == fingerprint(expected)


def test_no_blank_lines_between_threads(tmp_path: Path, original) -> None:
    text, expected = original
    squeezed = "\n".join(line for line in text.split("\n") if line.strip())
    assert fingerprint(parse_one(write(tmp_path, "squeezed.txt", squeezed))) == fingerprint(expected)


def test_gzip_input_is_read_transparently(tmp_path: Path, original) -> None:
    text, expected = original
    path = tmp_path / "dump.txt.gz"
    path.write_bytes(gzip.compress(text.encode("utf-8")))
    assert fingerprint(parse_one(path)) == fingerprint(expected)


def test_fifty_dumps_appended_to_one_log_split_exactly(tmp_path: Path, corpus: Path) -> None:
    # GIVEN 50 real dumps (10 different ones, 5 rounds) appended to a log, with application
    # output between them, as kill -3 leaves them in a JVM's stdout
    names = sorted(p for p in (corpus / "jthreaddump").glob("*-progression-*.txt"))[:10]
    assert len(names) == 10
    texts = [p.read_text(encoding="utf-8") for p in names]
    expected_counts = [len(parse_one(p).threads) for p in names]
    parts = []
    for round_number in range(5):
        for index, text in enumerate(texts):
            parts.append(f"[app] round {round_number} request {index} served in 12 ms\n")
            parts.append(text.rstrip("\n") + "\n")
    path = write(tmp_path, "stdout.log", "".join(parts))
    # WHEN the log is parsed
    dumps = list(read_dumps(str(path)))
    # THEN it yields exactly 50 dumps holding exactly their own threads
    assert len(dumps) == 50
    assert [len(d.threads) for d in dumps] == expected_counts * 5
    assert sum(len(d.threads) for d in dumps) == sum(expected_counts) * 5
    # and each dump's JVM deadlock report stays with that dump
    assert [len(d.jvm_deadlocks) for d in dumps[:10]] == [len(parse_one(p).jvm_deadlocks) for p in names]
    # and the application output between dumps is not counted as unparsed dump content
    assert all(not any("[app]" in u.text for u in d.unparsed) for d in dumps)


@pytest.mark.parametrize("numbered", [False, True], ids=["grep-C", "grep-nC"])
def test_grep_context_output_reads_as_the_dump(tmp_path: Path, original, numbered: bool) -> None:
    # GIVEN a real dump as `grep -C` prints it from a file it names: "file:" before each line
    # that matched (here every lock line), "file-" before the context lines around them
    text, expected = original
    lines = text.split("\n")

    def prefixed(number: int, line: str) -> str:
        separator = ":" if "- " in line and "<0x" in line else "-"
        return (
            f"12345.jstack{separator}{number}{separator}{line}"
            if numbered
            else f"12345.jstack{separator}{line}"
        )

    grepped = "\n".join(prefixed(number, line) for number, line in enumerate(lines, 1))
    # WHEN it is parsed THEN the threads are exactly those of the clean dump, locks included
    dump = parse_one(write(tmp_path, "grep.txt", grepped))
    assert fingerprint(dump) == fingerprint(expected)


def test_state_lines_flush_left_keep_their_threads_stacks(tmp_path: Path, original) -> None:
    # GIVEN a real dump whose state lines lost their indent (a code block in a README whose
    # header and state lines sit at one indent, the frames deeper: zero-oclock/java-cpu-memory)
    text, expected = original
    flushed = "\n".join(
        line.lstrip() if "java.lang.Thread.State:" in line else line for line in text.split("\n")
    )
    # WHEN it is parsed THEN every thread keeps its state, frames and locks
    dump = parse_one(write(tmp_path, "flush-left-states.txt", flushed))
    assert fingerprint(dump) == fingerprint(expected)
