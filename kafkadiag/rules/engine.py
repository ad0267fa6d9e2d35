"""Run the rule catalogue over dumps: group them by process, isolate rules, merge, tell the story.

Dumps of one process taken over time form a series. Rules about one dump run on every dump of
the series and their findings are merged: the same rule about the same threads in 48 of 50
dumps is one finding that says so (a stall persists, a blip does not), quoted from the latest
dump. Rules that need several dumps run once per series.
"""

from __future__ import annotations

import gc
import traceback
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from kafkadiag.lockgraph import LockGraph
from kafkadiag.model import ThreadDump
from kafkadiag.rules import stackindex, stacks
from kafkadiag.rules.base import SCOPE_DUMP, Evidence, Finding, Requirement, Rule, Severity
from kafkadiag.rules.clientthreads import client_threads, kafka_client_seen
from kafkadiag.rules.context import JAVA_FORMATS, AnalysisContext, available_requirements
from kafkadiag.rules.registry import RuleCrashed, all_rules, rules_of

# Two dumps belong to one process when this share of their threads (name and OS id) agree.
SAME_PROCESS_OVERLAP = 0.5


@dataclass(frozen=True)
class SkippedRule:
    code: str
    name: str
    missing: tuple[str, ...]


@dataclass(frozen=True)
class SeriesSummary:
    name: str
    sources: tuple[str, ...]
    dumps: int
    threads: int  # in the latest dump
    # Kafka client threads of the latest dump by role (clientthreads.ROLES keys), roles seen only.
    kafka_threads: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class Report:
    verdict: str
    findings: tuple[Finding, ...]
    skipped: tuple[SkippedRule, ...]
    series: tuple[SeriesSummary, ...]
    rules_run: tuple[str, ...]
    # What the parser knows the analysis could not see: a dump cut short, an excerpt without its
    # banner, lines not understood. Shown with the verdict so "no stall" is never read as whole.
    caveats: tuple[str, ...] = ()

    def worst(self) -> Severity | None:
        if not self.findings:
            return None
        return max((finding.severity for finding in self.findings), key=lambda severity: severity.rank)


@dataclass
class _Series:
    dumps: list[ThreadDump] = field(default_factory=list)

    @property
    def name(self) -> str:
        first = self.dumps[0]
        pid = f" pid {first.pid}" if first.pid is not None else ""
        return f"{first.source}{pid}"


def group_into_series(dumps: Iterable[ThreadDump]) -> list[list[ThreadDump]]:
    """Group dumps (in input order) into series of one process each."""
    series: list[_Series] = []
    for dump in dumps:
        target = next((s for s in reversed(series) if _same_process(s.dumps[-1], dump)), None)
        if target is None:
            target = _Series()
            series.append(target)
        target.dumps.append(dump)
    return [s.dumps for s in series]


def _identity(dump: ThreadDump) -> set[tuple[str, int | None]]:
    return {thread.identity for thread in dump.threads}


def _same_process(earlier: ThreadDump, later: ThreadDump) -> bool:
    if earlier.format != later.format:
        return False
    if earlier.pid is not None and later.pid is not None:
        return earlier.pid == later.pid
    before, after = _identity(earlier), _identity(later)
    if not before or not after:
        return False
    return len(before & after) / min(len(before), len(after)) >= SAME_PROCESS_OVERLAP


def __getattr__(name: str) -> tuple[type[Rule[Any]], ...]:
    # engine.RULES: the whole catalogue, loaded when read (the registry loads rules by family).
    if name == "RULES":
        return all_rules()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def rule_matches(rule: type[Rule[Any]], patterns: Sequence[str]) -> bool:
    """A code, a code prefix ("KD2") or a name."""
    return any(rule.code.startswith(p.upper()) or rule.name == p.lower() for p in patterns)


def is_selected(rule: type[Rule[Any]], select: Sequence[str], ignore: Sequence[str]) -> bool:
    """`ignore` wins over `select`; no `select` means every rule."""
    return (not select or rule_matches(rule, select)) and not rule_matches(rule, ignore)


