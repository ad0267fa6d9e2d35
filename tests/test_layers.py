"""The packages import one another in one direction only: the command line over the use cases
(kafkadiag.app), over the collectors and the pure layers (dumps, rules, lag, maxlag), over the
model. Every import in the package, at module level or inside a function, is checked against the
table below; a new package needs its row."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import kafkadiag

PACKAGE = Path(kafkadiag.__file__).parent

# Plain data and small helpers every layer may use; they import only one another. The model
# modules (model, findings, consumer_metrics, diagnosis) may name the pure layers' types for the type checker
# (under `if TYPE_CHECKING:`), which loads nothing when the program runs.
BASE = frozenset(
    "kafkadiag model findings consumer_metrics diagnosis threadheader digits errors exitcodes readlimits "
    "boundedjson durations moments lockgraph jvmreport umask".split()
)
TYPES_NAMED_BY_BASE = frozenset("dumps rules lag maxlag".split())

# Which packages each one may import, besides BASE. The table is the layering: read a row as
# "X may import these". What is left out is a climb back up (a collector importing the
# diagnosis, a parser importing a collector, the batch job importing the command line).
ALLOWED: dict[str, frozenset[str]] = {
    "__main__": frozenset("cli".split()),
    "cli": frozenset("commands console".split()),
    "commands": frozenset(
        "app collect console dumps exporter lag maxlag pipeline progress report rules sandbox".split()
    ),
    "exporter": frozenset("app collect console lag report".split()),
    "pipeline": frozenset("app collect commands console dumps progress report rules".split()),
    "app": frozenset("collect diagnose dumps lag maxlag rules".split()),
    "collect": frozenset("dumps lag".split()),
    "diagnose": frozenset("lag rules".split()),
    "report": frozenset("console dumps lag maxlag rules".split()),
    "console": frozenset("report".split()),
    "progress": frozenset("console".split()),
    "docs": frozenset("dumps rules report".split()),
    "rules": frozenset("dumps lag maxlag".split()),
    "maxlag": frozenset("lag rules".split()),
    "lag": frozenset("rules".split()),
    "dumps": frozenset("".split()),
    "sandbox": frozenset("".split()),
    **{name: frozenset() for name in BASE},
}


def _layer(module: str) -> str | None:
    parts = module.split(".")
    if parts[0] != "kafkadiag":
        return None
    return parts[1] if len(parts) > 1 else "kafkadiag"


def _type_checking_lines(tree: ast.Module) -> set[int]:
    """The lines of `if TYPE_CHECKING:` blocks: imports there exist for the type checker only."""
    lines: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING":
            for statement in node.body:
                lines.update(range(statement.lineno, (statement.end_lineno or statement.lineno) + 1))
    return lines


def _imports(path: Path) -> Iterator[tuple[int, str, bool]]:
    """(line, module, type only) for every import of the file."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    type_only = _type_checking_lines(tree)
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            yield node.lineno, node.module, node.lineno in type_only
        elif isinstance(node, ast.Import):
            yield from ((node.lineno, alias.name, node.lineno in type_only) for alias in node.names)


def edges(runtime_only: bool = False) -> Iterator[tuple[str, str, str]]:
    """(importing layer, imported layer, where) for every import between two layers; with
    runtime_only, without the imports made for the type checker only."""
    for path in sorted(PACKAGE.rglob("*.py")):
        relative = path.relative_to(PACKAGE)
        source = (
            relative.parts[0].removesuffix(".py")
            if len(relative.parts) > 1 or relative.stem != "__init__"
            else "kafkadiag"
        )
        for line, module, type_only in _imports(path):
            target = _layer(module)
            if target is not None and target != source and not (runtime_only and type_only):
                yield source, target, f"kafkadiag/{relative}:{line} imports {module}"


def test_every_package_has_its_row_in_the_table() -> None:
    layers = {
        (entry.stem if entry.suffix == ".py" else entry.name)
        for entry in PACKAGE.iterdir()
        if (entry.suffix == ".py" and entry.stem != "__init__") or (entry / "__init__.py").exists()
    }
    assert not layers - ALLOWED.keys(), f"add a row to ALLOWED for {sorted(layers - ALLOWED.keys())}"


def test_no_package_imports_one_above_it() -> None:
    def allowed(source: str) -> frozenset[str]:
        return BASE | (TYPES_NAMED_BY_BASE if source in BASE else ALLOWED.get(source, frozenset()))

    climbs = [where for source, target, where in edges() if target not in allowed(source)]
    assert not climbs, "imports against the layering:\n" + "\n".join(climbs)


def test_the_model_layer_loads_no_other_layer_when_it_runs() -> None:
    # A type named for the checker is no dependency; an import that runs is.
    loaded = [
        where for source, target, where in edges(runtime_only=True) if source in BASE and target not in BASE
    ]
    assert not loaded, "the model layer imports these when it runs:\n" + "\n".join(loaded)


def test_the_layering_test_sees_a_climb() -> None:
    # The walk finds imports inside functions too: the collectors' capture once reached up into
    # the diagnosis that way.
    found = {(source, target) for source, target, _ in edges()}
    assert ("app", "collect") in found and ("commands", "app") in found
    climbs_once_made = {
        ("collect", "diagnose"), ("collect", "report"), ("maxlag", "collect"), ("diagnose", "commands"),
        ("pipeline", "cli"),
    }  # fmt: skip
    assert not climbs_once_made & found


def _walk(argv: list[str]) -> list[tuple[str, str]]:
    """The calls `kafkadiag ARGV...` makes from one package into another, as (caller module,
    called module), each pair once, in the order first made."""
    import sys

    from kafkadiag.cli import main

    hops: dict[tuple[str, str], None] = {}

    def profile(frame: Any, event: str, arg: object) -> None:
        if event != "call" or frame.f_back is None or frame.f_code.co_name == "<module>":
            return
        callee = frame.f_globals.get("__name__", "")
        caller = frame.f_back.f_globals.get("__name__", "")
        if _layer(callee) not in (None, _layer(caller)) and _layer(caller) is not None:
            hops.setdefault((caller, callee), None)

    sys.setprofile(profile)
    try:
        main(argv)
    finally:
        sys.setprofile(None)
    return list(hops)


if __name__ == "__main__":
    # python -m tests.test_layers: which package imports which, from the code;
    # python -m tests.test_layers walk ARGS...: the calls `kafkadiag ARGS...` makes between packages.
    import sys

    if sys.argv[1:2] == ["walk"]:
        walked = _walk(sys.argv[2:])
        modules = {module for hop in walked for module in hop}
        climbs = [hop for hop in walked if _layer(hop[1]) not in BASE | ALLOWED[_layer(hop[0]) or ""]]
        known = f"{len(walked)} hops between {len(modules)} modules"
        print(
            f"{known}, {len(climbs)} into a package the caller may not import (callbacks):", file=sys.stderr
        )
        for caller, callee in walked:
            mark = "  (callback)" if (caller, callee) in climbs else ""
            print(
                f"  {caller.removeprefix('kafkadiag.')} -> {callee.removeprefix('kafkadiag.')}{mark}",
                file=sys.stderr,
            )
    else:
        table: dict[str, set[str]] = {}
        for source, target, _ in edges():
            table.setdefault(source, set()).add(target)
        for source in sorted(table):
            print(f"{source:17} {' '.join(sorted(table[source]))}")
