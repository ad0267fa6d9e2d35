"""Read a consumer JVM's metrics over JMX: a local JVM by PID, or a remote JMX agent.

Local (--pid): no port is opened on the target by kafkadiag itself. The JDK's local management
agent is started in the target with `jcmd PID ManagementAgent.start_local` when it does not run
yet (it accepts local connections only and stays until the JVM exits; this is the one change
kafkadiag makes to a target, and `--no-start-agent` forbids it). Its address is read from the
JVM's performance counters (hsperfdata), as jconsole does, falling back to
`jcmd PID ManagementAgent.status`. Then the JMX client (jmxclient/JmxDump.java) reads attributes:
queryNames, getMBeanInfo and getAttributes only; no attribute is set, no operation invoked.

Before any jcmd call the PID is checked: it exists, it is a HotSpot JVM (attaching sends SIGQUIT,
which would terminate another kind of process), its user may be attached to, attach is enabled.

Remote (--jmx): `host:port` means service:jmx:rmi:///jndi/rmi://host:port/jmxrmi (what
-Dcom.sun.management.jmxremote.port opens); a full service:jmx: URL is used as given.
Credentials come from KAFKADIAG_JMX_USER / KAFKADIAG_JMX_PASSWORD.

What is returned is raw: MBeans with their names and attribute values, the JVM's relevant system
properties, fetcher thread names, and timings. `jmx.kafka` gives the names their Kafka meaning.
"""

from __future__ import annotations

import os
import pwd
import re
import subprocess
import time
from typing import Any

from kafkadiag.collect.jmx import perfdata as jmx_perfdata
from kafkadiag.collect.jmx.client import java_tool, run_client
from kafkadiag.collect.jmx.errors import (
    AttachDisabledError,
    JavaNotFoundError,
    JvmGoneError,
    JvmNotFoundError,
    JvmNotRespondingError,
    MetricsSourceError,
    MetricsSourceUsageError,
    NotAJvmError,
    OtherUserError,
)
from kafkadiag.collect.jmx.names import parse_object_name, split_key_properties
from kafkadiag.consumer_metrics import (
    SOURCE_JMX,
    SOURCE_PID,
    MBeanReading,
    MetricsReading,
)

# What kafkadiag reads. Kafka 0.8.2+ names (kafka.consumer:type=...,name=...,clientId=...), the
# quoted Kafka 0.8.0/0.8.1 names ("kafka.consumer":type="...",name="<clientId>-MaxLag"), and the
# new consumer's consumer-fetch-manager-metrics.
KAFKA_PATTERNS = (
    "kafka.consumer:type=ConsumerFetcherManager,*",
    "kafka.server:type=FetcherLagMetrics,*",
    "kafka.consumer:type=ZookeeperConsumerConnector,*",
    "kafka.consumer:type=ConsumerTopicMetrics,*",
    "kafka.consumer:type=consumer-fetch-manager-metrics,*",
    '"kafka.consumer":type="ConsumerFetcherManager",*',
    '"kafka.server":type="FetcherLagMetrics",*',
    '"kafka.consumer":type="ZookeeperConsumerConnector",*',
    '"kafka.consumer":type="ConsumerTopicMetrics",*',
)
# Yammer gauges have `Value`, meters `Count` and rates: asked for by name, one getAttributes call
# per MBean reads them (getMBeanInfo first would double the calls). The new consumer's
# consumer-fetch-manager-metrics has per-partition attribute names (T-P.records-lag), so all of its
# attributes are read.
YAMMER_ATTRIBUTES = ("Value", "Count", "OneMinuteRate", "MeanRate", "FiveMinuteRate", "FifteenMinuteRate")


def client_patterns() -> list[tuple[str, tuple[str, ...] | None]]:
    return [
        (pattern, None if "consumer-fetch-manager-metrics" in pattern else YAMMER_ATTRIBUTES)
        for pattern in KAFKA_PATTERNS
    ]


# The consumer settings that bound what it buffers, when the application passes them as -D
# system properties (old consumer, then new consumer names).
SETTING_PROPERTIES = (
    "group.id",
    "client.id",
    "queued.max.message.chunks",
    "fetch.message.max.bytes",
    "auto.commit.enable",
    "auto.commit.interval.ms",
    "num.consumer.fetchers",
    "enable.auto.commit",
    "max.partition.fetch.bytes",
    "max.poll.records",
)
# Old consumer fetcher threads: ConsumerFetcherThread-<consumerId>-<fetcherId>-<brokerId>.
FETCHER_THREAD_PREFIX = "ConsumerFetcherThread-"

_JCMD_NO_SUCH_PROCESS = re.compile(r"No such process|AttachNotSupportedException: Unable to find")


