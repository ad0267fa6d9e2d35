"""What a rule is, what it needs, and what it reports.

A rule is a class with its identity as class attributes (checked when the class is created, so a
malformed rule fails at import, not in an incident) and one method, `check`, that turns an
analysis context into findings. Rules never do I/O.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable, Iterator
from typing import ClassVar, Generic, TypeVar

from kafkadiag.findings import Evidence, Finding, Severity

__all__ = ["Evidence", "Finding", "Severity", "Requirement", "Rule", "SCOPE_DUMP", "SCOPE_CLUSTER"]

# Where a rule runs: over thread dumps (`dump analyze`, and `diagnose`'s dumps), or over what
# `diagnose` reads from the cluster and the consumer's metrics, joined with the dumps' findings.
SCOPE_DUMP = "dump"
SCOPE_CLUSTER = "cluster"


class Requirement(str, enum.Enum):
    """Inputs a rule may need beyond a parsed dump."""

    JAVA = "a Java thread dump"
    PYTHON = "a Python thread dump (py-spy, faulthandler, traceback, gdb py-bt, gevent, asyncio)"
    LOCK_DATA = "lock ownership (jstack -l / jcmd Thread.print -l)"
    PYSPY_LOCALS = "py-spy --locals"
    PYSPY_NATIVE = "py-spy --native"
    SEVERAL_DUMPS = "several dumps of the same process"
    CPU_TIMES = "per-thread cpu= times (JDK 11+)"
    OS_THREAD_CPU = (
        "per-thread CPU figures beside the dump (a top -H / ps -L table, a busy-thread script's lines, "
        "Arthas' thread -n)"
    )
    LAG = "committed offsets and high watermarks (--zookeeper / --bootstrap-server)"
    CONSUMER_METRICS = "the consumer's fetcher metrics (--pid of the JVM, --jmx, --jolokia, --prometheus)"


_CODE = re.compile(r"^KD\d{3}$")
_NAME = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)+$")


# What a rule looks at: one dump series (AnalysisContext) or, for the rules of `diagnose`, every
# source joined (kafkadiag.rules.cluster.DiagnosisContext).
ContextT = TypeVar("ContextT")


class Rule(Generic[ContextT]):
    """Base of every rule. Subclasses set the class attributes and implement `check`."""

    code: ClassVar[str]
    name: ClassVar[str]
    title: ClassVar[str]
    severity: ClassVar[Severity]  # the severity of its findings unless a finding says otherwise
    explanation: ClassVar[str]  # why it matters: the mechanism behind the pattern
    remedy: ClassVar[str]  # what to do
    requires: ClassVar[frozenset[Requirement]] = frozenset()
    # Needs only one of these (e.g. a rule that reads Java or Python dumps).
    requires_any: ClassVar[frozenset[Requirement]] = frozenset()
    scope: ClassVar[str] = SCOPE_DUMP

    def __init_subclass__(cls, **kwargs: object) -> None:
        super().__init_subclass__(**kwargs)
        for attribute in ("code", "name", "title", "severity", "explanation", "remedy"):
            if not getattr(cls, attribute, None):
                raise TypeError(f"rule {cls.__name__} lacks {attribute}")
        if not _CODE.match(cls.code):
            raise TypeError(f"rule {cls.__name__}: code {cls.code!r} is not KDnnn")
        if not _NAME.match(cls.name):
            raise TypeError(f"rule {cls.__name__}: name {cls.name!r} is not kebab-case")
        if not isinstance(cls.severity, Severity):
            raise TypeError(f"rule {cls.__name__}: severity must be a Severity")

    def check(self, context: ContextT) -> Iterable[Finding]:
        raise NotImplementedError

    def finding(
        self,
        message: str,
        threads: Iterable[str],
        evidence: Iterable[Evidence],
        *,
        severity: Severity | None = None,
        story: str = "",
        remedy: str | None = None,
        details: dict[str, object] | None = None,
    ) -> Finding:
        return Finding(
            rule=self.code,
            name=self.name,
            severity=severity or self.severity,
            title=self.title,
            message=message,
            threads=tuple(threads),
            evidence=tuple(evidence),
            remedy=remedy or self.remedy,
            story=story,
            details=details or {},
        )

    @classmethod
    def describe(cls) -> Iterator[str]:
        """The rule's full text, as `kafkadiag explain` and docs/rules.md print it."""
        yield f"{cls.code} {cls.name}: {cls.title}"
        yield f"Severity: {cls.severity.value}"
        needs = sorted(requirement.value for requirement in cls.requires)
        if cls.requires_any:
            needs.append(" or ".join(sorted(requirement.value for requirement in cls.requires_any)))
        if needs:
            yield "Needs: " + "; ".join(needs)
        yield ""
        yield cls.explanation.strip()
        yield ""
        yield "What to do: " + cls.remedy.strip()