def selected_rules(
    select: Sequence[str] = (), ignore: Sequence[str] = (), scope: str = SCOPE_DUMP
) -> list[Rule[Any]]:
    """The rules of `scope` chosen by code, code prefix ("KD2") or name."""
    chosen = [rule for rule in rules_of(scope) if is_selected(rule, select, ignore)]
    return [rule() for rule in chosen if rule is not RuleCrashed]


def analyze(
    dumps: Iterable[ThreadDump],
    select: Sequence[str] = (),
    ignore: Sequence[str] = (),
    reading_caveats: Sequence[str] = (),
) -> Report:
    """Run the rules over every series; `reading_caveats` are what reading the files repaired."""
    rules = selected_rules(select, ignore)
    findings: list[Finding] = []
    skipped: dict[str, SkippedRule] = {}
    ran: set[str] = set()
    summaries = []
    caveats: list[str] = list(reading_caveats)
    # The dumps outlive the analysis: the collector's full passes need not re-scan their millions
    # of tuples (which never form cycles) while the rules run. Everything is given back after;
    # a caller that froze objects itself keeps its own arrangement untouched.
    freezing = gc.get_freeze_count() == 0
    if freezing:
        gc.freeze()
    try:
        for series in group_into_series(dumps):
            memo: dict[tuple[str, int], object] = {}  # per-dump results shared by the rules and caveats
            name = _Series(series).name
            summaries.append(
                SeriesSummary(
                    name,
                    tuple(dict.fromkeys(d.source for d in series)),
                    len(series),
                    len(series[-1].threads),
                    client_threads(series[-1]),
                )
            )
            series_findings, series_skipped, series_ran = _analyze_series(series, name, rules, memo)
            caveats += _caveats(series, memo)
            findings.extend(series_findings)
            ran.update(series_ran)
            for rule in series_skipped:
                skipped.setdefault(rule.code, rule)
        for code in ran:
            skipped.pop(code, None)
    finally:
        if freezing:
            gc.unfreeze()
        # Memos of this analysis's dumps, kept by identity: let the dumps go.
        stacks.forget_stacks()
        stackindex.forget_indexes()
    ordered = sorted(findings, key=_finding_order)
    return Report(
        verdict=compose_verdict(ordered, summaries, len(caveats)),
        findings=tuple(ordered),
        skipped=tuple(sorted(skipped.values(), key=lambda s: s.code)),
        series=tuple(summaries),
        rules_run=tuple(sorted(ran)),
        caveats=tuple(caveats[:MAX_CAVEATS]),
    )


MAX_CAVEATS = 50


def _caveats(series: list[ThreadDump], memo: dict[tuple[str, int], object]) -> list[str]:
    found = []
    for dump in series:
        where = f"{dump.source} (dump {dump.index + 1}, line {dump.line_no})"
        found += [f"{where}: {note}" for note in dump.notes]
        if dump.unparsed_count:
            found.append(f"{where}: {dump.unparsed_count} line(s) inside the dump were not understood")
        if dump.banner is None and dump.format in JAVA_FORMATS:
            graph = AnalysisContext([dump], 0, memo=memo).graph()  # the rules' graph of this dump
            found += [f"{where}: {text}" for text in _owners_missing(graph)]
    return found


def _owners_missing(graph: LockGraph) -> list[str]:
    """A lock awaited in the text whose holder the text leaves out: said, never dropped."""
    notes = []
    for node in graph.without_owner(stacks.LOCK_SYNCS):
        waiters = ", ".join(graph.thread(index).name for index in node.waiters)
        notes.append(
            f"<0x{node.lock_id:x}> ({node.lock_class or 'unknown class'}), awaited by {waiters}: "
            "owner not in the dump"
        )
    return notes


