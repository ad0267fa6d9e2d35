"""The reports for people at 80 and 120 columns, piped and on a real terminal (a pseudo-terminal
of that size): no line wider than the terminal, no thread or group name broken across lines, the
story of one incident told once and on one screen, colour only on a terminal (never piped, never
with NO_COLOR, always with --color always), and an exit code that does not depend on whether the
reader read to the end; `batch`'s summary on a local Spark. The commands that read a live cluster
are in test_render_width_live.py."""

from __future__ import annotations

import fcntl
import os
import pty
import re
import struct
import subprocess
import sys
import termios
from pathlib import Path

import pytest

from kafkadiag.exitcodes import ExitCode
from tests.cli.render_checks import SGR, WIDTHS, assert_fits, render
from tests.conftest import CAPTURED

STALL = CAPTURED / "real-old-consumer-stall-0.8.2.2"
STALL_DUMP = STALL / "jstack-l.txt"
# The names of the real 0.8.2.2 stall: the fetcher's is 66 characters of hyphens and underscores.
FETCHER = "ConsumerFetcherThread-order-service_vm-1796181563131-50cf3449-0-0"
STALL_NAMES = (FETCHER, "order-worker-payments", "order-worker-orders", "order-worker-shipments")
LOCKS = CAPTURED / "lock-contention" / "jstack-l.txt"


@pytest.mark.parametrize("width", WIDTHS)
@pytest.mark.parametrize(
    "args, exit_code, names",
    [
        (["dump", "analyze", str(STALL_DUMP)], ExitCode.FINDINGS, STALL_NAMES),
        (["dump", "analyze", "--verbose", str(STALL_DUMP)], ExitCode.FINDINGS, STALL_NAMES),
        (["dump", "analyze", str(STALL / "kill3-50-dumps.log.gz")], ExitCode.FINDINGS, STALL_NAMES),
        (["dump", "parse", str(STALL_DUMP)], ExitCode.OK, (FETCHER, "order-worker-orders")),
        (["dump", "parse", str(LOCKS)], ExitCode.OK, ("cache-refresher", "request-1", "chain-a")),
        (["diagnose", "--from", str(STALL_DUMP)], ExitCode.FINDINGS, STALL_NAMES),
        (["diagnose", "--verbose", "--from", str(STALL)], ExitCode.FINDINGS, STALL_NAMES),
        (["explain", "KD201"], ExitCode.OK, ("queued.max.message.chunks",)),
        (["rules"], ExitCode.OK, ("fetcher-blocked-on-full-queue", "stream-not-draining")),
    ],
    ids=["analyze", "analyze-verbose", "analyze-50-dumps", "parse", "parse-locks", "diagnose",
         "diagnose-bundle-verbose", "explain", "rules"],
)  # fmt: skip
def test_offline_reports_fit_the_width_and_keep_names_whole(
    args: list[str], exit_code: int, names: tuple[str, ...], width: int
) -> None:
    # GIVEN real captured dumps WHEN a command reports on them in a pipe of `width` columns
    code, out, err = render(args, width)
    # THEN every line fits, every name is whole, and nothing is coloured
    assert code == exit_code, out + err
    assert_fits(out, width, names)
    assert not SGR.search(out), out


def test_the_tables_use_the_room_they_are_given() -> None:
    # GIVEN the lock-contention dump, whose lock table has a waiters column of 52 characters
    narrow, middle, wide = (render(["dump", "parse", str(LOCKS)], width)[1] for width in (80, 120, 160))
    # THEN up to 120 columns the waiters go under their lock, at 160 they are a column of the row
    for text in (narrow, middle):
        assert re.search(r"\n +waiters: request-1, request-2, request-3, request-4 \(\+4 more\)\n", text), (
            text
        )
    assert re.search(r"0xffd651c0 .* cache-refresher +8 +0 +0 +request-1, request-2", wide), wide
    # and the class names are whole from 120 columns, shortened in the middle at 80
    assert "c.e.LockContentionApp$SessionCache" in middle and "c.e.LockContentionApp$SessionCache" in wide
    assert "c.e.LockContentionApp$SessionCache" not in narrow and "c.e.LockCo…ssionCache" in narrow
    assert_fits(wide, 160)


