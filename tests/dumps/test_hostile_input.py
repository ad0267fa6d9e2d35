"""Input nobody should have to send, and everybody eventually does."""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kafkadiag.dumps import read_dumps
from kafkadiag.dumps.lines import CHUNK_BYTES, MAX_LINE_CHARS, ReadStats, iter_lines
from kafkadiag.errors import InputUnreadableError, NoDumpFoundError
from kafkadiag.readlimits import FIFO_WRITER_WAIT_S

REAL_DUMP = "dumpling/jstack/deadlock-and-friends.log"


def test_empty_file_is_a_clear_error(tmp_path: Path) -> None:
    path = tmp_path / "empty.txt"
    path.write_bytes(b"")
    with pytest.raises(NoDumpFoundError, match="is empty"):
        list(read_dumps(str(path)))


def test_binary_garbage_is_no_dump_not_a_crash(tmp_path: Path) -> None:
    path = tmp_path / "garbage.bin"
    path.write_bytes(os.urandom(2 * 1024 * 1024))
    started = time.monotonic()
    with pytest.raises(NoDumpFoundError, match="not text"):
        list(read_dumps(str(path)))
    assert time.monotonic() - started < 20


def test_one_enormous_line_is_cut_not_held(tmp_path: Path) -> None:
    # 40 MB without a newline: must not become a 40 MB string.
    path = tmp_path / "oneline.txt"
    path.write_bytes(b"x" * (40 * 1024 * 1024))
    stats = ReadStats()
    with pytest.raises(NoDumpFoundError):
        list(read_dumps(str(path), stats=stats))
    assert stats.cut_lines > 0
    assert stats.bytes_read == 40 * 1024 * 1024
    assert max(len(line) for line in iter_lines(str(path))) <= MAX_LINE_CHARS