def _analyze_series(
    series: list[ThreadDump],
    name: str,
    rules: list[Rule[AnalysisContext]],
    memo: dict[tuple[str, int], object],
) -> tuple[list[Finding], list[SkippedRule], set[str]]:
    merged: dict[tuple[str, tuple[str, ...], str], Finding] = {}
    skipped: list[SkippedRule] = []
    ran: set[str] = set()
    last = len(series) - 1
    for rule in rules:
        several = Requirement.SEVERAL_DUMPS in rule.requires
        positions = [last] if several else range(len(series))
        ran_somewhere = False
        for position in positions:
            available = available_requirements(series[position], len(series))
            missing = _missing(rule, available)
            if missing:
                if position == last and not ran_somewhere:
                    skipped.append(SkippedRule(rule.code, rule.name, missing))
                continue
            ran_somewhere = True
            context = AnalysisContext(series, position, name, memo)
            for finding in _run_isolated(rule, context):
                finding = replace(finding, series=name)
                key = finding.key()
                earlier = merged.get(key)
                dumps = (earlier.dumps if earlier else ()) + (position,)
                merged[key] = replace(finding, dumps=dumps)  # the latest dump's evidence wins
        if ran_somewhere:
            ran.add(rule.code)
    return list(merged.values()), skipped, ran


def _missing(rule: Rule[Any], available: frozenset[Requirement]) -> tuple[str, ...]:
    # Sorted, as the catalogue lists them: a frozenset's order changes with every process.
    missing = sorted(requirement.value for requirement in rule.requires if requirement not in available)
    if rule.requires_any and not (rule.requires_any & available):
        missing.append(" or ".join(sorted(requirement.value for requirement in rule.requires_any)))
    return tuple(missing)


def _run_isolated(rule: Rule[AnalysisContext], context: AnalysisContext) -> list[Finding]:
    """Run one rule; a rule that raises becomes a finding of its own, the others still run."""
    try:
        return list(rule.check(context))
    except Exception as error:  # noqa: BLE001 - isolation is the point
        crash = RuleCrashed()
        where = traceback.extract_tb(error.__traceback__)[-1]
        return [
            crash.finding(
                f"rule {rule.code} ({rule.name}) failed on dump {context.dump.index + 1} of "
                f"{context.dump.source}: {type(error).__name__}: {error}",
                threads=(),
                evidence=(Evidence(where.filename, where.lineno, where.line or ""),),
                details={"crashed_rule": rule.code},
            )
        ]


def _finding_order(finding: Finding) -> tuple[int, str, str]:
    return (-finding.severity.rank, finding.rule, finding.threads[0] if finding.threads else "")


def compose_verdict(findings: Sequence[Finding], series: Sequence[SeriesSummary], caveats: int = 0) -> str:
    """The one-paragraph story: the stories of the error findings (then warnings), in order."""
    threads = sum(s.threads for s in series)
    dumps = sum(s.dumps for s in series)
    scope = f"{dumps} dump{'s' if dumps != 1 else ''}, {threads} threads in the latest"
    for level in (Severity.ERROR, Severity.WARNING):
        stories = [f.story for f in findings if f.severity is level and f.story]
        if stories:
            kind = "Stalled" if level is Severity.ERROR else "At risk"
            unique = list(dict.fromkeys(stories))
            return f"{kind} ({scope}): " + " ".join(_sentence(story) for story in unique)
    if any(f.severity is Severity.ERROR for f in findings):
        return f"Stalled ({scope}): see the findings below."
    clientless = "" if any(kafka_client_seen(s.kafka_threads) for s in series) else _NO_CLIENT
    if caveats:
        return (
            f"No stall found in what could be read ({scope}), with {caveats} caveat(s) below: "
            f"what the input lacks or what reading it had to repair was not analysed as given.{clientless}"
        )
    return f"No stall found ({scope}): no rule found a blocked consumer, deadlock or stuck lock.{clientless}"


# Said with "No stall found" when nothing in the input is a Kafka client's: the rules about
# consumers and producers had nothing to look at, which is not the same as finding them healthy.
_NO_CLIENT = (
    " No thread in it is a Kafka client's (by name or stack): if a consumer lags, this is not "
    "its process, or its threads are not in the excerpt; a confluent-kafka client shows its calls "
    "only in py-spy --native's frames."
)


def _sentence(text: str) -> str:
    # Stories start with a word of the rule's own (never a thread name), so capitalising is safe.
    text = text.strip()
    text = text[:1].upper() + text[1:]
    return text if text.endswith((".", "!", "?")) else text + "."
