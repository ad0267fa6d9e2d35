"""`kafkadiag diagnose`: read every source named, run the dump rules and the cluster rules, tell
the story.

Each source that fails is recorded with its cause and the rest is still diagnosed: a diagnosis
with an unreadable source exits 3 but says everything the other sources showed.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kafkadiag.collect.live import parsed_dumps, take_dump
from kafkadiag.diagnosis import (
    SOURCE_DUMP,
    SOURCE_JOINED,
    SOURCE_LAG,
    SOURCE_METRICS,
    Diagnosis,
    SourceStatus,
)
from kafkadiag.errors import KafkadiagError, UsageError
from kafkadiag.findings import Evidence, Finding, Severity
from kafkadiag.rules.base import SCOPE_CLUSTER
from kafkadiag.rules.cluster import DiagnosisContext, MetricsRead

if TYPE_CHECKING:
    from kafkadiag.app.analyze import DumpWatch
    from kafkadiag.collect.gather import LagTarget
    from kafkadiag.lag.model import LagReport
    from kafkadiag.model import ThreadDump
    from kafkadiag.rules.engine import Report


@dataclass(frozen=True)
class DiagnoseOptions:
    lag_target: LagTarget | None = None  # None: no cluster named
    pids: tuple[int, ...] = ()
    jmx: str | None = None
    jolokia: str | None = None
    prometheus: str | None = None
    bundles: tuple[str, ...] = ()
    select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    timeout_s: float = 10.0

    def validate(self) -> None:
        if not (self.lag_target or self.pids or self.bundles or self.jmx or self.jolokia or self.prometheus):
            raise UsageError(
                "nothing to diagnose: name a cluster (--zookeeper/--bootstrap-server with --group), "
                "consumer processes (--pid) or capture bundles (--from)"
            )
        if self.lag_target is not None:
            self.lag_target.validate()


def diagnose(options: DiagnoseOptions, watch: DumpWatch | None = None) -> Diagnosis:
    """`watch` is told how the dumps' reading and analysis go (a progress display on stderr)."""
    options.validate()
    sources: list[SourceStatus] = []
    lag, lag_source = _read_lag(options, sources)
    dumps, dump_report = _analyzed_dumps(options, sources, watch)
    metrics = _read_metrics(options, lag, sources)
    latest = {}
    for dump in dumps:  # per process (source), the last dump read
        latest[dump.source] = dump
    names = tuple(thread.name for dump in latest.values() for thread in dump.threads)
    context = DiagnosisContext(lag, lag_source, tuple(metrics), dump_report, names)
    joined, cluster = _cluster_findings(context, options)
    findings: list[tuple[str, Finding]] = [(SOURCE_JOINED, f) for f in joined]
    findings += [(SOURCE_METRICS if f.rule.startswith("KD7") else SOURCE_LAG, f) for f in cluster]
    if dump_report is not None:
        findings += [(SOURCE_DUMP, f) for f in dump_report.findings]
    from kafkadiag.diagnose.narrative import compose

    verdict, narrative = compose(joined, findings, sources, lag, dump_report, metrics)
    caveats = dump_report.caveats if dump_report is not None else ()
    return Diagnosis(verdict, tuple(narrative), tuple(findings), tuple(sources), lag, caveats)


def _read_lag(options: DiagnoseOptions, sources: list[SourceStatus]) -> tuple[LagReport | None, str]:
    target = options.lag_target
    if target is None:
        return None, ""
    from kafkadiag.app.lag import read_lag

    named = " and ".join(
        f"{kind} {address}"
        for kind, address in (("zookeeper", target.zookeeper), ("brokers", target.bootstrap_servers))
        if address
    )
    try:
        report = read_lag(target)
    except KafkadiagError as error:
        sources.append(SourceStatus(SOURCE_LAG, named, False, error.message, error.help_text))
        return None, named
    sources.append(_lag_status(report, named))
    return report, named