def test_columns_is_kept_within_40_to_200() -> None:
    # GIVEN the deadlock dump, whose report has lines that would run to 300 columns and more
    dump = str(CAPTURED / "deadlock" / "jstack-l.txt")
    _, wide, _ = render(["dump", "analyze", dump], 500)
    _, narrow, _ = render(["dump", "analyze", dump], 10)
    # THEN COLUMNS=500 lays it out at 200 columns, COLUMNS=10 at 40
    assert_fits(wide, 200)
    assert max(len(line) for line in wide.splitlines()) > 120, wide
    assert_fits(narrow, 40)
    assert max(len(line) for line in narrow.splitlines()) > 20, narrow


def test_one_incident_tells_its_story_once_on_one_screen() -> None:
    # GIVEN one jstack -l of the real Kafka 0.8.2.2 stall WHEN diagnosed at 120 columns
    code, out, err = render(["diagnose", "--from", str(STALL_DUMP)], 120)
    assert code == ExitCode.FINDINGS, out + err
    # THEN it fits a 120x40 screen
    assert len(out.splitlines()) <= 40, out
    assert_fits(out, 120, STALL_NAMES)
    # ... the story is told once: the verdict and the joined story are one paragraph, and the
    # finding that is the story (KD801) points back to it instead of repeating it
    flat = " ".join(out.split())
    story = "The stream thread order-worker-payments stopped draining its queue"
    assert flat.startswith("Stalled: " + story), out
    assert flat.count(story) == 1, out
    assert "KD801 old-consumer-stall-explained" in flat and "(the story above)" in flat
    # ... what to do comes before the findings; the findings about the story's threads only (the
    # fetcher blocked, the streams starving, the stream not draining) are their headlines
    assert out.index("What to do") < out.index("Findings")
    for headline in (
        "KD201 fetcher-blocked-on-full-queue",
        "KD202 streams-starving",
        "KD203 stream-not-draining",
    ):
        assert re.search(re.escape(headline) + r": [^\n]*\[dump\] \(in the story above\)", flat), out
    assert flat.count("give each topic its own connector") <= 1, out
    # ... and the evidence waits for --verbose (the JSON report has it always)
    assert "evidence:" not in out
    verbose = render(["diagnose", "--verbose", "--from", str(STALL_DUMP)], 120)[1]
    assert "evidence:" in verbose and "jstack-l.txt:297:" in " ".join(verbose.split())


def test_dump_analyze_gives_a_shared_remedy_once() -> None:
    # KD201 and KD202 give the same advice: KD202 points back to KD201's
    out = render(["dump", "analyze", str(STALL_DUMP)], 120)[1]
    flat = " ".join(out.split())
    assert flat.count("give each topic its own connector") == 1, out
    assert "what to do: as for KD201 above" in flat, out


def test_dump_analyze_lists_rules_run_and_skipped_only_when_verbose() -> None:
    out = render(["dump", "analyze", str(STALL_DUMP)], 100)[1]
    assert "rules run:" not in out and "(--verbose lists them)" in out
    verbose = render(["dump", "analyze", "-v", str(STALL_DUMP)], 100)[1]
    assert "rules run: " in verbose and "evidence:" in verbose


@pytest.mark.parametrize(
    "options, env, coloured",
    [
        (["--color", "always"], {}, True),
        (["--color", "never"], {}, False),
        ([], {}, False),  # piped: auto colours nothing
        (["--color", "always"], {"NO_COLOR": "1"}, True),  # the option given wins over NO_COLOR
    ],
    ids=["always", "never", "auto-piped", "always-over-NO_COLOR"],
)
def test_colour_only_where_asked(options: list[str], env: dict[str, str], coloured: bool) -> None:
    for args in (["dump", "analyze", str(STALL_DUMP)], ["dump", "parse", str(STALL_DUMP)], ["rules"]):
        code, out, err = render([*options, *args], 100, env)
        assert code in (ExitCode.OK, ExitCode.FINDINGS), err
        assert bool(SGR.search(out)) is coloured, out
        # the words are the same with or without colour
        assert_fits(out, 100)
    if coloured:
        out = render([*options, "dump", "analyze", str(STALL_DUMP)], 100, env)[1]
        assert "\x1b[1;31mERROR" in out  # the severity in bold red


