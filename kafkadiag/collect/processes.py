"""Kafka consumer processes on this host, found with psutil without touching them: command lines,
`-D` properties, the config files they name, shared libraries they mapped, and (for JVMs whose fat
jar hides the classpath) their threads' names in /proc/PID/task/*/comm.

A ZooKeeper server or a Kafka broker is not a consumer and is not listed.
"""

from __future__ import annotations

import os
import re
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

# On the command line or classpath of a JVM that runs a Kafka client, and what kind it suggests.
JVM_CLIENT_MARKERS = (
    (re.compile(r"kafka-streams|org\.apache\.kafka\.streams"), "kafka-streams"),
    (re.compile(r"spring-kafka|org\.springframework\.kafka"), "spring-kafka"),
    (re.compile(r"flink-connector-kafka|flink-sql-connector-kafka"), "flink"),
    (re.compile(r"storm-kafka"), "storm"),
    # A jar's name ends at the classpath's next separator (else the match runs to the last jar).
    (re.compile(r"kafka-clients[-_][\d.]+[^\s:;]*?\.jar|org\.apache\.kafka\.clients"), "new-consumer"),
    (re.compile(r"kafka_2\.\d+-[\d.]+[^\s:;]*?\.jar|kafka\.consumer\.|kafka\.javaapi"), "old-consumer"),
)
# Thread names (15 characters in comm) that only a consumer's JVM has.
JVM_THREAD_MARKERS = (
    (re.compile(r"^ConsumerFetcher|leader-finder|^kafka-consumer-"), "old-consumer"),
    (re.compile(r"^kafka-coordinat|^kafka-coordinator|^kafka-producer-"), "new-consumer"),
    (re.compile(r"StreamThread|-StreamThread-"), "kafka-streams"),
)
# Main classes of the servers: never listed.
SERVER_MAIN_CLASSES = re.compile(
    r"(^|\s)(kafka\.Kafka|org\.apache\.zookeeper\.server\.[\w.]+|kafka\.tools\.\w+Server)(\s|$)"
)
PYTHON_MARKERS = (
    (re.compile(r"librdkafka|confluent_kafka|confluent-kafka"), "confluent-kafka"),
    (re.compile(r"aiokafka"), "aiokafka"),
)
# kafkadiag itself (this command, and any other kafkadiag command running) is not a consumer.
_KAFKADIAG_COMMAND = re.compile(r"(^|/)kafkadiag(\s|$)|-m kafkadiag(\s|$)")
_ID_PATTERNS = {
    "group": re.compile(r"(?:^|[\s=])(?:-Dgroup\.id=|group\.id=|--group[= ]|--group-id[= ]|-g )([^\s,]+)"),
    "client": re.compile(r"(?:^|[\s=])(?:-Dclient\.id=|client\.id=|--client-id[= ])([^\s,]+)"),
}
_CONFIG_FILE = re.compile(r"[^\s=]+\.(?:properties|conf|cfg|ini|yaml|yml)$")
CONFIG_FILE_LIMIT = 256 * 1024


@dataclass(frozen=True)
class ConsumerProcess:
    pid: int
    user: str | None
    command: str
    runtime: str  # jvm | python
    kind: str  # old-consumer, new-consumer, kafka-streams, spring-kafka, flink, storm, confluent-kafka ...
    threads: int
    cpu_s: float
    rss_bytes: int
    uptime_s: float
    groups: tuple[str, ...] = ()
    client_ids: tuple[str, ...] = ()
    evidence: tuple[str, ...] = field(default=())


def find_consumers() -> list[ConsumerProcess]:
    import psutil

    found = []
    now = time.time()
    attrs = ["pid", "name", "username", "cmdline", "num_threads", "cpu_times", "memory_info", "create_time"]
    for process in psutil.process_iter(attrs):
        info = process.info
        cmdline = info.get("cmdline") or []
        if not cmdline:
            continue
        runtime = _runtime(info.get("name") or "", cmdline)
        if runtime is None:
            continue
        command = " ".join(cmdline)
        if info["pid"] == os.getpid() or _KAFKADIAG_COMMAND.search(command):
            continue
        if runtime == "jvm":
            kind, evidence = _jvm_kind(info["pid"], command)
        else:
            kind, evidence = _python_kind(info["pid"], cmdline)
        if kind is None:
            continue
        groups, clients = _ids(command, cmdline)
        cpu = info.get("cpu_times")
        memory = info.get("memory_info")
        found.append(
            ConsumerProcess(
                pid=info["pid"],
                user=info.get("username"),
                command=command,
                runtime=runtime,
                kind=kind,
                threads=info.get("num_threads") or 0,
                cpu_s=(cpu.user + cpu.system) if cpu else 0.0,
                rss_bytes=memory.rss if memory else 0,
                uptime_s=max(now - (info.get("create_time") or now), 0.0),
                groups=groups,
                client_ids=clients,
                evidence=tuple(evidence),
            )
        )
    return sorted(found, key=lambda consumer: consumer.pid)


def _runtime(name: str, cmdline: list[str]) -> str | None:
    executable = os.path.basename(cmdline[0]).lower()
    if executable.startswith("java") or name.lower() == "java":
        return "jvm"
    if executable.startswith("python") or name.lower().startswith("python"):
        return "python"
    return None


