"""Where the consumer's own metrics come from (a local JVM by pid, remote JMX, Jolokia, a
Prometheus exporter, or the reading a capture bundle recorded), and reading them: for `maxlag`,
the fetcher columns of `lag`, and `diagnose`."""

from __future__ import annotations

from dataclasses import dataclass

from kafkadiag.collect.jmx.errors import MetricsSourceUsageError
from kafkadiag.consumer_metrics import (
    SOURCE_JMX,
    SOURCE_JOLOKIA,
    SOURCE_PID,
    SOURCE_PROMETHEUS,
    MetricsReading,
)
from kafkadiag.errors import InputUnreadableError, UsageError

# A recorded reading keeps the kind of the source it was read from (pid, jmx ...).
SOURCE_RECORDED = "recorded"


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


def read_consumer_config(path: str | None) -> dict[str, str] | None:
    if path is None:
        return None
    from kafkadiag.collect.config import parse_properties
    from kafkadiag.collect.optionfile import OptionFileError, read_option_text

    try:
        return parse_properties(read_option_text(path))
    except OptionFileError as error:
        raise InputUnreadableError(
            f"cannot read --consumer-config {path}: {error}",
            help_text="Pass the consumer's properties file (queued.max.message.chunks, "
            "fetch.message.max.bytes, auto.commit.interval.ms ...), readable by this user.",
        ) from None