def _on_a_terminal(args: list[str], columns: int, env: dict[str, str]) -> tuple[int, str]:
    """Run kafkadiag with its stdout on a real pseudo-terminal of `columns` x 40."""
    leader, follower = pty.openpty()
    fcntl.ioctl(follower, termios.TIOCSWINSZ, struct.pack("HHHH", 40, columns, 0, 0))
    environment = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "KAFKADIAG_WIDTH", "NO_COLOR")}
    environment.update({"TERM": "xterm-256color", **env})
    process = subprocess.Popen([sys.executable, "-m", "kafkadiag", *args], stdout=follower,
                               stderr=subprocess.PIPE, env=environment)  # fmt: skip
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # EIO: the last writer closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    process.wait(timeout=60)
    # The terminal turns "\n" into "\r\n" on output.
    return process.returncode, b"".join(chunks).decode("utf-8").replace("\r\n", "\n")


@pytest.mark.parametrize("width", WIDTHS)
def test_on_a_real_terminal_the_report_takes_its_width_and_colour(width: int) -> None:
    # GIVEN a terminal of `width` columns WHEN dump analyze writes to it
    code, out = _on_a_terminal(["dump", "analyze", str(STALL_DUMP)], width, {})
    # THEN the lines are laid out at its width (the longest line uses most of it) and coloured
    assert code == ExitCode.FINDINGS, out
    assert_fits(out, width, STALL_NAMES)
    plain = SGR.sub("", out)
    assert max(len(line) for line in plain.splitlines()) > width - 15, out
    assert SGR.search(out), out
    # ... and with NO_COLOR set, the same words without colour
    code, uncoloured = _on_a_terminal(["dump", "analyze", str(STALL_DUMP)], width, {"NO_COLOR": "1"})
    assert code == ExitCode.FINDINGS and not SGR.search(uncoloured), uncoloured
    assert uncoloured == plain


def test_an_analysis_keeps_its_exit_code_when_its_reader_leaves() -> None:
    # GIVEN `set -o pipefail; kafkadiag dump analyze - < dump | head -1`: the reader is gone
    # before the report is written (its end of the pipe closed)
    reader, writer = os.pipe()
    os.close(reader)
    with open(STALL_DUMP, "rb") as dump:
        process = subprocess.run([sys.executable, "-m", "kafkadiag", "dump", "analyze", "-"], stdin=dump,
                                 stdout=writer, stderr=subprocess.PIPE, timeout=60)  # fmt: skip
    os.close(writer)
    # THEN the exit code is still the analysis's (1: an error found), without a traceback
    assert process.returncode == ExitCode.FINDINGS, process.stderr.decode()
    assert b"Traceback" not in process.stderr and b"Broken pipe" not in process.stderr


@pytest.mark.parametrize("width", WIDTHS)
def test_batch_fits_the_width(width: int, tmp_path: Path) -> None:
    # GIVEN a captured deadlock's dumps WHEN a local Spark job analyses them in a pipe of `width`
    out_dir = tmp_path / "deadlock-results"
    code, out, err = render(["batch", str(CAPTURED / "deadlock"), "--out", str(out_dir)], width)
    # THEN its summary fits, with the results' directory whole to be copied
    assert code == ExitCode.FINDINGS, out + err
    assert_fits(out, width, (f"{out_dir}/",))
    assert " findings (worst: error)" in " ".join(out.split()) and not SGR.search(out), out


def test_a_report_laid_out_by_rich_keeps_its_exit_code_when_its_reader_leaves() -> None:
    # GIVEN `kafkadiag explain KD201 | head -1`, the reader gone before the text is written:
    # rich's own handling of the broken pipe ended the process with exit 1, as if a finding
    reader, writer = os.pipe()
    os.close(reader)
    process = subprocess.run([sys.executable, "-m", "kafkadiag", "explain", "KD201"], stdout=writer,
                             stderr=subprocess.PIPE, timeout=60)  # fmt: skip
    os.close(writer)
    # THEN the command ends as it would have, quietly
    assert process.returncode == ExitCode.OK, process.stderr.decode()
    assert process.stderr == b""