def _lag_status(report: LagReport, named: str) -> SourceStatus:
    """What the lag read showed, each cause said once: an unreachable store is named with its
    cause and what to check, and the groups it may hold are "not read", neither counted nor
    called missing (their own errors only repeat the store's)."""
    from kafkadiag.collect.errors import (
        BrokerRefusedCredentialsError,
        BrokerUnreachableError,
        ZooKeeperUnreachableError,
    )
    from kafkadiag.lag.snapshot import REFUSED_CREDENTIALS, SOURCE_ZOOKEEPER

    read = [group for group in report.groups if group.exists is not None]
    unread = [group.group for group in report.groups if group.exists is None]
    missing = [group.group for group in report.groups if group.exists is False]
    problems = [*report.errors, *(error for group in read if group.exists for error in group.errors)]
    if unread:
        problems.append(f"group(s) not read: {', '.join(unread)}")
    if missing:
        problems.append(f"no such group: {', '.join(missing)}")
    if read:
        partitions = sum(len(group.partitions) for group in read)
        problems.insert(0, f"{len(read)} group(s), {partitions} partition(s)")
    helps = [
        (
            ZooKeeperUnreachableError
            if source == SOURCE_ZOOKEEPER
            else BrokerRefusedCredentialsError
            if REFUSED_CREDENTIALS in error
            else BrokerUnreachableError
        ).HELP_TEXT
        for source, error in dict(report.unreachable).items()
    ]
    return SourceStatus(SOURCE_LAG, named, not report.partial, "; ".join(problems), " ".join(helps))


# The files of one bundle named with why they were not read; the rest are counted. A directory
# of 100,000 empty files gave as many sources, each told twice in the table (over 3 minutes).
NAMED_UNREAD_FILES = 20


def _analyzed_dumps(
    options: DiagnoseOptions, sources: list[SourceStatus], watch: DumpWatch | None = None
) -> tuple[list[ThreadDump], Report | None]:
    """The dumps of the live processes and of the bundles, and their analysis (None without a
    dump), read as `dump analyze` reads them: what reading repaired is a caveat of the report."""
    from kafkadiag.app.analyze import analyze_dumps

    live = _live_dumps(options, sources)
    listed = [(bundle, _bundle_files(bundle, sources)) for bundle in options.bundles]
    files = [path for _, paths in listed for path in paths or ()]
    progress, analysing = (watch.update, watch.analysing) if watch is not None else (None, None)
    analysis = analyze_dumps(files, None, options.select, options.ignore, progress, live, analysing)
    reads = iter(analysis.read.files)
    for bundle, paths in listed:
        if paths is None:
            continue
        counted = unread = 0
        for read in (next(reads) for _ in paths):
            counted += read.dumps
            if read.error is not None:
                unread += 1
                if unread <= NAMED_UNREAD_FILES:
                    why = read.error
                    sources.append(SourceStatus(SOURCE_DUMP, read.path, False, why.message, why.help_text))
        if unread > NAMED_UNREAD_FILES:
            more = unread - NAMED_UNREAD_FILES
            why_not = f"`kafkadiag dump parse {bundle}` names each and why"
            sources.append(SourceStatus(SOURCE_DUMP, f"{more:,} more file(s) of {bundle}", False, why_not))
        named = "file" if os.path.isfile(bundle) else "bundle"  # --from takes a dump file as well
        sources.append(SourceStatus(SOURCE_DUMP, f"{named} {bundle}", bool(counted), f"{counted} dump(s)"))
    dumps = [*live, *analysis.read.dumps]
    return dumps, analysis.report if dumps else None


def _live_dumps(options: DiagnoseOptions, sources: list[SourceStatus]) -> list[ThreadDump]:
    dumps: list[ThreadDump] = []
    for pid in options.pids:
        try:
            live = take_dump(pid)
        except KafkadiagError as error:
            sources.append(SourceStatus(SOURCE_DUMP, f"pid {pid}", False, error.message, error.help_text))
            continue
        parsed = parsed_dumps(live)
        sources.append(
            SourceStatus(
                SOURCE_DUMP,
                f"pid {pid} ({live.tool})",
                True,
                f"{len(parsed[0].threads) if parsed else 0} threads",
            )
        )
        dumps.extend(parsed)
    return dumps


