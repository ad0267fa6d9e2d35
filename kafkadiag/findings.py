"""A finding, the one vocabulary every source reports in: what is stuck, on what, held by whom,
what to do, with the input lines that show it and one severity scale.

Part of the model layer: the rules make findings (kafkadiag/rules), the lag, maxlag and diagnosis
models carry them, the reports print them; this module imports none of them.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import NamedTuple


class Severity(str, enum.Enum):
    ERROR = "error"
    WARNING = "warning"
    INFO = "info"

    @property
    def rank(self) -> int:
        return _RANK[self]

    def at_least(self, other: Severity) -> bool:
        return self.rank >= other.rank


_RANK = {Severity.INFO: 0, Severity.WARNING: 1, Severity.ERROR: 2}


class Evidence(NamedTuple):
    """One quoted input line: where it is and what it says."""

    source: str
    line_no: int | None
    text: str

    def render(self) -> str:
        where = f"{self.source}:{self.line_no}" if self.line_no else self.source
        return f"{where}: {self.text.strip()}"


@dataclass(frozen=True)
class Finding:
    """One diagnosis: what is stuck, on what, held by whom, and what to do."""

    rule: str  # code, "KD201"
    name: str  # kebab-case name
    severity: Severity
    title: str
    message: str
    threads: tuple[str, ...]  # culprit first
    evidence: tuple[Evidence, ...]
    remedy: str
    story: str = ""  # one sentence for the verdict paragraph
    dumps: tuple[int, ...] = ()  # indexes (within the series) of the dumps that show it
    series: str = ""  # the process the dumps came from
    details: dict[str, object] = field(default_factory=dict)

    def key(self) -> tuple[str, tuple[str, ...], str]:
        """Identity across dumps of one process: the same rule about the same threads."""
        return self.rule, self.threads, self.message
