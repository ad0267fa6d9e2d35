"""Run kafkadiag's CLI in-process the way the console script does: exit code, stdout, stderr."""

from __future__ import annotations

import json
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
