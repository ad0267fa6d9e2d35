"""Shell completion through click's `_KAFKADIAG_COMPLETE` protocol, as bash, zsh and fish call it:
files for path arguments, rule codes for `explain`, `--select` and `--ignore`, and consumer groups
from the `--zookeeper` or `--bootstrap-server` already typed (real ZooKeeper, real Kafka 4.1).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kafkadiag.rules.engine import RULES
from tests.infra.servers import ServerProcess
from tests.infra.workload import Cluster, commit_offsets_without_joining, create_topic, unique

KAFKADIAG = [sys.executable, "-m", "kafkadiag"]


def completions(words: str, shell: str = "bash") -> list[tuple[str, str]]:
    """(type, value) for each completion offered for the last word of `words`, as bash asks."""
    env = {
        **os.environ,
        "_KAFKADIAG_COMPLETE": f"{shell}_complete",
        "COMP_WORDS": words,
        "COMP_CWORD": str(len(words.split()) - (0 if words.endswith(" ") else 1)),
    }
    result = subprocess.run([*KAFKADIAG], capture_output=True, text=True, env=env, timeout=60, check=False)
    assert result.returncode == 0 and not result.stderr, result.stderr
    return [tuple(line.split(",", 1)) for line in result.stdout.splitlines() if line]  # type: ignore[misc]


def test_explain_completes_rule_codes() -> None:
    offered = completions("kafkadiag explain KD2")
    expected = sorted(rule.code for rule in RULES if rule.code.startswith("KD2"))
    assert expected and offered == [("plain", code) for code in expected], offered


@pytest.mark.parametrize("option", ["--select", "--ignore"])
def test_rule_selection_completes_codes_and_names(option: str) -> None:
    rule = sorted(RULES, key=lambda rule: rule.code)[0]
    assert ("plain", rule.code) in completions(f"kafkadiag dump analyze {option} {rule.code[:3]}")
    assert ("plain", rule.name) in completions(f"kafkadiag diagnose {option} {rule.name[:6]}")


@pytest.mark.parametrize(
    "words",
    [
        "kafkadiag dump analyze jst",
        "kafkadiag dump parse jst",
        "kafkadiag dump analyze x.txt --output rep",
        "kafkadiag diagnose --from bund",
        "kafkadiag check --config thr",
        "kafkadiag batch in",
    ],
)
def test_path_arguments_complete_files(words: str) -> None:
    # The shell lists the files itself: completion answers "file" with the word typed.
    assert completions(words) == [("file", words.split()[-1])]


def test_directories_complete_as_directories() -> None:
    assert completions("kafkadiag capture --out bund") == [("dir", "bund")]
    assert completions("kafkadiag lag history rec") == [("dir", "rec")]


@pytest.mark.parametrize("shell", ["bash", "zsh", "fish"])
def test_each_documented_shell_gets_a_script(shell: str) -> None:
    env = {**os.environ, "_KAFKADIAG_COMPLETE": f"{shell}_source"}
    result = subprocess.run(KAFKADIAG, capture_output=True, text=True, env=env, timeout=60, check=False)
    assert result.returncode == 0, result.stderr
    assert "_KAFKADIAG_COMPLETE" in result.stdout, result.stdout


@pytest.mark.skipif(shutil.which("bash") is None, reason="bash is the shell under test")
def test_real_bash_offers_rule_codes_from_the_sourced_script() -> None:
    script = subprocess.run(
        KAFKADIAG, capture_output=True, text=True, env={**os.environ, "_KAFKADIAG_COMPLETE": "bash_source"}
    ).stdout
    # bash calls the completion function with the command as typed ($1): the installed executable.
    executable = Path(sys.executable).parent / "kafkadiag"
    assert executable.is_file(), executable
    probe = (
        "COMP_WORDS=(kafkadiag explain KD20); COMP_CWORD=2; "
        f"_kafkadiag_completion {executable}; echo ${{COMPREPLY[@]}}"
    )
    result = subprocess.run(
        ["bash", "--norc", "-c", script + "\n" + probe], capture_output=True, text=True, timeout=60
    )
    expected = sorted(rule.code for rule in RULES if rule.code.startswith("KD20"))
    assert result.stdout.split() == expected, result.stderr


def test_group_completes_from_kafka(broker: ServerProcess) -> None:
    # GIVEN a group that committed offsets on the real broker
    topic, group = unique("completion"), unique("completion-group")
    create_topic(broker.address, topic, 1)
    commit_offsets_without_joining(broker.address, group, {(topic, 0): 0})
    # WHEN --group is completed after --bootstrap-server
    offered = completions(f"kafkadiag lag --bootstrap-server {broker.address} --group {group[:-3]}")
    # THEN the group is offered (read with ListGroups; nothing was written)
    assert ("plain", group) in offered, offered


def test_group_completes_from_zookeeper(cluster: Cluster) -> None:
    group = cluster.old_group()
    group.join({"orders": 1})
    offered = completions(f"kafkadiag check --zookeeper {cluster.zookeeper} --group {group.group[:5]}")
    assert ("plain", group.group) in offered, offered


def test_group_completion_is_quick_and_silent_when_nothing_answers() -> None:
    started = time.monotonic()
    # Nothing listens on port 1 of this host: no group, no error, and the Tab press returns.
    offered = completions("kafkadiag lag --bootstrap-server 127.0.0.1:1 --zookeeper 127.0.0.1:1 --group ord")
    assert offered == []
    assert time.monotonic() - started < 15
