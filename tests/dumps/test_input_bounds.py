"""The bounds every dump input is read within (kafkadiag.readlimits, docs/inputs.md).

Issue 32's inputs, each built as it was reported: a 10 MB gzip of newlines (10 GiB of text, 45
minutes), a 40 MB gzip of thread headers (3 GB of memory), a 1.2 MB gzip holding one line that
starts with `{` (3.1 GB), through files, stdin, capture bundles and batch units. Each stops at a
bound with an exit-3 error that names it and the option that raises it, in seconds and in bounded
memory (measured on a child process, as tests/dumps/test_hostile_input.py does).
"""

from __future__ import annotations

import gzip
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from kafkadiag.cli import cli
from kafkadiag.dumps import read_dumps
from kafkadiag.pipeline.units import DUMP, Unit
from kafkadiag.pipeline.work import analyze_unit
from kafkadiag.readlimits import ReadLimits, format_size, parse_ratio, parse_size

from ..cli.test_dump_parse_cli import run
from .test_hostile_input import REAL_DUMP, _run_cli

MIB = 1 << 20


def _repeated_gzip(path: Path, text: bytes, compressed_size: int, head: bytes = b"") -> Path:
    """A gzip of `text` over and over, `compressed_size` bytes long: one member repeated (gzip
    reads concatenated members as one stream), so that gigabytes of text cost no time to make."""
    member = gzip.compress(text, 9)
    with path.open("wb") as out:
        if head:
            out.write(gzip.compress(head, 9))
        for _ in range(compressed_size // len(member) + 1):
            out.write(member)
    return path


def _thread_headers(count: int) -> bytes:
    header = '"pool-1-thread-{0}" #{0} prio=5 os_prio=0 tid=0x7f{0:08x} nid=0x{0:x} waiting on condition\n'
    return "".join(header.format(index) for index in range(count)).encode("ascii")


def test_a_10_mb_gzip_of_newlines_stops_at_the_expansion_bound(tmp_path: Path) -> None:
    # GIVEN a 10 MB gzip of newlines: 10 GiB of text (parsed for about 45 minutes before)
    bomb = _repeated_gzip(tmp_path / "newlines.gz", b"\n" * MIB, 10 * 1000 * 1000)
    # WHEN kafkadiag parses it
    started = time.monotonic()
    code, stderr, peak_rss = _run_cli(["dump", "parse", str(bomb)])
    elapsed = time.monotonic() - started
    # THEN it stops at the expansion bound, names it and the option, in seconds and little memory
    assert code == 3, stderr
    assert "expands more than 100 times" in stderr and "--max-expansion" in stderr, stderr
    assert elapsed < 60, f"{elapsed:.0f} s"
    assert peak_rss < 200 * MIB, f"peak RSS {peak_rss / MIB:.0f} MiB"


def test_a_40_mb_gzip_of_thread_headers_stops_at_the_memory_bound(tmp_path: Path) -> None:
    # GIVEN a 40 MB gzip of distinct thread headers, which compress only 9 times: 350 MB of text,
    # 3 GB once parsed (and 166 MB of it a MemoryError)
    text = _thread_headers(300_000)
    bomb = tmp_path / "headers.gz"
    with bomb.open("wb") as out:
        for member in range(14):
            out.write(gzip.compress(text.replace(b'"pool-1-', b'"pool-%d-' % member), 6))
    assert bomb.stat().st_size > 36 * 1000 * 1000
    # WHEN kafkadiag analyses it
    code, stderr, peak_rss = _run_cli(["dump", "analyze", str(bomb)])
    # THEN it stops at the memory bound, which it names with its option
    assert code == 3, stderr
    assert "took more than 1 GiB of memory" in stderr and "--max-memory" in stderr, stderr
    assert peak_rss < 1400 * MIB, f"peak RSS {peak_rss / MIB:.0f} MiB"
    # AND an identical header over and over stops at the expansion bound first
    identical = _repeated_gzip(tmp_path / "identical.gz", _thread_headers(1) * 10_000, 40 * 1000 * 1000)
    code, stderr, peak_rss = _run_cli(["dump", "analyze", str(identical)])
    assert code == 3 and "--max-expansion" in stderr, stderr
    assert peak_rss < 400 * MIB, f"peak RSS {peak_rss / MIB:.0f} MiB"


def test_a_gzip_of_distinct_headers_under_the_ratio_stops_at_the_size_bound(tmp_path: Path) -> None:
    # GIVEN a gzip of distinct thread headers, which compress only about 9 times, of 24 MiB of text
    text = _thread_headers(200_000)
    path = tmp_path / "distinct.gz"
    path.write_bytes(gzip.compress(text, 6))
    # WHEN read with the size bound at 8 MiB
    code, _, err = run(["dump", "parse", "--max-input-size", "8MiB", str(path)])
    # THEN the size bound stops it and says how to raise it
    assert code == 3, err
    assert "more than 8 MiB of text (after decompression)" in err and "--max-input-size 32MiB" in err, err


def test_one_json_line_in_a_small_gzip_is_refused_not_held(tmp_path: Path) -> None:
    # GIVEN a 1.2 MB gzip holding one line of about 1.2 GB that starts with `{` (3.1 GB before)
    bomb = _repeated_gzip(tmp_path / "one-line.json.gz", b"x" * MIB, 1_200_000, head=b'{"threads": "')
    # WHEN read with its expansion allowed
    code, stderr, peak_rss = _run_cli(["dump", "parse", "--max-expansion", "100000", str(bomb)])
    # THEN the bound on one JSON document stops it, in a few hundred MB at most
    assert code == 3, stderr
    assert "a JSON document longer than 64 MiB" in stderr and "--max-json-size" in stderr, stderr
    assert peak_rss < 600 * MIB, f"peak RSS {peak_rss / MIB:.0f} MiB"
    # AND with the default bounds the expansion stops it first
    code, stderr, _ = _run_cli(["dump", "parse", str(bomb)])
    assert code == 3 and "--max-expansion" in stderr, stderr


def test_a_pretty_printed_json_document_is_bounded_as_a_whole(tmp_path: Path, captured: Path) -> None:
    # GIVEN jcmd's JSON dump (many short lines) read with the JSON bound below its size
    path = captured / "virtual-threads" / "thread-dump.json"
    code, _, err = run(["dump", "parse", "--max-json-size", "4K", str(path)])
    # THEN the document is refused as a whole
    assert code == 3, err
    assert "a JSON document longer than 4 KiB" in err, err
    # AND within the default it parses
    assert run(["dump", "parse", str(path)])[0] == 0


def test_the_size_bound_applies_to_plain_files_and_stdin_through_the_environment(
    tmp_path: Path, corpus: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # GIVEN a 2 MB log of real dumps, and the size bound at 1 MiB in the environment
    text = (corpus / REAL_DUMP).read_bytes()
    path = tmp_path / "log.txt"
    path.write_bytes(text * (2 * MIB // len(text) + 1))
    monkeypatch.setenv("KAFKADIAG_MAX_INPUT_SIZE", "1MiB")
    # WHEN read as a file and from stdin THEN both stop at the bound
    for arguments, given in (
        (["dump", "parse", str(path)], None),
        (["dump", "parse", "-"], path.read_bytes()),
    ):
        code, _, err = run(arguments, given)
        assert code == 3, err
        assert "more than 1 MiB of text" in err and "KAFKADIAG_MAX_INPUT_SIZE" in err, err
    # AND a value that is not a size is a usage error naming the variable
    monkeypatch.setenv("KAFKADIAG_MAX_INPUT_SIZE", "lots")
    code, _, err = run(["dump", "parse", str(path)])
    assert code == 2, err
    assert "KAFKADIAG_MAX_INPUT_SIZE" in err, err


def test_stdin_gzip_bomb_stops_at_the_expansion_bound(tmp_path: Path) -> None:
    # GIVEN a gzip of newlines on stdin
    bomb = _repeated_gzip(tmp_path / "newlines.gz", b"\n" * MIB, 200_000).read_bytes()
    # WHEN parsed from stdin
    done = subprocess.run(
        [sys.executable, "-m", "kafkadiag", "dump", "parse", "-"],
        input=bomb,
        capture_output=True,
        timeout=120,
    )
    # THEN the expansion bound stops it
    assert done.returncode == 3, done.stderr
    assert b"<stdin>: the gzip stream expands more than 100 times" in done.stderr, done.stderr


def test_a_capture_bundle_holding_a_gzip_bomb_is_refused_by_the_bound(tmp_path: Path) -> None:
    # GIVEN a capture bundle whose manifest lists a gzip of newlines
    bundle = tmp_path / "bundle"
    bundle.mkdir()
    _repeated_gzip(bundle / "jstack-1.txt.gz", b"\n" * MIB, 200_000)
    (bundle / "manifest.json").write_text(json.dumps({"dumps": [{"file": "jstack-1.txt.gz"}]}))
    # WHEN analysed
    code, _, err = run(["dump", "analyze", str(bundle)])
    # THEN the bound stops that file, named
    assert code == 3, err
    assert "jstack-1.txt.gz: the gzip stream expands more than 100 times" in err, err


def test_a_batch_unit_past_a_bound_is_quarantined_with_the_option(tmp_path: Path) -> None:
    # GIVEN a batch unit that is a gzip of newlines
    path = _repeated_gzip(tmp_path / "newlines.gz", b"\n" * MIB, 200_000)
    # WHEN the batch job's task analyses it
    outcome = analyze_unit(Unit(DUMP, str(path), (str(path),)))
    # THEN it is quarantined with the bound and the option that raises it
    (record,) = outcome["quarantine"]
    assert "expands more than 100 times" in record["reason"], record
    assert "--max-expansion raises the bound" in record["reason"], record


def test_a_cut_line_is_a_caveat_naming_the_option(tmp_path: Path, corpus: Path) -> None:
    # GIVEN a real dump with a line of 300 KB in it, and the line bound at 256 KiB
    text = (corpus / REAL_DUMP).read_text(encoding="utf-8")
    path = tmp_path / "long-line.txt"
    path.write_text("x" * 300_000 + "\n" + text, encoding="utf-8")
    # WHEN analysed
    code, out, err = run(["dump", "analyze", "--max-line-length", "256K", "--format", "json", str(path)])
    # THEN the dump is read and the caveat names the bound and the option
    assert code in (0, 1), err
    assert "1 line(s) over 256 KiB were cut" in out and "--max-line-length" in out, out
    # AND the option held for that command only
    assert "KAFKADIAG_MAX_LINE_LENGTH" not in os.environ


def test_read_dumps_takes_limits_from_the_environment(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = _repeated_gzip(tmp_path / "newlines.gz", b"\n" * MIB, 100_000)
    monkeypatch.setenv("KAFKADIAG_MAX_EXPANSION", "100000")
    monkeypatch.setenv("KAFKADIAG_MAX_INPUT_SIZE", "4MiB")
    with pytest.raises(Exception, match="more than 4 MiB of text"):
        list(read_dumps(str(path)))


@pytest.mark.parametrize("command", [["dump", "parse"], ["dump", "analyze"], ["diagnose"], ["batch"]])
def test_the_bound_options_are_on_every_command_that_reads_dumps(command: list[str]) -> None:
    help_text = CliRunner().invoke(cli, [*command, "--help"]).output
    for option in (
        "--max-input-size",
        "--max-expansion",
        "--max-line-length",
        "--max-json-size",
        "--max-memory",
    ):
        assert option in help_text, (command, option)


def test_sizes_and_factors_are_read_as_documented() -> None:
    assert [parse_size(text) for text in ("1048576", "512K", "64MiB", "4G", "2GB", " 3 m ")] == [
        MIB,
        512 << 10,
        64 * MIB,
        4 << 30,
        2 << 30,
        3 * MIB,
    ]
    assert parse_ratio("1000x") == 1000
    for bad in ("", "0", "-1", "1.5G", "lots", "9" * 20):
        with pytest.raises(ValueError):
            parse_size(bad)
    assert format_size(ReadLimits().max_input_bytes) == "1 GiB"
