"""Run kafkadiag's CLI in-process the way the console script does: exit code, stdout, stderr."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from typing import Any

import click
from click.testing import CliRunner

from kafkadiag.cli import main


def run(args: list[str], env: dict[str, str] | None = None) -> tuple[int, str, str]:
    runner = CliRunner(env={"KAFKADIAG_WIDTH": "200", **(env or {})})
    exit_codes: list[int] = []

    def entry() -> None:
        exit_codes.append(main(args))

    result = runner.invoke(click.Command("kafkadiag", callback=entry), [], catch_exceptions=False)
    return exit_codes[0], result.stdout, result.stderr


def run_json(args: list[str], expect: int = 0) -> dict[str, Any]:
    code, out, err = run([*args, "--format", "json"])
    assert code == expect, f"exit {code}, expected {expect}\nstdout:\n{out}\nstderr:\n{err}"
    document: dict[str, Any] = json.loads(out)
    return document


def partitions_of(document: dict[str, Any], group: str) -> dict[tuple[str, int], dict[str, Any]]:
    (found,) = [entry for entry in document["groups"] if entry["group"] == group]
    return {(entry["topic"], entry["partition"]): entry for entry in found["partitions"]}


def group_of(document: dict[str, Any], group: str, source: str | None = None) -> dict[str, Any]:
    matches = [
        entry
        for entry in document["groups"]
        if entry["group"] == group and (source is None or entry["source"] == source)
    ]
    assert len(matches) == 1, (
        f"{len(matches)} entries for {group} in {[g['group'] for g in document['groups']]}"
    )
    return matches[0]


def watch_until(
    arguments: list[str], shown_enough: Callable[[bytes], bool], env: dict[str, str] | None = None
) -> tuple[subprocess.Popen[bytes], str]:
    """`kafkadiag ARGUMENTS` (a `lag --watch`) run with its view in a pipe until what it showed
    satisfies `shown_enough`, then stopped with Ctrl-C: the finished process and all it showed."""
    process = subprocess.Popen(
        [sys.executable, "-m", "kafkadiag", *arguments],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
    )  # fmt: skip
    shown: list[bytes] = []
    enough = threading.Event()

    def read_views() -> None:
        assert process.stdout is not None
        for line in iter(process.stdout.readline, b""):
            shown.append(line)
            if shown_enough(b"".join(shown)):
                enough.set()

    reader = threading.Thread(target=read_views, daemon=True)
    reader.start()
    try:
        # a loaded machine takes seconds to start the process and draw its first view
        assert enough.wait(60), b"".join(shown)
        process.send_signal(signal.SIGINT)
        process.wait(timeout=30)
        reader.join(10)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    return process, b"".join(shown).decode()