def _jvm_kind(pid: int, command: str) -> tuple[str | None, list[str]]:
    if SERVER_MAIN_CLASSES.search(command):
        return None, []
    found = [(kind, match.group(0)) for kind, match in _client_markers(command)]
    if {kind for kind, _ in found} == {"old-consumer", "new-consumer"}:
        # Kafka's core jar (kafka_2.x, 0.8.2 to 1.1) depends on kafka-clients, so a real old
        # consumer's classpath holds both: its threads tell which consumer runs, and the core jar
        # without any consumer thread yet still means the old one.
        (core,) = [text for kind, text in found if kind == "old-consumer"]
        evidence = [f"command line: {core}"]
        thread = _thread_marker(pid)
        if thread is not None:
            return thread[0], [*evidence, f"thread: {thread[1]}"]
        return "old-consumer", evidence
    if found:
        kind, text = found[0]
        return kind, [f"command line: {text}"]
    thread = _thread_marker(pid)
    if thread is not None:
        return thread[0], [f"thread: {thread[1]}"]
    return None, []


def _client_markers(command: str) -> Iterator[tuple[str, re.Match[str]]]:
    for pattern, kind in JVM_CLIENT_MARKERS:
        match = pattern.search(command)
        if match:
            yield kind, match


def _thread_marker(pid: int) -> tuple[str, str] | None:
    """(kind, thread name) of the first thread whose name only a consumer's JVM has."""
    for name in _thread_names(pid):
        for pattern, kind in JVM_THREAD_MARKERS:
            if pattern.search(name):
                return kind, name
    return None


def _thread_names(pid: int) -> Iterator[str]:
    """/proc/PID/task/*/comm: readable for other users' processes too, and the only trace of the
    consumer a fat jar leaves."""
    try:
        tasks = os.listdir(f"/proc/{pid}/task")
    except OSError:
        return
    for task in tasks:
        try:
            with open(f"/proc/{pid}/task/{task}/comm", encoding="utf-8", errors="replace") as handle:
                yield handle.read().strip()
        except OSError:
            continue


def _python_kind(pid: int, cmdline: list[str]) -> tuple[str | None, list[str]]:
    """confluent-kafka and aiokafka by the libraries they mapped; kafka-python, which maps none,
    by the program the interpreter runs (kafkadiag.collect.pyprogram)."""
    from kafkadiag.collect.pyprogram import is_test_runner, kafka_python_trace, program_of

    libraries = _mapped_libraries(pid)
    for pattern, kind in PYTHON_MARKERS:
        for library in libraries:
            if pattern.search(library):
                return kind, [f"mapped: {library}"]
    command = " ".join(cmdline).lower()
    if not is_test_runner(program_of(cmdline)):
        for pattern, kind in PYTHON_MARKERS:
            match = pattern.search(command)
            if match:
                return kind, [f"command line: {match.group(0)}"]
    trace = kafka_python_trace(cmdline, _cwd(pid))
    return ("kafka-python", [trace]) if trace else (None, [])


def _cwd(pid: int) -> str:
    try:
        return os.readlink(f"/proc/{pid}/cwd")
    except OSError:
        return ""


def _mapped_libraries(pid: int) -> set[str]:
    """Shared objects in /proc/PID/maps (confluent-kafka's librdkafka, aiokafka's extensions);
    empty when this user may not read them."""
    libraries: set[str] = set()
    try:
        with open(f"/proc/{pid}/maps", encoding="utf-8", errors="replace") as handle:
            for line in handle:
                if ".so" in line:
                    libraries.add(line.rsplit(" ", 1)[-1].strip())
    except OSError:
        pass
    return libraries


def _ids(command: str, cmdline: list[str]) -> tuple[tuple[str, ...], tuple[str, ...]]:
    groups = set(_ID_PATTERNS["group"].findall(command))
    clients = set(_ID_PATTERNS["client"].findall(command))
    for argument in cmdline[1:]:
        path = argument.split("=", 1)[-1]
        if _CONFIG_FILE.fullmatch(path):
            text = _read_small(path)
            groups.update(re.findall(r"^\s*group\.id\s*[=:]\s*(\S+)", text, re.M))
            clients.update(re.findall(r"^\s*client\.id\s*[=:]\s*(\S+)", text, re.M))
    return tuple(sorted(groups)), tuple(sorted(clients))


def _read_small(path: str) -> str:
    try:
        if os.path.getsize(path) > CONFIG_FILE_LIMIT:
            return ""
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return ""


def as_json(consumer: ConsumerProcess) -> dict[str, Any]:
    return {
        "pid": consumer.pid,
        "user": consumer.user,
        "command": consumer.command,
        "runtime": consumer.runtime,
        "kind": consumer.kind,
        "threads": consumer.threads,
        "cpu_s": round(consumer.cpu_s, 2),
        "rss_bytes": consumer.rss_bytes,
        "uptime_s": round(consumer.uptime_s, 1),
        "groups": list(consumer.groups),
        "client_ids": list(consumer.client_ids),
        "evidence": list(consumer.evidence),
    }
