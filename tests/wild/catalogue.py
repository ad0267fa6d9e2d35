"""The catalogue of wild thread dumps: tests/wild/catalogue.toml, one table per file in dumps/."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

if sys.version_info >= (3, 11):
    import tomllib
else:  # tomli is installed for Python 3.10 by setup.cfg
    import tomli as tomllib

WILD = Path(__file__).resolve().parent
DUMPS = WILD / "dumps"
CATALOGUE = WILD / "catalogue.toml"
REPO = WILD.parents[1]
TABLE_PAGE = REPO / "docs" / "wild-dumps.md"

_KEYS = {
    "source", "via", "title", "kafka_client", "cause", "culprit_threads", "rules", "miss",
    "threads", "exit", "note", "classes", "healthy",
}  # fmt: skip

# The classes of incident the wild set is widened toward, in the order the table lists them.
CLASSES = {
    "deadlock-report": "the JVM's deadlock report, with or without its stacks",
    "log-viewer": "lines copied out of a log viewer, its columns in front",
    "event-loop": "an event loop held by one task (a watchdog's warning, or a dump)",
    "self-wait": "a client thread waiting on work only it can do",
    "bounded-handoff": "a bounded hand-off that is no java.util.concurrent queue",
}


@dataclass(frozen=True)
class WildDump:
    """One published dump and what kafkadiag is expected to make of it."""

    slug: str
    source: str
    title: str
    kafka_client: bool
    cause: str
    threads: int
    exit: int
    culprit_threads: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()
    miss: str | None = None
    via: str | None = None
    note: str | None = None
    classes: tuple[str, ...] = ()
    healthy: bool = False
    unknown_keys: tuple[str, ...] = field(default=())

    @property
    def path(self) -> Path:
        return DUMPS / f"{self.slug}.txt"

    @property
    def named(self) -> bool:
        """kafkadiag names the culprit (an expectation with rules, not a miss nor a healthy dump)."""
        return self.miss is None and not self.healthy


def load() -> list[WildDump]:
    with CATALOGUE.open("rb") as handle:
        tables = tomllib.load(handle)
    return [_entry(slug, table) for slug, table in tables.items()]


def _entry(slug: str, table: dict[str, object]) -> WildDump:
    def text(key: str) -> str | None:
        value = table.get(key)
        return " ".join(str(value).split()) if value is not None else None

    return WildDump(
        slug=slug,
        source=str(table["source"]),
        title=str(table["title"]),
        kafka_client=bool(table["kafka_client"]),
        cause=text("cause") or "",
        threads=int(table["threads"]),  # type: ignore[call-overload]
        exit=int(table["exit"]),  # type: ignore[call-overload]
        culprit_threads=tuple(table.get("culprit_threads", ())),  # type: ignore[arg-type]
        rules=tuple(table.get("rules", ())),  # type: ignore[arg-type]
        miss=text("miss"),
        via=text("via"),
        note=text("note"),
        classes=tuple(table.get("classes", ())),  # type: ignore[arg-type]
        healthy=bool(table.get("healthy", False)),
        unknown_keys=tuple(sorted(set(table) - _KEYS)),
    )
