"""`kafkadiag maxlag`: the consumer's own fetcher metrics against the checker's lag.

read the metrics (one source) -> per-client metrics and settings -> checker lag from the lag
engine (when a cluster is named) -> comparison -> reporter -> exit code.

Exit codes: 0 every client healthy; 1 a client is unhealthy (even if something else could not be
read); 3 the metrics could not be read, or nothing is unhealthy but an input the comparison needs
is missing (checker lag unreadable, group not found).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, TextIO

from kafkadiag.collect.jmx.errors import MetricsSourceUsageError
from kafkadiag.collect.jmx.jvm import (
    SOURCE_JMX,
    SOURCE_JOLOKIA,
    SOURCE_PID,
    SOURCE_PROMETHEUS,
    MetricsReading,
)
from kafkadiag.collect.zookeeper.security import NO_SECURITY, ZooKeeperSecurity
from kafkadiag.errors import InputUnreadableError, UsageError
from kafkadiag.exitcodes import ExitCode
from kafkadiag.maxlag.model import MaxLagReport
from kafkadiag.report.output import report_stream

FORMATS = ("table", "json", "prometheus")


@dataclass(frozen=True)
class MetricsSource:
    """Exactly one of: a local PID, a remote JMX target, a Jolokia URL, a Prometheus URL or file,
    or a reading `kafkadiag capture` recorded (a bundle's metrics.json)."""

    pid: int | None = None
    jmx: str | None = None
    jolokia: str | None = None
    prometheus: str | None = None
    recorded: str | None = None
    start_agent: bool = True
    timeout_s: float = 10.0

    def kind(self) -> str:
        given = [
            kind
            for kind, value in (
                (SOURCE_PID, self.pid),
                (SOURCE_JMX, self.jmx),
                (SOURCE_JOLOKIA, self.jolokia),
                (SOURCE_PROMETHEUS, self.prometheus),
                (SOURCE_RECORDED, self.recorded),
            )
            if value is not None
        ]
        if len(given) != 1:
            raise MetricsSourceUsageError(
                "name exactly one metrics source"
                + (f" (got {', '.join('--' + k for k in given)})" if given else "")
            )
        if self.timeout_s <= 0:
            raise UsageError("--timeout must be positive")
        # The cheap checks of each source's syntax, before anything is read anywhere.
        if self.pid is not None and self.pid <= 0:
            raise MetricsSourceUsageError(f"--pid must be a process id, not {self.pid}")
        if self.jmx is not None:
            from kafkadiag.collect.jmx.jvm import jmx_service_url

            jmx_service_url(self.jmx)
        if self.jolokia is not None and not self.jolokia.startswith(("http://", "https://")):
            from kafkadiag.collect.jmx.http import without_credentials

            shown = without_credentials(self.jolokia)
            raise MetricsSourceUsageError(f"--jolokia takes an http(s) URL, not {shown!r}")
        return given[0]


@dataclass(frozen=True)
class CheckerTarget:
    """Where the checker lag comes from: the lag engine's connection options."""

    bootstrap_servers: str | None = None
    zookeeper: str | None = None
    command_config: str | None = None
    groups: tuple[str, ...] = ()
    all_groups: bool = False
    topics: tuple[str, ...] = ()
    timeout_s: float = 10.0
    zookeeper_security: ZooKeeperSecurity = NO_SECURITY

    @property
    def requested(self) -> bool:
        return bool(self.bootstrap_servers or self.zookeeper)


@dataclass(frozen=True)
class MaxLagOptions:
    source: MetricsSource
    checker: CheckerTarget = field(default_factory=CheckerTarget)
    consumer_config: str | None = None
    client_ids: tuple[str, ...] = ()
    lag_threshold: int | None = None


# A recorded reading keeps the kind of the source it was read from (pid, jmx ...).
SOURCE_RECORDED = "recorded"


def read_metrics(source: MetricsSource) -> MetricsReading:
    kind = source.kind()
    if kind == SOURCE_RECORDED:
        from kafkadiag.collect.jmx.recorded import read_recorded_metrics

        assert source.recorded is not None
        return read_recorded_metrics(source.recorded)
    if kind == SOURCE_PID:
        from kafkadiag.collect.jmx.jvm import read_local_jvm

        assert source.pid is not None
        return read_local_jvm(source.pid, source.timeout_s, source.start_agent)
    if kind == SOURCE_JMX:
        from kafkadiag.collect.jmx.jvm import read_remote_jmx

        assert source.jmx is not None
        return read_remote_jmx(source.jmx, source.timeout_s)
    if kind == SOURCE_JOLOKIA:
        from kafkadiag.collect.jmx.jolokia import read_jolokia

        assert source.jolokia is not None
        return read_jolokia(source.jolokia, source.timeout_s)
    from kafkadiag.collect.jmx.prometheus import read_prometheus

    assert source.prometheus is not None
    return read_prometheus(source.prometheus, source.timeout_s)


def _consumer_config(path: str | None) -> dict[str, str] | None:
    if path is None:
        return None
    from kafkadiag.collect.config import parse_properties

    try:
        with open(path, encoding="utf-8") as handle:
            return parse_properties(handle.read())
    except OSError as error:
        raise InputUnreadableError(
            f"cannot read --consumer-config {path}: {error.strerror or error}",
            help_text="Pass the consumer's properties file (queued.max.message.chunks, "
            "fetch.message.max.bytes, auto.commit.interval.ms ...), readable by this user.",
        ) from None


def read_checker_lag(checker: CheckerTarget, groups: Sequence[str]) -> tuple[Any, list[str]]:
    """The lag engine's report for `groups`, or (None, [why not])."""
    from kafkadiag.collect.config import kafka_python_config, read_command_config
    from kafkadiag.collect.gather import Collector, LagTarget
    from kafkadiag.console import report_error
    from kafkadiag.lag.compute import compute_lag

    if not groups and not checker.all_groups:
        return None, ["no group to read checker lag for: name it with --group"]
    client_config: dict[str, Any] = {}
    if checker.command_config:
        client_config, notes = kafka_python_config(read_command_config(checker.command_config))
        for note in notes:
            print(f"kafkadiag: note: {note}", file=sys.stderr)
    target = LagTarget(
        bootstrap_servers=checker.bootstrap_servers or None,
        zookeeper=checker.zookeeper or None,
        zookeeper_security=checker.zookeeper_security,
        client_config=client_config,
        groups=() if checker.all_groups else tuple(dict.fromkeys(groups)),
        all_groups=checker.all_groups,
        topics=checker.topics,
        timeout_s=checker.timeout_s,
    )
    try:
        with Collector(target) as collector:
            snapshot = collector.snapshot()
    except InputUnreadableError as error:
        report_error(error)
        return None, [f"checker lag not read: {error.message}"]
    return compute_lag(snapshot), []


def build_report(options: MaxLagOptions, reading: MetricsReading) -> MaxLagReport:
    from kafkadiag.collect.jmx.kafka import consumer_settings, extract_clients
    from kafkadiag.maxlag.compare import compare

    clients = extract_clients(reading)
    if options.client_ids:
        clients = [client for client in clients if client.client_id in options.client_ids]
    config = _consumer_config(options.consumer_config)
    system_properties = dict(reading.system_properties)
    settings_of = {
        client.client_id: consumer_settings(
            client.consumer, system_properties, config, options.consumer_config
        )
        for client in clients
    }
    settings_of["*"] = consumer_settings("old", system_properties, config, options.consumer_config)
    lag_report = None
    errors: list[str] = []
    checker = options.checker
    if checker.requested:
        # client.id defaults to group.id: without --group, read the groups named like the clients.
        groups = list(checker.groups) or [client.client_id for client in clients] or list(options.client_ids)
        lag_report, errors = read_checker_lag(checker, groups)
    thread_names_read = reading.source_kind in (SOURCE_PID, SOURCE_JMX) and not any(
        "thread names not read" in note for note in reading.notes
    )
    return compare(
        clients,
        settings_of,
        lag_report,
        options.lag_threshold,
        thread_names_read=thread_names_read,
        checker_requested=checker.requested,
        expected_clients=options.client_ids
        or (() if clients else tuple(checker.groups) or ("(none found)",)),
        metrics_source_kind=reading.source_kind,
        metrics_source=reading.source,
        taken_at_ms=reading.read_at_ms,
        notes=reading.notes,
        errors=errors,
        timings=reading.timings,
    )


def compare_with_lag(
    source: MetricsSource,
    lag_report: Any,
    consumer_config: str | None = None,
    lag_threshold: int | None = None,
    expected_groups: Sequence[str] = (),
) -> MaxLagReport:
    """The comparison against a lag report already computed (no second read of ZooKeeper or the
    brokers): what `kafkadiag lag --pid/--jmx/--jolokia/--prometheus` adds to its report. When the
    metrics hold no consumer client at all, `expected_groups` are reported absent (client.id
    defaults to group.id), as `kafkadiag maxlag --group` does."""
    from kafkadiag.collect.jmx.kafka import consumer_settings, extract_clients
    from kafkadiag.maxlag.compare import compare

    reading = read_metrics(source)
    clients = extract_clients(reading)
    config = _consumer_config(consumer_config)
    system_properties = dict(reading.system_properties)
    settings_of = {
        client.client_id: consumer_settings(client.consumer, system_properties, config, consumer_config)
        for client in clients
    }
    return compare(
        clients,
        settings_of,
        lag_report,
        lag_threshold,
        thread_names_read=reading.source_kind in (SOURCE_PID, SOURCE_JMX)
        and not any("thread names not read" in note for note in reading.notes),
        expected_clients=() if clients else tuple(expected_groups),
        metrics_source_kind=reading.source_kind,
        metrics_source=reading.source,
        taken_at_ms=reading.read_at_ms,
        notes=reading.notes,
        timings=reading.timings,
    )


def write_report(stream: TextIO, report: MaxLagReport, output_format: str) -> None:
    if output_format == "json":
        from kafkadiag.report.maxlag_json import write_json

        write_json(stream, report)
    elif output_format == "prometheus":
        from kafkadiag.report.maxlag_prometheus import write_prometheus

        write_prometheus(stream, report)
    else:
        from kafkadiag.report.maxlag_table import render_maxlag

        render_maxlag(stream, report)


def exit_code_of(report: MaxLagReport) -> int:
    if report.unhealthy:
        return int(ExitCode.FINDINGS)
    if report.incomplete:
        return int(ExitCode.INPUT_UNREADABLE)
    return int(ExitCode.OK)


def run_maxlag(options: MaxLagOptions, output_format: str, output: str | None) -> int:
    if output_format not in FORMATS:
        raise UsageError(f"--format must be one of {', '.join(FORMATS)}")
    if options.lag_threshold is not None and options.lag_threshold < 0:
        raise UsageError("--lag-threshold must not be negative")
    started = time.monotonic()
    reading = read_metrics(options.source)
    for note in reading.notes:
        print(f"kafkadiag: note: {note}", file=sys.stderr)
    report = build_report(options, reading)
    report = _with_timing(report, "total_ms", (time.monotonic() - started) * 1000)
    with report_stream(output, output_format) as stream:
        write_report(stream, report, output_format)
    code = exit_code_of(report)
    if code == ExitCode.INPUT_UNREADABLE:
        from kafkadiag.console import report_error

        missing = [client.client_id for client in report.clients if not client.complete]
        report_error(
            InputUnreadableError(
                "the comparison is incomplete"
                + (f" for client(s) {', '.join(missing)}" if missing else "")
                + (": " + "; ".join(report.errors) if report.errors else ""),
                help_text="Check --zookeeper/--bootstrap-server and --group (the notes in the report say "
                "what is missing); raise --timeout on slow networks.",
            )
        )
    return code


def _with_timing(report: MaxLagReport, name: str, value: float) -> MaxLagReport:
    import dataclasses

    return dataclasses.replace(report, timings=(*report.timings, (name, round(value, 3))))
