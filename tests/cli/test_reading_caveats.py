"""What reading a file repaired is a caveat of the analysis: an encoding guessed, bytes that are not
text, lines cut at 1 MiB."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from ..conftest import CAPTURED


def caveats_of(path: Path) -> list[str]:
    done = subprocess.run(
        [sys.executable, "-m", "kafkadiag", "dump", "analyze", "--format", "json", str(path)],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode in (0, 1), done.stderr
    return json.loads(done.stdout)["caveats"]


def test_latin1_is_decoded_and_said(tmp_path: Path) -> None:
    # A captured dump whose thread name an old terminal wrote in Latin-1.
    text = (CAPTURED / "deadlock" / "jstack-l.txt").read_text(encoding="utf-8")
    path = tmp_path / "latin1.txt"
    path.write_bytes(text.replace('"deadlock-monitor-A"', '"d\u00e9bit-monitor-A"').encode("latin-1"))
    caveats = caveats_of(path)
    assert f"{path}: decoded as latin-1" in caveats
    done = subprocess.run(
        [sys.executable, "-m", "kafkadiag", "dump", "parse", "--format", "json", str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    names = [thread["name"] for thread in json.loads(done.stdout)["dumps"][0]["threads"]]
    assert "d\u00e9bit-monitor-A" in names


def test_a_line_over_a_mebibyte_is_cut_and_said_and_later_lines_keep_their_numbers(tmp_path: Path) -> None:
    lines = (CAPTURED / "lock-contention" / "jstack-l.txt").read_text(encoding="utf-8").split("\n")
    path = tmp_path / "long-line.txt"
    path.write_text("x" * (3 << 20) + "\n" + "\n".join(lines))
    assert (
        f"{path}: 1 line(s) over 1 MiB were cut (the line numbers hold; --max-line-length raises the bound)"
        in caveats_of(path)
    )
    done = subprocess.run(
        [sys.executable, "-m", "kafkadiag", "dump", "parse", "--format", "json", str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    threads = json.loads(done.stdout)["dumps"][0]["threads"]
    refresher = next(thread for thread in threads if thread["name"] == "cache-refresher")
    assert lines[refresher["line"] - 2].startswith('"cache-refresher"')  # one line was prepended
