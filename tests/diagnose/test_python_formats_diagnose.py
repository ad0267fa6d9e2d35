"""KD802 from Python dumps taken without py-spy: the poll-queue-full reproducer dumped by
faulthandler and by the traceback recipe, joined with a group's offsets on the real broker."""

from __future__ import annotations

import json

import pytest

from kafkadiag.exitcodes import ExitCode
from tests.conftest import CAPTURED
from tests.infra import workload
from tests.infra.cli import run
from tests.infra.workload import Cluster

DUMPS = CAPTURED / "pyfmt-poll-queue-full"


@pytest.mark.parametrize(
    ("name", "poll_thread"),
    [
        # faulthandler names no thread: the poll loop is named by its ident, found by its frames.
        ("faulthandler-sigusr1.txt", None),
        ("current-frames-recipe.txt", "kafka-poll-loop"),
        ("gdb-py-bt.txt", None),
    ],
)
def test_python_poll_loop_stall_is_joined_with_the_group_lag(
    cluster: Cluster, name: str, poll_thread: str | None
) -> None:
    # GIVEN a group with committed offsets behind the log on the real broker
    group = workload.unique("group1")
    topic = cluster.topic(1, {0: 25})
    workload.commit_offsets_without_joining(cluster.bootstrap, group, {(topic, 0): 5})
    # WHEN diagnose reads the dump and the group
    code, out, err = run(["diagnose", "--bootstrap-server", cluster.bootstrap, "--group", group,
                          "--from", str(DUMPS / name), "--format", "json"])  # fmt: skip
    assert code == ExitCode.FINDINGS, err
    findings = {finding["rule"]: finding for finding in json.loads(out)["findings"]}
    # THEN the blocked poll loop (KD401) is explained with the group's lag (KD802)
    assert "KD401" in findings
    facts = findings["KD802"]["facts"]
    assert facts["poll_thread"] == (poll_thread or findings["KD401"]["threads"][0])
    assert len(facts["workers"]) == 2
    assert facts["group"] == group and facts["checker_lag_total"] == 20