def test_truncated_mid_thread_keeps_what_was_read(tmp_path: Path, corpus: Path) -> None:
    # GIVEN a real dump cut in the middle of a frame line of a thread with a deep stack
    text = (corpus / REAL_DUMP).read_text(encoding="utf-8")
    complete = next(read_dumps(str(corpus / REAL_DUMP)))
    victim = next(i for i, t in enumerate(complete.threads) if i >= 3 and len(t.frames) > 5)
    lines = text.split("\n")
    frame_line = lines[complete.threads[victim].line_no + 3]
    assert frame_line.startswith("\tat ")
    cut_at = len("\n".join(lines[: complete.threads[victim].line_no + 3])) + 1 + len(frame_line) // 2
    path = tmp_path / "cut.txt"
    path.write_text(text[:cut_at], encoding="utf-8")
    # WHEN parsed
    dump = next(read_dumps(str(path)))
    # THEN the threads before it are intact, it is there with what was read, and the dump says it
    # was truncated
    assert [t.name for t in dump.threads] == [t.name for t in complete.threads[: victim + 1]]
    assert dump.threads[:victim] == complete.threads[:victim]
    partial = dump.threads[victim].frames
    assert partial[:-1] == complete.threads[victim].frames[: len(partial) - 1]
    assert partial[-1].text == frame_line[len("\tat ") : len(frame_line) // 2]
    assert dump.truncated
    assert any("ends inside this dump" in note for note in dump.notes)
    assert complete.truncated is False


def test_latin1_is_decoded_as_latin1_not_replaced(tmp_path: Path, corpus: Path) -> None:
    raw = (corpus / REAL_DUMP).read_bytes()
    assert b'"VM Thread"' in raw
    latin1 = raw.replace(b'"VM Thread"', b'"VM Thread-\xe9\xe8"')
    path = tmp_path / "latin1.txt"
    path.write_bytes(latin1)
    stats = ReadStats()
    dump = next(read_dumps(str(path), stats=stats))
    assert (stats.encoding, stats.replaced_characters) == ("latin-1", 0)
    assert "VM Thread-\u00e9\u00e8" in [t.name for t in dump.threads]


def test_invalid_utf8_in_binary_looking_input_is_replaced_and_counted(tmp_path: Path, corpus: Path) -> None:
    raw = (corpus / REAL_DUMP).read_bytes()
    # Control bytes next to the invalid ones: not text an editor wrote, so no Latin-1 guess.
    damaged = raw.replace(b'"VM Thread"', b'"VM Thread-\xe9\xe8"') + b"\x01\x02\x03" * 2000
    path = tmp_path / "damaged.txt"
    path.write_bytes(damaged)
    stats = ReadStats()
    dump = next(read_dumps(str(path), stats=stats))
    assert (stats.encoding, stats.replaced_characters) == ("utf-8", 2)
    assert "VM Thread-\ufffd\ufffd" in [t.name for t in dump.threads]


@pytest.mark.parametrize("line_end", ["\r\n", "\r"])
def test_a_line_end_cut_between_two_chunks_is_one_line_end(
    tmp_path: Path, corpus: Path, line_end: str
) -> None:
    # GIVEN a log of real dumps with Windows (or old Mac) line ends, laid out so that a CR is the
    # last byte of each of the first chunks read, and its LF (if any) the first byte of the next
    dump_lines = (corpus / REAL_DUMP).read_text(encoding="utf-8").rstrip("\n").split("\n")
    boundaries = [k * CHUNK_BYTES for k in (1, 2, 3)]
    lines: list[str] = []
    size = 0
    while size < boundaries[-1] + CHUNK_BYTES:
        for line in dump_lines:
            ahead = [end - 1 - size for end in boundaries if end - 1 - size >= 0]
            if ahead and ahead[0] <= 200:
                lines.append(" " * ahead[0])  # a line whose CR falls on the boundary
                size += ahead[0] + len(line_end)
            lines.append(line)
            size += len(line) + len(line_end)
    path = tmp_path / "windows.txt"
    path.write_bytes(line_end.join(lines).encode("ascii"))
    raw = path.read_bytes()
    assert all(raw[end - 1 : end] == b"\r" for end in boundaries)
    # WHEN it is read
    read = list(iter_lines(str(path)))
    # THEN it has exactly its lines: no empty line where a CRLF was cut in two
    assert read == lines


def test_missing_file_and_directory_are_input_errors(tmp_path: Path) -> None:
    with pytest.raises(InputUnreadableError, match="no such file"):
        list(read_dumps(str(tmp_path / "absent.txt")))
    with pytest.raises(InputUnreadableError, match="directory"):
        list(read_dumps(str(tmp_path)))


def test_permission_denied_says_what_to_do(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Tests run as root in CI, where chmod cannot deny a read; the OS error is injected instead.
    real_open = os.open

    def denying_open(file, flags, *args, **kwargs):  # type: ignore[no-untyped-def]
        if str(file).endswith("secret.txt"):
            raise PermissionError(13, "Permission denied", str(file))
        return real_open(file, flags, *args, **kwargs)

    (tmp_path / "secret.txt").write_text("x")
    monkeypatch.setattr(os, "open", denying_open)
    with pytest.raises(InputUnreadableError, match="permission denied") as caught:
        list(read_dumps(str(tmp_path / "secret.txt")))
    assert "user that can read" in caught.value.help_text


def test_damaged_gzip_is_an_input_error(tmp_path: Path, corpus: Path) -> None:
    packed = gzip.compress((corpus / REAL_DUMP).read_bytes() * 20)
    path = tmp_path / "damaged.gz"
    path.write_bytes(packed[: len(packed) // 2] + b"\x00" * 64 + packed[len(packed) // 2 + 64 :])
    with pytest.raises(InputUnreadableError, match="gzip"):
        list(read_dumps(str(path)))


def _write_big_log(path: Path, corpus: Path, target_bytes: int) -> int:
    """Append real dumps (with app output between them) until the file reaches target_bytes."""
    texts = [p.read_bytes() for p in sorted((corpus / "jthreaddump").glob("*-progression-*.txt"))]
    written = 0
    dumps = 0
    with path.open("wb") as out:
        while written < target_bytes:
            for text in texts:
                chunk = b"INFO request served\n" + text.rstrip(b"\n") + b"\n"
                out.write(chunk)
                written += len(chunk)
                dumps += 1
    return dumps


# Runs kafkadiag as the only child of a small wrapper, whose RUSAGE_CHILDREN peak is then exactly
# kafkadiag's: the test process's own children (JVMs, servers of other tests) do not count.
_MEASURE = (
    "import json, resource, subprocess, sys\n"
    "done = subprocess.run([sys.executable, '-m', 'kafkadiag', *sys.argv[1:]],\n"
    "                      capture_output=True, text=True)\n"
    "peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss * 1024\n"
    "print(json.dumps({'code': done.returncode, 'stderr': done.stderr, 'peak': peak}))\n"
)


def _run_cli(args: list[str]) -> tuple[int, str, int]:
    """Run kafkadiag in a child process; return its exit code, its stderr and its peak RSS in bytes."""
    wrapper = subprocess.run(
        [sys.executable, "-c", _MEASURE, *args], capture_output=True, text=True, timeout=600, check=True
    )
    measured = json.loads(wrapper.stdout)
    return measured["code"], measured["stderr"], measured["peak"]


def test_200_mb_log_of_many_dumps_streams_in_bounded_memory(tmp_path: Path, corpus: Path) -> None:
    # GIVEN a 200 MB log holding thousands of real dumps
    log = tmp_path / "huge.log"
    expected_dumps = _write_big_log(log, corpus, 200 * 1024 * 1024)
    # WHEN kafkadiag parses it to JSON
    code, stderr, peak_rss = _run_cli(
        ["dump", "parse", "--format", "json", "--output", str(tmp_path / "out.json"), str(log)]
    )
    # THEN it succeeds, reports every dump, and memory stays far below the input size
    assert code == 0, stderr
    with (tmp_path / "out.json").open(encoding="utf-8") as handle:
        dumps_seen = sum(1 for line in handle if line.startswith('{"source"'))
    assert dumps_seen == expected_dumps
    assert peak_rss < 150 * 1024 * 1024, f"peak RSS {peak_rss / 1e6:.0f} MB for a 200 MB input"


def test_100000_thread_dump_parses_completely(tmp_path: Path, corpus: Path) -> None:
    # GIVEN one dump of 100,000 threads built from real thread blocks
    source = next(read_dumps(str(corpus / "dumpling/factory/openjdk-1.8.log")))
    text = (corpus / "dumpling/factory/openjdk-1.8.log").read_text(encoding="utf-8")
    blocks = [
        "\n".join(text.split("\n")[t.line_no - 1 : t.line_no + len(t.frames) + 1]) for t in source.threads
    ]
    path = tmp_path / "threads.txt"
    with path.open("w", encoding="utf-8") as out:
        out.write("2024-01-01 00:00:00\nFull thread dump OpenJDK 64-Bit Server VM (25.0 mixed mode):\n\n")
        for index in range(100_000):
            block = blocks[index % len(blocks)]
            out.write(block.replace('"', f'"t{index}-', 1) + "\n\n")
        out.write("JNI global references: 1\n")
    # WHEN parsed
    started = time.monotonic()
    dump = next(read_dumps(str(path)))
    # THEN every thread is there, with its own name
    assert len(dump.threads) == 100_000
    assert dump.threads[99_999].name.startswith("t99999-")
    assert not dump.truncated
    assert time.monotonic() - started < 120


def test_a_fifo_nobody_writes_into_is_empty_not_waited_for_ever(tmp_path: Path) -> None:
    # GIVEN a FIFO among the dumps (a glob over a directory with one), no writer ever coming
    fifo = tmp_path / "jstack.txt"
    os.mkfifo(fifo)
    # WHEN read THEN it is an empty input once the writer's wait is over (open() waited forever)
    started = time.monotonic()
    process = subprocess.run([sys.executable, "-m", "kafkadiag", "dump", "analyze", str(fifo)],
                             capture_output=True, text=True, timeout=60)  # fmt: skip
    assert process.returncode == 3 and f"{fifo} is empty" in process.stderr, process.stderr
    assert time.monotonic() - started < FIFO_WRITER_WAIT_S + 20


def test_a_fifo_whose_writer_comes_after_the_reader_is_read(tmp_path: Path, corpus: Path) -> None:
    # GIVEN `mkfifo f; kafkadiag dump analyze f & jstack PID > f`: the reader opens first
    fifo = tmp_path / "jstack.txt"
    os.mkfifo(fifo)
    process = subprocess.Popen([sys.executable, "-m", "kafkadiag", "dump", "parse", str(fifo)],
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)  # fmt: skip
    try:
        time.sleep(1.0)  # the reader has opened the FIFO by now, no writer yet
        # WHEN the writer comes and writes a real dump
        with open(fifo, "wb") as writer:
            writer.write((corpus / REAL_DUMP).read_bytes())
        out, err = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    # THEN the dump is read, not taken for an empty input
    assert process.returncode == 0, err
    assert "threads" in out and "is empty" not in err, (out, err)


def test_a_pipe_with_a_writer_is_still_read(tmp_path: Path, corpus: Path) -> None:
    # `kafkadiag dump analyze <(ssh host jstack PID)`: the shell's pipe, its writer there
    reader, writer = os.pipe()
    feeder = subprocess.Popen(["cat", str(corpus / REAL_DUMP)], stdout=writer)
    os.close(writer)
    process = subprocess.run([sys.executable, "-m", "kafkadiag", "dump", "parse", f"/dev/fd/{reader}"],
                             capture_output=True, text=True, timeout=60, pass_fds=(reader,))  # fmt: skip
    os.close(reader)
    feeder.wait(timeout=60)
    assert process.returncode == 0, process.stderr
    assert "deadlock" in process.stdout.lower(), process.stdout[:2000]