def reading_from_client(document: dict[str, Any]) -> list[MBeanReading]:
    beans = []
    for bean in document.get("beans", ()):
        properties = split_key_properties(bean.get("key_properties", ""))
        if not properties:
            _, properties = parse_object_name(bean["name"])
        beans.append(
            MBeanReading(
                name=bean["name"],
                domain=parse_object_name(bean["name"])[0],
                properties=tuple(properties),
                attributes=tuple(sorted(bean.get("attributes", {}).items())),
                errors=tuple(sorted(bean.get("errors", {}).items())),
            )
        )
    return beans


# ---- local JVM by PID -----------------------------------------------------------------------


def _process_user(pid: int) -> tuple[int, str]:
    try:
        uid = os.stat(f"/proc/{pid}").st_uid
    except FileNotFoundError:
        raise JvmNotFoundError(f"no process with PID {pid}") from None
    try:
        return uid, pwd.getpwuid(uid).pw_name
    except KeyError:
        return uid, str(uid)


def check_attachable(pid: int) -> str:
    """The JVM's user name, after making sure kafkadiag may and can attach to `pid`."""
    if pid <= 0:
        raise MetricsSourceUsageError(f"--pid must be a process id, not {pid}")
    uid, user = _process_user(pid)
    me = os.geteuid()
    if uid != me and me != 0:
        raise OtherUserError(
            f"PID {pid} runs as user {user}, kafkadiag as {pwd.getpwuid(me).pw_name}: "
            "a JVM accepts attach requests from its own user only"
        )
    try:
        with open(f"/proc/{pid}/maps", encoding="utf-8", errors="replace") as maps:
            is_jvm = any("libjvm.so" in line for line in maps)
    except FileNotFoundError:
        raise JvmNotFoundError(f"no process with PID {pid}") from None
    except PermissionError:
        raise OtherUserError(f"cannot inspect PID {pid} (user {user}): permission denied") from None
    if not is_jvm:
        raise NotAJvmError(f"PID {pid} is not a HotSpot JVM (no libjvm.so in /proc/{pid}/maps)")
    return user


def _attach_enabled(pid: int, user: str) -> bool | None:
    """From the perf counters: sun.rt.jvmCapabilities starts with 1 when attach is supported."""
    for path in jmx_perfdata.perfdata_paths(pid, user):
        try:
            capabilities = jmx_perfdata.read_counters(path).get("sun.rt.jvmCapabilities")
        except (OSError, ValueError):
            continue
        if isinstance(capabilities, str) and capabilities:
            return capabilities[0] == "1"
    return None


def _jcmd(pid: int, command: str, timeout_s: float) -> str:
    jcmd = java_tool("jcmd")
    if jcmd is None:
        raise JavaNotFoundError("no jcmd found on PATH or in $JAVA_HOME/bin (--pid needs a JDK)")
    try:
        completed = subprocess.run(
            [jcmd, str(pid), command], capture_output=True, timeout=max(timeout_s, 1.0), check=False
        )
    except subprocess.TimeoutExpired:
        _raise_if_gone(pid)
        raise JvmNotRespondingError(
            f"PID {pid} did not answer `jcmd {pid} {command}` within {max(timeout_s, 1.0):g}s"
        ) from None
    output = (completed.stdout + completed.stderr).decode("utf-8", "replace")
    if completed.returncode == 0:
        return output
    _raise_if_gone(pid)
    if "does not support the attach mechanism" in output:
        raise AttachDisabledError(f"PID {pid}: attach is disabled (-XX:+DisableAttachMechanism)")
    if _JCMD_NO_SUCH_PROCESS.search(output):
        raise JvmGoneError(f"PID {pid} exited before kafkadiag could attach")
    if "Permission denied" in output or "Operation not permitted" in output:
        raise OtherUserError(f"PID {pid}: attach refused: {_last_line(output)}")
    if "doesn't respond" in output or "not responding" in output:
        raise JvmNotRespondingError(f"PID {pid} did not answer the attach request: {_last_line(output)}")
    raise MetricsSourceError(
        f"`jcmd {pid} {command}` failed: {_last_line(output)}",
        help_text="Run the same jcmd command by hand to see the whole message.",
    )


def _last_line(text: str) -> str:
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    # jcmd prints a Java stack trace; its first line names the exception.
    for line in lines:
        if "Exception" in line and not line.startswith("at "):
            return line
    return lines[-1] if lines else "(no output)"


def _raise_if_gone(pid: int) -> None:
    if not os.path.exists(f"/proc/{pid}"):
        raise JvmGoneError(f"PID {pid} exited while kafkadiag was reading it")


