"""`kafkadiag check`: thresholds per group and topic, applied to a lag report. Pure; no I/O.

Thresholds come from defaults, then config rules matching the group (and topic) in file order,
then command-line options, later ones overriding earlier ones field by field.
"""

from __future__ import annotations

import fnmatch
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from kafkadiag.findings import Finding, Severity
from kafkadiag.lag import burrow
from kafkadiag.lag.evidence import where
from kafkadiag.lag.model import GroupLag, LagReport, PartitionLag
from kafkadiag.rules.groupfacts import finding_topic

# --fail-on-findings: a severity of the catalogue's one scale, or "none".
FAIL_NEVER = "none"
FINDING_LEVELS = (*(severity.value for severity in Severity), FAIL_NEVER)

# Without any threshold, `check` judges Burrow's statuses: these partition statuses, and the group
# status ERR they make, are unhealthy. REWIND counts too: Burrow's group status is ERR for it.
UNHEALTHY_STATUSES = (burrow.STOP, burrow.STALL, burrow.REWIND)
ONE_SAMPLE = (
    "status not judged: one sample cannot tell a stopped consumer from a moving one; pass --samples 2 "
    "or more (with an --interval longer than the group's commit interval) or a threshold"
)

HEALTHY = "healthy"
UNHEALTHY = "unhealthy"
UNCHECKED = "unchecked"


@dataclass(frozen=True)
class Thresholds:
    max_lag: int | None = None  # per partition
    max_total_lag: int | None = None  # per group (sum over its partitions matching the rule)
    max_time_lag_s: float | None = None  # per partition; needs --samples 2+
    worst_status: str | None = None  # worst Burrow partition status allowed; needs --samples 2+
    fail_on_findings: str = Severity.ERROR.value  # findings at this severity or above fail; "none"

    def merged(self, other: Thresholds, fields: Sequence[str]) -> Thresholds:
        return replace(self, **{name: getattr(other, name) for name in fields})


@dataclass(frozen=True)
class Rule:
    group: str = "*"  # fnmatch pattern
    topic: str | None = None  # fnmatch pattern; None: the rule applies to the whole group
    thresholds: Thresholds = field(default_factory=Thresholds)
    fields: tuple[str, ...] = ()  # which thresholds the rule sets


@dataclass(frozen=True)
class CheckPolicy:
    defaults: Thresholds = field(default_factory=Thresholds)
    rules: tuple[Rule, ...] = ()
    overrides: Thresholds = field(default_factory=Thresholds)
    override_fields: tuple[str, ...] = ()

    def for_group(self, group: str, topic: str | None = None) -> Thresholds:
        thresholds = self.defaults
        for rule in self.rules:
            if not fnmatch.fnmatchcase(group, rule.group):
                continue
            if rule.topic is not None and (topic is None or not fnmatch.fnmatchcase(topic, rule.topic)):
                continue
            thresholds = thresholds.merged(rule.thresholds, rule.fields)
        return thresholds.merged(self.overrides, self.override_fields)

    def _all(self) -> list[Thresholds]:
        return [self.defaults, self.overrides] + [rule.thresholds for rule in self.rules]

    def needs_samples(self) -> bool:
        return any(t.max_time_lag_s is not None or t.worst_status is not None for t in self._all())

    def has_thresholds(self) -> bool:
        """Any lag threshold anywhere; without one, `check` judges the groups' statuses."""
        return any(
            t.max_lag is not None
            or t.max_total_lag is not None
            or t.max_time_lag_s is not None
            or t.worst_status is not None
            for t in self._all()
        )


@dataclass(frozen=True)
class Violation:
    check: str  # max-lag, max-total-lag, max-time-lag, worst-status, status, finding:<name>
    message: str
    topic: str | None = None
    partition: int | None = None
    rule: str | None = None  # the catalogue code of a finding's rule (`kafkadiag explain KD6xx`)


@dataclass(frozen=True)
class GroupVerdict:
    group: str
    source: str
    verdict: str  # healthy | unhealthy | unchecked
    violations: tuple[Violation, ...] = ()
    unchecked: tuple[str, ...] = ()  # why some things could not be checked
    checks: tuple[str, ...] = ()  # which checks ran


@dataclass(frozen=True)
class CheckResult:
    verdicts: tuple[GroupVerdict, ...]
    errors: tuple[str, ...]

    @property
    def verdict(self) -> str:
        if any(verdict.verdict == UNHEALTHY for verdict in self.verdicts):
            return UNHEALTHY
        if self.errors or any(verdict.verdict == UNCHECKED for verdict in self.verdicts):
            return UNCHECKED
        return HEALTHY


