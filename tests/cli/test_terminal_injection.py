"""Outside text never steers the terminal: GIVEN a thread name or an option's value holding the
bidirectional override U+202E (which shows what follows it reversed) or a terminal sequence,
WHEN kafkadiag reports it, THEN the terminal receives a visible escape, and JSON stays valid JSON
holding the same string."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kafkadiag.exitcodes import ExitCode
from tests.conftest import CAPTURED
from tests.infra.cli import run

DUMP = CAPTURED / "deadlock" / "jstack-l.txt"
BIDI = ("\u202e", "\u2066", "\u200f")
# In place of "deadlock-monitor-A", one of a deadlocked pair that every report names.
HOSTILE_NAME = "deadlock-\u202eA-rotinom\u2066\u200f"


def _dump_with_hostile_name(tmp_path: Path) -> Path:
    text = DUMP.read_text(encoding="utf-8")
    assert '"deadlock-monitor-A"' in text
    path = tmp_path / "jstack.txt"
    path.write_text(text.replace("deadlock-monitor-A", HOSTILE_NAME), encoding="utf-8")
    return path


def test_a_bidirectional_override_in_a_thread_name_is_shown_escaped(tmp_path: Path) -> None:
    code, out, err = run(["dump", "analyze", "-v", str(_dump_with_hostile_name(tmp_path))])
    assert code == ExitCode.FINDINGS, err
    assert "deadlock-\\u202eA-rotinom\\u2066\\u200f" in out, out
    assert not [raw for raw in BIDI if raw in out + err], out


def test_a_bidirectional_override_in_json_is_escaped_and_the_same_string(tmp_path: Path) -> None:
    code, out, err = run(["dump", "analyze", "--format", "json", str(_dump_with_hostile_name(tmp_path))])
    assert code == ExitCode.FINDINGS, err
    assert not [raw for raw in BIDI if raw in out], out
    assert HOSTILE_NAME in json.dumps(json.loads(out), ensure_ascii=False)


def test_a_usage_error_quoting_the_value_given_shows_it_escaped() -> None:
    # GIVEN a rule selection from a script's variable holding a set-title sequence
    code, _, err = run(["dump", "analyze", "--select", "KD9\x1b]0;pwned\x07\u202e", str(DUMP)])
    # THEN the error quotes it escaped (click printed it as it was)
    assert code == ExitCode.USAGE, err
    assert "KD9\\x1b]0;pwned\\x07\\u202e" in err, err
    assert "\x1b" not in err and "\x07" not in err and "\u202e" not in err, err


def test_an_internal_error_quoting_its_input_shows_it_escaped(capsys: pytest.CaptureFixture[str]) -> None:
    # GIVEN a bug whose exception quotes a thread name as it is (a ValueError of a parser)
    import click

    from kafkadiag.commands import entry

    def buggy() -> None:
        raise ValueError("deadlock-\x1b]0;pwned\x07\u202eA")

    # WHEN it ends the command THEN the traceback shows the name escaped, with exit 4
    code = entry.run(click.Command("buggy", callback=buggy), [])
    err = capsys.readouterr().err
    assert code == ExitCode.INTERNAL_ERROR, err
    assert "deadlock-\\x1b]0;pwned\\x07\\u202eA" in err and "\x1b" not in err and "\u202e" not in err, err
