"""What `diagnose` returns: the story, the findings with where they came from, and each source's
state. Plain frozen data of the model layer, built by kafkadiag.app.diagnose and reported by
kafkadiag.report.diagnosis_*.

The findings and the lag report are named for the type checker only: importing this module loads
neither the rules nor the lag engine, so every layer may hold a diagnosis.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from kafkadiag.findings import Finding, Severity
    from kafkadiag.lag.model import LagReport

SOURCE_LAG = "lag"
SOURCE_DUMP = "dump"
SOURCE_METRICS = "metrics"
SOURCE_JOINED = "joined"


@dataclass(frozen=True)
class SourceStatus:
    kind: str  # SOURCE_LAG, SOURCE_DUMP, SOURCE_METRICS
    target: str  # "zookeeper 127.0.0.1:2181", "pid 4711 (jstack -l)", "bundle DIR" ...
    ok: bool
    detail: str  # what was read, or why not
    help_text: str = ""


@dataclass(frozen=True)
class Diagnosis:
    verdict: str
    narrative: tuple[str, ...]
    findings: tuple[tuple[str, Finding], ...]  # (source kind, finding), the joined ones first
    sources: tuple[SourceStatus, ...]
    lag: LagReport | None
    # What the dumps could not show or what reading them had to repair (an encoding guessed,
    # lines cut, an HTML page read as text), as `dump analyze` lists them.
    caveats: tuple[str, ...] = ()

    def worst(self) -> Severity | None:
        return max((finding.severity for _, finding in self.findings), key=lambda s: s.rank, default=None)

    @property
    def complete(self) -> bool:
        return all(source.ok for source in self.sources)