def check_report(report: LagReport, policy: CheckPolicy) -> CheckResult:
    verdicts = tuple(_check_group(group, policy, report.samples) for group in report.groups)
    return CheckResult(verdicts=verdicts, errors=report.errors)


@dataclass
class _Judgement:
    """What one group's checks found, as they run."""

    violations: list[Violation] = field(default_factory=list)
    unchecked: list[str] = field(default_factory=list)
    checks: set[str] = field(default_factory=set)

    def verdict(self) -> str:
        if self.violations:
            return UNHEALTHY
        return UNCHECKED if self.unchecked else HEALTHY


def _check_group(group: GroupLag, policy: CheckPolicy, samples: int) -> GroupVerdict:
    if not group.exists:
        return GroupVerdict(
            group.group, group.source, UNCHECKED, unchecked=group.errors or ("group not found",)
        )
    judgement = _Judgement(unchecked=list(group.errors))
    totals: dict[Thresholds, int] = {}
    for partition in group.partitions:
        thresholds = policy.for_group(group.group, partition.topic)
        if partition.lag is None:
            if partition.problems:
                judgement.unchecked.append(
                    f"{where(partition)}: lag unknown ({'; '.join(partition.problems)})"
                )
            # else: nothing committed yet (an owned partition without an offset): no lag to check,
            # and not a failure to read; the finding owned-without-offset says so.
            continue
        if thresholds.max_total_lag is not None:
            totals[thresholds] = totals.get(thresholds, 0) + max(partition.lag, 0)
        _check_partition(judgement, partition, partition.lag, thresholds, samples)
    for thresholds, total in totals.items():
        judgement.checks.add("max-total-lag")
        if thresholds.max_total_lag is not None and total > thresholds.max_total_lag:
            message = f"total lag {total} > {thresholds.max_total_lag}"
            judgement.violations.append(Violation("max-total-lag", message))
    _check_findings(judgement, group, policy)
    if not policy.has_thresholds():
        judgement.checks.add("status")
        if samples > 1:
            judgement.violations += _status_violations(group)
        else:
            judgement.unchecked.append(ONE_SAMPLE)
    return GroupVerdict(
        group.group,
        group.source,
        judgement.verdict(),
        tuple(judgement.violations),
        tuple(judgement.unchecked),
        tuple(sorted(judgement.checks)),
    )


def _check_partition(
    judgement: _Judgement, partition: PartitionLag, lag: int, thresholds: Thresholds, samples: int
) -> None:
    """The per-partition thresholds: lag, time lag and worst status (the last two over a window)."""

    def violated(check: str, message: str) -> None:
        text = f"{where(partition)}: {message}"
        judgement.violations.append(Violation(check, text, partition.topic, partition.partition))

    if thresholds.max_lag is not None:
        judgement.checks.add("max-lag")
        if lag > thresholds.max_lag:
            violated("max-lag", f"lag {lag} > {thresholds.max_lag}")
    if thresholds.max_time_lag_s is not None and samples > 1:
        judgement.checks.add("max-time-lag")
        too_old = _time_lag_exceeded(partition, lag, thresholds.max_time_lag_s)
        if too_old:
            violated("max-time-lag", too_old)
    worst = thresholds.worst_status
    if worst is not None and samples > 1 and partition.status is not None:
        judgement.checks.add("worst-status")
        if burrow.SEVERITY[partition.status] > burrow.SEVERITY[worst]:
            violated("worst-status", f"status {partition.status}, worse than {worst}")


def _time_lag_exceeded(partition: PartitionLag, lag: int, limit_s: float) -> str | None:
    """Why the partition's oldest unconsumed record is older than the limit, or None."""
    if partition.time_lag_s is not None:
        if partition.time_lag_s > limit_s:
            return f"time lag {partition.time_lag_s:.0f}s > {limit_s:g}s"
        return None
    # Nothing was produced during the window: the age of the next record is unknown, but a
    # consumer that also made no progress for longer than the limit is behind.
    since = partition.since_progress_s
    if lag > 0 and since is not None and since > limit_s:
        at_least = "at least " if partition.since_progress_at_least else ""
        return f"lag {lag} with no progress for {at_least}{since:.0f}s > {limit_s:g}s"
    return None