def _bundle_files(bundle: str, sources: list[SourceStatus]) -> tuple[str, ...] | None:
    """The dump files of a capture bundle (or the dump file itself); None when it names nothing.
    What the bundle refuses to read (a name outside it, a FIFO, a manifest that is not one) is a
    source not read, named, beside the dumps that were."""
    from kafkadiag.collect.bundle import read_bundle

    try:
        os.stat(bundle)
    except OSError as error:  # absent, a symlink loop, a directory this user may not enter
        why = error.strerror or str(error)
        sources.append(SourceStatus(SOURCE_DUMP, f"bundle {bundle}", False, why[:1].lower() + why[1:]))
        return None
    if not os.path.isdir(bundle):
        return (bundle,)
    contents = read_bundle(bundle)
    sources.extend(SourceStatus(SOURCE_DUMP, f"bundle {bundle}", False, why) for why in contents.refused)
    return contents.files


def _read_metrics(
    options: DiagnoseOptions, lag: LagReport | None, sources: list[SourceStatus]
) -> list[MetricsRead]:
    from kafkadiag.app.maxlag import compare_with_lag
    from kafkadiag.collect.live import JVM, runtime_of
    from kafkadiag.collect.metrics import MetricsSource

    wanted: list[tuple[str, MetricsSource]] = []
    for pid in options.pids:
        try:
            if runtime_of(pid)[0] != JVM:
                continue
        except KafkadiagError:
            continue  # already reported with the dump
        wanted.append((f"pid {pid}", MetricsSource(pid=pid, timeout_s=options.timeout_s)))
    for bundle in options.bundles:
        recorded = _recorded_metrics(bundle)
        if recorded is not None:
            wanted.append((f"bundle {bundle} (metrics.json)", MetricsSource(recorded=recorded)))
    from kafkadiag.collect.jmx.http import without_credentials

    for kind, value in (
        ("jmx", options.jmx),
        ("jolokia", options.jolokia),
        ("prometheus", options.prometheus),
    ):
        if value:
            settings: dict[str, Any] = {kind: value, "timeout_s": options.timeout_s}
            wanted.append((f"{kind} {without_credentials(value)}", MetricsSource(**settings)))
    if lag is None:
        for name, _ in wanted:
            if (options.pids and name.startswith("pid")) or name.startswith("bundle"):
                continue  # a dump was asked for; the metrics need the checker lag to mean anything
            sources.append(
                SourceStatus(SOURCE_METRICS, name, False, "needs --zookeeper/--bootstrap-server and --group")
            )
        return []
    reads = []
    for name, source in wanted:
        try:
            report = compare_with_lag(source, lag, expected_groups=[group.group for group in lag.groups])
        except KafkadiagError as error:
            sources.append(SourceStatus(SOURCE_METRICS, name, False, error.message, error.help_text))
            continue
        clients = ", ".join(f"{c.client_id}: {c.verdict}" for c in report.clients) or "no consumer client"
        sources.append(SourceStatus(SOURCE_METRICS, name, True, clients))
        reads.append(MetricsRead(name, report))
    return reads


def _recorded_metrics(bundle: str) -> str | None:
    """The metrics a capture bundle recorded beside its dumps, confined to the bundle."""
    if not os.path.isdir(bundle):
        return None
    from kafkadiag.collect.bundle import read_bundle

    return read_bundle(bundle).metrics


def _cluster_findings(
    context: DiagnosisContext, options: DiagnoseOptions
) -> tuple[list[Finding], list[Finding]]:
    from kafkadiag.rules.engine import selected_rules

    joined: list[Finding] = []
    cluster: list[Finding] = []
    for rule in selected_rules(options.select, options.ignore, scope=SCOPE_CLUSTER):
        try:
            found = list(rule.check(context))
        except Exception as error:  # noqa: BLE001 - a crashing rule must not hide the others
            found = [_crashed(rule.code, error)]
        (joined if rule.code.startswith("KD8") else cluster).extend(found)
    order = lambda finding: (-finding.severity.rank, finding.rule)  # noqa: E731
    return sorted(joined, key=order), sorted(cluster, key=order)


def _crashed(code: str, error: Exception) -> Finding:
    from kafkadiag.rules.registry import RuleCrashed

    return RuleCrashed().finding(
        f"rule {code} failed: {type(error).__name__}: {error}", (), [Evidence("kafkadiag", None, repr(error))]
    )


def severities_at_least(findings: Iterable[tuple[str, Finding]], threshold: Severity) -> Sequence[Finding]:
    return [finding for _, finding in findings if finding.severity.at_least(threshold)]
