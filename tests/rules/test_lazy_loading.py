"""What each command imports, seen in a fresh interpreter's sys.modules: `--help` loads neither the
parsers nor the rules, and `dump analyze` loads only the dump rules' families and no collector that
talks to a process or a cluster (the rule registry loads its families when asked)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from kafkadiag.rules.base import SCOPE_CLUSTER, SCOPE_DUMP
from kafkadiag.rules.registry import FAMILIES, RULES, codes_and_names, family_rules

DUMP = Path(__file__).parents[2] / "fixtures" / "captured" / "deadlock" / "jstack-l.txt"
# Run kafkadiag's main in this interpreter, then write the names in sys.modules to argv[1].
_RUN = """
import json, sys
from kafkadiag.cli import main
code = main(sys.argv[2:])
with open(sys.argv[1], "w") as out:
    json.dump({"exit": code, "modules": sorted(sys.modules)}, out)
"""
# The collect modules that read files given on the command line: none talks to a process or a
# cluster. The other commands' option declarations import no collector (their callbacks do).
FILE_READERS = {"kafkadiag.collect", "kafkadiag.collect.dumpfiles", "kafkadiag.collect.bundle"}


def imported_by(tmp_path: Path, *argv: str) -> tuple[int, set[str]]:
    record = tmp_path / "modules.json"
    completed = subprocess.run(
        [sys.executable, "-c", _RUN, str(record), *argv], capture_output=True, text=True, timeout=120
    )
    assert record.exists(), completed.stderr
    result = json.loads(record.read_text())
    return result["exit"], set(result["modules"])


def under(modules: set[str], package: str) -> set[str]:
    return {name for name in modules if name == package or name.startswith(package + ".")}


def rule_modules(scope: str) -> set[str]:
    return {
        f"kafkadiag.rules.{module}"
        for family in FAMILIES
        if family.scope == scope
        for module, _ in family.rules
    }


def test_help_imports_neither_the_parsers_nor_the_rules(tmp_path: Path) -> None:
    # GIVEN a fresh interpreter WHEN it prints the help
    code, modules = imported_by(tmp_path, "--help")
    # THEN no parser and no rule was imported
    assert code == 0
    assert under(modules, "kafkadiag.dumps") == set()
    assert under(modules, "kafkadiag.rules") == set()


def test_dump_analyze_help_imports_no_collector_and_no_lag_package(tmp_path: Path) -> None:
    # GIVEN a fresh interpreter WHEN it prints `dump analyze --help` (every command's options declared)
    code, modules = imported_by(tmp_path, "dump", "analyze", "--help")
    # THEN the option declarations imported neither a collector nor the lag packages
    assert code == 0
    assert under(modules, "kafkadiag.collect") | under(modules, "kafkadiag.lag") == set()
    assert under(modules, "kafkadiag.rules") == set()


def test_dump_analyze_loads_the_dump_rules_only_and_no_collector(tmp_path: Path) -> None:
    # GIVEN a fresh interpreter WHEN it analyses a captured deadlock
    code, modules = imported_by(tmp_path, "dump", "analyze", str(DUMP))
    # THEN the dump families ran (the deadlock is found: exit 1) ...
    assert code == 1
    assert rule_modules(SCOPE_DUMP) <= modules
    # ... and neither the cluster rules' families nor the lag and maxlag packages they read was loaded
    assert rule_modules(SCOPE_CLUSTER) & modules == set()
    assert under(modules, "kafkadiag.maxlag") == set()
    assert under(modules, "kafkadiag.lag") == set()
    # ... nor a collector: only the modules that read the files named on the command line
    assert under(modules, "kafkadiag.collect") == FILE_READERS
    assert not {"kazoo", "kafka", "pyspark", "psutil"} & {name.split(".")[0] for name in modules}


def test_select_and_ignore_are_checked_without_loading_the_cluster_rules(tmp_path: Path) -> None:
    # GIVEN a fresh interpreter WHEN it analyses the deadlock with rules chosen by code and by name
    argv = ("dump", "analyze", "--select", "KD1", "--ignore", "contended-lock", str(DUMP))
    code, modules = imported_by(tmp_path, *argv)
    # THEN the choice was accepted (the deadlock is found) and no cluster rule family was loaded
    assert code == 1
    assert rule_modules(SCOPE_CLUSTER) & modules == set()
    assert under(modules, "kafkadiag.lag") | under(modules, "kafkadiag.maxlag") == set()


def test_the_code_table_names_each_rule_as_its_class_does() -> None:
    # --select and --ignore are checked against the table read from module names: it must not drift.
    assert codes_and_names() == tuple((rule.code, rule.name) for rule in RULES)


def test_every_family_holds_its_codes_and_its_scope() -> None:
    # The families are the catalogue: each rule once, under its code's prefix and its scope.
    for family in FAMILIES:
        for rule in family_rules(family):
            assert rule.code.startswith(family.prefix), (family.prefix, rule.code)
            assert rule.scope == family.scope, (family.prefix, rule.code, rule.scope)
    assert [rule for family in FAMILIES for rule in family_rules(family)] == list(RULES)
