"""The consumer's fetcher metrics against the checker's lag: `kafkadiag maxlag`, the fetcher
columns of `kafkadiag lag` and the metrics of `kafkadiag diagnose` all compare here.

read the metrics (one source) -> per-client metrics and settings -> checker lag from the lag
engine (when a cluster is named) -> comparison (kafkadiag.maxlag.compare).
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass, field, replace

from kafkadiag.collect.metrics import MetricsSource, read_consumer_config, read_metrics
from kafkadiag.collect.zookeeper.security import NO_SECURITY, ZooKeeperSecurity
from kafkadiag.consumer_metrics import SOURCE_JMX, SOURCE_PID, MetricsReading
from kafkadiag.errors import InputUnreadableError, KafkadiagError, UsageError
from kafkadiag.lag.model import LagReport
from kafkadiag.maxlag.model import MaxLagReport


@dataclass(frozen=True)
class CheckerTarget:
    """Where the checker lag comes from: the lag engine's connection options as given. The groups
    may be known only once the metrics are read (client.id defaults to group.id), so the LagTarget
    is built then, by collect.gather.build_lag_target as for `lag`."""

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


@dataclass(frozen=True)
class MaxLagRun:
    report: MaxLagReport
    notes: tuple[str, ...] = ()  # what reading the sources noted, for stderr
    problems: tuple[KafkadiagError, ...] = ()  # what could not be read; the report says what it lacks


def maxlag(options: MaxLagOptions) -> MaxLagRun:
    """Read the metrics and, when a cluster is named, the checker lag; compare them."""
    if options.lag_threshold is not None and options.lag_threshold < 0:
        raise UsageError("--lag-threshold must not be negative")
    started = time.monotonic()
    reading = read_metrics(options.source)
    notes = list(reading.notes)
    problems: list[KafkadiagError] = []
    report = _compared(options, reading, notes, problems)
    total_ms = round((time.monotonic() - started) * 1000, 3)
    report = replace(report, timings=(*report.timings, ("total_ms", total_ms)))
    return MaxLagRun(report, tuple(notes), tuple(problems))


def _compared(
    options: MaxLagOptions, reading: MetricsReading, notes: list[str], problems: list[KafkadiagError]
) -> MaxLagReport:
    from kafkadiag.collect.jmx.kafka import extract_clients
    from kafkadiag.consumer_metrics import consumer_settings
    from kafkadiag.maxlag.compare import compare

    clients = extract_clients(reading)
    if options.client_ids:
        clients = [client for client in clients if client.client_id in options.client_ids]
    config = read_consumer_config(options.consumer_config)
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
        lag_report, errors = read_checker_lag(checker, groups, notes, problems)
    return compare(
        clients,
        settings_of,
        lag_report,
        options.lag_threshold,
        thread_names_read=_thread_names_read(reading),
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


def _thread_names_read(reading: MetricsReading) -> bool:
    """Only a JVM read over JMX lists its threads, and only when the listing did not fail."""
    return reading.source_kind in (SOURCE_PID, SOURCE_JMX) and not any(
        "thread names not read" in note for note in reading.notes
    )


def read_checker_lag(
    checker: CheckerTarget, groups: Sequence[str], notes: list[str], problems: list[KafkadiagError]
) -> tuple[LagReport | None, list[str]]:
    """The lag engine's report for `groups`, or (None, [why not]); what the client settings
    noted goes to `notes`, a cluster that could not be read to `problems`."""
    from kafkadiag.app.lag import read_lag
    from kafkadiag.collect.gather import build_lag_target

    if not groups and not checker.all_groups:
        return None, ["no group to read checker lag for: name it with --group"]
    target, config_notes = build_lag_target(
        checker.bootstrap_servers,
        checker.zookeeper,
        checker.command_config,
        () if checker.all_groups else tuple(dict.fromkeys(groups)),
        checker.all_groups,
        checker.topics,
        checker.timeout_s,
        checker.zookeeper_security,
    )
    notes.extend(config_notes)
    try:
        return read_lag(target), []
    except InputUnreadableError as error:
        problems.append(error)
        return None, [f"checker lag not read: {error.message}"]


def compare_with_lag(
    source: MetricsSource,
    lag_report: LagReport | None,
    consumer_config: str | None = None,
    lag_threshold: int | None = None,
    expected_groups: Sequence[str] = (),
) -> MaxLagReport:
    """The comparison against a lag report already computed (no second read of ZooKeeper or the
    brokers): what `kafkadiag lag --pid/--jmx/--jolokia/--prometheus` adds to its report. When the
    metrics hold no consumer client at all, `expected_groups` are reported absent (client.id
    defaults to group.id), as `kafkadiag maxlag --group` does."""
    from kafkadiag.collect.jmx.kafka import extract_clients
    from kafkadiag.consumer_metrics import consumer_settings
    from kafkadiag.maxlag.compare import compare

    reading = read_metrics(source)
    clients = extract_clients(reading)
    config = read_consumer_config(consumer_config)
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
        thread_names_read=_thread_names_read(reading),
        expected_clients=() if clients else tuple(expected_groups),
        metrics_source_kind=reading.source_kind,
        metrics_source=reading.source,
        taken_at_ms=reading.read_at_ms,
        notes=reading.notes,
        timings=reading.timings,
    )