def local_connector_address(pid: int, timeout_s: float, start_agent: bool = True) -> tuple[str, list[str]]:
    """The local JMX connector address of `pid`, starting the local agent when needed and allowed."""
    user = check_attachable(pid)
    notes: list[str] = []
    address = jmx_perfdata.connector_address(pid, user)
    if address is not None:
        notes.append(
            "the JVM's local JMX connector was already running (address read from its perf counters)"
        )
        return address, notes
    if not start_agent:
        raise MetricsSourceError(
            f"PID {pid} runs no local JMX connector and --no-start-agent forbids starting one",
            help_text="Leave out --no-start-agent (kafkadiag then runs "
            "`jcmd PID ManagementAgent.start_local`), or start the JVM with -Dcom.sun.management.jmxremote.",
        )
    if _attach_enabled(pid, user) is False:
        raise AttachDisabledError(f"PID {pid}: attach is disabled (-XX:+DisableAttachMechanism)")
    _jcmd(pid, "ManagementAgent.start_local", timeout_s)
    notes.append(
        f"started the JDK's local management agent in PID {pid} with "
        f"`jcmd {pid} ManagementAgent.start_local` (local connections only; it runs until the JVM exits)"
    )
    address = jmx_perfdata.connector_address(pid, user)
    if address is None:
        # No perf counters (-XX:-UsePerfData): ask the agent itself.
        status = _jcmd(pid, "ManagementAgent.status", timeout_s)
        match = re.search(r"^\s*URL\s*:\s*(service:jmx:\S+)", status, re.MULTILINE)
        if match is None:
            raise MetricsSourceError(
                f"PID {pid}: the local management agent started but reports no connector address",
                help_text=f"Run `jcmd {pid} ManagementAgent.status` to see what the agent reports.",
            )
        address = match.group(1)
    return address, notes


def read_local_jvm(pid: int, timeout_s: float = 10.0, start_agent: bool = True) -> MetricsReading:
    read_at_ms = int(time.time() * 1000)
    started = time.monotonic()
    address, notes = local_connector_address(pid, timeout_s, start_agent)
    attach_ms = (time.monotonic() - started) * 1000
    try:
        run = run_client(
            address,
            client_patterns(),
            list(SETTING_PROPERTIES),
            [FETCHER_THREAD_PREFIX],
            timeout_s,
            describe=f"PID {pid}",
        )
    except MetricsSourceError:
        _raise_if_gone(pid)
        raise
    return _reading(
        SOURCE_PID, f"pid {pid}", read_at_ms, started, run.document, notes, attach_ms, run.wall_ms
    )


# ---- remote JMX -----------------------------------------------------------------------------


def jmx_service_url(target: str) -> str:
    """host:port -> the RMI registry URL of -Dcom.sun.management.jmxremote.port; URLs unchanged."""
    target = target.strip()
    if target.startswith("service:jmx:"):
        return target
    match = re.fullmatch(r"\[?([^\[\]]+?)\]?:(\d{1,5})", target)
    if match is None:
        raise MetricsSourceUsageError(f"--jmx takes host:port or a service:jmx: URL, not {target!r}")
    host, port = match.group(1), match.group(2)
    if ":" in host:
        host = f"[{host}]"
    return f"service:jmx:rmi:///jndi/rmi://{host}:{port}/jmxrmi"


def read_remote_jmx(target: str, timeout_s: float = 10.0) -> MetricsReading:
    url = jmx_service_url(target)
    read_at_ms = int(time.time() * 1000)
    started = time.monotonic()
    run = run_client(
        url,
        client_patterns(),
        list(SETTING_PROPERTIES),
        [FETCHER_THREAD_PREFIX],
        timeout_s,
        describe=f"JMX {target}",
    )
    return _reading(SOURCE_JMX, url, read_at_ms, started, run.document, [], None, run.wall_ms)


def _reading(
    kind: str,
    source: str,
    read_at_ms: int,
    started: float,
    document: dict[str, Any],
    notes: list[str],
    attach_ms: float | None,
    client_ms: float,
) -> MetricsReading:
    timings = []
    if attach_ms is not None:
        timings.append(("attach_ms", round(attach_ms, 3)))
    timings += [
        ("client_ms", round(client_ms, 3)),
        ("connect_ms", round(float(document.get("connect_ms", 0.0)), 3)),
        ("read_ms", round(float(document.get("read_ms", 0.0)), 3)),
    ]
    return MetricsReading(
        source_kind=kind,
        source=source,
        read_at_ms=read_at_ms,
        duration_ms=round((time.monotonic() - started) * 1000, 3),
        beans=tuple(reading_from_client(document)),
        system_properties=tuple(sorted(document.get("system_properties", {}).items())),
        threads=tuple((thread["name"], thread.get("state", "")) for thread in document.get("threads", ())),
        vm=tuple(sorted((document.get("vm") or {}).items())),
        notes=tuple(notes) + tuple(document.get("notes", ())),
        timings=tuple(timings),
    )