def _check_findings(judgement: _Judgement, group: GroupLag, policy: CheckPolicy) -> None:
    """The KD6xx findings at or above --fail-on-findings (per group and topic) fail the group."""
    for finding in group.findings:
        judgement.checks.add("findings")
        topic = finding_topic(finding)
        if _fails(finding, policy.for_group(group.group, topic).fail_on_findings):
            check = f"finding:{finding.name}"
            judgement.violations.append(Violation(check, finding.message, topic, rule=finding.rule))


def _fails(finding: Finding, fail_on: str) -> bool:
    return fail_on != FAIL_NEVER and finding.severity.at_least(Severity(fail_on))


def _status_violations(group: GroupLag) -> list[Violation]:
    """Partitions in STOP, STALL or REWIND (the group's status is then ERR), as Burrow judges them."""
    return [
        Violation(
            "status",
            f"{where(partition)}: status {partition.status} (group status {group.status or 'unknown'})",
            partition.topic,
            partition.partition,
        )
        for partition in group.partitions
        if partition.status in UNHEALTHY_STATUSES
    ]


def parse_duration(value: object) -> float:
    """Seconds from 90, "90", "90s", "5m", "2h", "1d"."""
    if isinstance(value, bool):
        raise ValueError(f"not a duration: {value!r}")
    if isinstance(value, (int, float)):
        return float(value)
    text = str(value).strip().lower()
    units = {"s": 1, "m": 60, "h": 3600, "d": 86400}
    if text and text[-1] in units:
        return float(text[:-1]) * units[text[-1]]
    return float(text)


def thresholds_from_mapping(values: dict[str, object], where: str) -> tuple[Thresholds, tuple[str, ...]]:
    """Read threshold keys from a config table; ValueError names the bad key."""
    known = {"max_lag", "max_total_lag", "max_time_lag", "worst_status", "fail_on_findings", "group", "topic"}
    unknown = set(values) - known
    if unknown:
        raise ValueError(f"{where}: unknown key(s) {', '.join(sorted(unknown))}")
    settings: dict[str, object] = {}
    for key, value in values.items():
        if key in ("max_lag", "max_total_lag"):
            if isinstance(value, bool) or not isinstance(value, int) or value < 0:
                raise ValueError(f"{where}: {key} must be a non-negative integer, not {value!r}")
            settings[key] = value
        elif key == "max_time_lag":
            try:
                settings["max_time_lag_s"] = parse_duration(value)
            except ValueError:
                raise ValueError(
                    f'{where}: max_time_lag must be seconds or like "5m", not {value!r}'
                ) from None
        elif key == "worst_status":
            status = str(value).upper()
            if status not in burrow.PARTITION_STATUSES:
                raise ValueError(
                    f"{where}: worst_status must be one of {', '.join(burrow.PARTITION_STATUSES)}"
                )
            settings["worst_status"] = status
        elif key == "fail_on_findings":
            level = str(value).lower()
            if level not in FINDING_LEVELS:
                raise ValueError(f"{where}: fail_on_findings must be one of {', '.join(FINDING_LEVELS)}")
            settings["fail_on_findings"] = level
    return Thresholds(**settings), tuple(settings)  # type: ignore[arg-type]


def policy_from_document(document: dict[str, object]) -> CheckPolicy:
    defaults_table = document.get("defaults", {})
    if not isinstance(defaults_table, dict):
        raise ValueError("[defaults] must be a table")
    defaults, default_fields = thresholds_from_mapping(defaults_table, "[defaults]")
    defaults = Thresholds().merged(defaults, default_fields)
    rules = []
    raw_rules = document.get("rule", document.get("rules", []))
    if not isinstance(raw_rules, list):
        raise ValueError("[[rule]] must be an array of tables")
    for index, raw in enumerate(raw_rules, start=1):
        if not isinstance(raw, dict):
            raise ValueError(f"rule {index} must be a table")
        thresholds, fields = thresholds_from_mapping(raw, f"rule {index}")
        rules.append(
            Rule(
                group=str(raw.get("group", "*")),
                topic=str(raw["topic"]) if "topic" in raw else None,
                thresholds=thresholds,
                fields=fields,
            )
        )
    unknown = set(document) - {"defaults", "rule", "rules"}
    if unknown:
        raise ValueError(f"unknown section(s) {', '.join(sorted(unknown))}")
    return CheckPolicy(defaults=defaults, rules=tuple(rules))
