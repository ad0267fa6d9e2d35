"""Reading a real local JVM's MBeans by PID: jcmd starts the local agent, JmxDump reads it.

Every JVM here is the maxlag reproducer (fixtures/java/com/example/MaxLagConsumerApp.java), a
real JVM registering Kafka's old-consumer MBeans in its platform MBean server.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import textwrap
import time

import pytest

from kafkadiag.collect.jmx import jvm as jmx
from kafkadiag.collect.jmx.errors import (
    AttachDisabledError,
    JvmGoneError,
    JvmNotFoundError,
    JvmNotRespondingError,
    NotAJvmError,
)
from kafkadiag.exitcodes import ExitCode
from tests.infra.workload import unique

NOBODY = 65534
SETTINGS = {
    "queued.max.message.chunks": "3",
    "fetch.message.max.bytes": "2000",
    "auto.commit.interval.ms": "200",
}


def bean(reading: jmx.MetricsReading, **properties: str) -> jmx.MBeanReading:
    found = [b for b in reading.beans if all(b.property(k) == v for k, v in properties.items())]
    assert len(found) == 1, f"{len(found)} beans with {properties}: {[b.name for b in reading.beans]}"
    return found[0]


def test_reads_the_old_consumer_mbeans_settings_and_fetcher_thread_by_pid(start) -> None:
    # GIVEN a running old-consumer replica that consumed 25 + 7 records of orders[0,1] over 2 streams
    group = unique("maxlag")
    consumer = start(group, ["orders:2:2"], SETTINGS, ["--hw", "orders:0:25", "--hw", "orders:1:7"])
    consumer.wait_for(
        lambda s: [p["committed_offset"] for p in s["partitions"]] == [25, 7], "everything committed"
    )
    # WHEN kafkadiag reads it by PID (the local agent does not run yet)
    reading = jmx.read_local_jvm(consumer.pid, timeout_s=20)
    # THEN it started the local agent with jcmd and says so
    assert reading.source_kind == "pid" and reading.source == f"pid {consumer.pid}"
    assert any("ManagementAgent.start_local" in note for note in reading.notes), reading.notes
    # ... and read the gauges under Kafka 0.8.2's object names, with their values
    max_lag = bean(reading, type="ConsumerFetcherManager", name="MaxLag", clientId=group)
    assert max_lag.name == f"kafka.consumer:type=ConsumerFetcherManager,name=MaxLag,clientId={group}"
    assert max_lag.domain == "kafka.consumer" and max_lag.attribute("Value") == 0
    for partition in (0, 1):
        lag = bean(
            reading, type="FetcherLagMetrics", name="ConsumerLag", topic="orders", partition=str(partition)
        )
        assert lag.domain == "kafka.server" and lag.attribute("Value") == 0
    for thread_id in ("0", "1"):
        queue = bean(reading, type="ZookeeperConsumerConnector", name="FetchQueueSize", threadId=thread_id)
        assert queue.attribute("Value") == 0 and queue.property("topic") == "orders"
    messages = bean(
        reading, type="ConsumerTopicMetrics", name="MessagesPerSec", clientId=group, topic="orders"
    )
    assert messages.attribute("Count") == 32
    # ... the settings the JVM was started with, and its fetcher thread by name
    assert dict(reading.system_properties) == {**SETTINGS}
    assert [name for name, _ in reading.threads] == [f"ConsumerFetcherThread-{consumer.consumer_id}-0-0"]
    assert {"attach_ms", "client_ms", "connect_ms", "read_ms"} <= set(dict(reading.timings))

    # WHEN it reads again
    again = jmx.read_local_jvm(consumer.pid, timeout_s=20)
    # THEN the agent is found running (its address read from the JVM's perf counters), not started again
    assert any("already running" in note for note in again.notes), again.notes


def test_kafka_0_8_1_quoted_names_are_read_with_their_parts_unquoted(start) -> None:
    # GIVEN a replica registering its MBeans under Kafka 0.8.1's quoted Yammer names
    group = unique("old081")
    consumer = start(group, ["orders:1:1"], SETTINGS, ["--hw", "orders:0:5", "--metric-names", "0.8.1"])
    consumer.wait_for(lambda s: s["partitions"][0]["consumed_offset"] == 5, "consumed")
    # WHEN it is read by PID
    reading = jmx.read_local_jvm(consumer.pid, timeout_s=20)
    # THEN the quoted names come back as registered, with domain and properties unquoted
    max_lag = bean(reading, type="ConsumerFetcherManager", name=f"{group}-MaxLag")
    assert max_lag.name == f'"kafka.consumer":type="ConsumerFetcherManager",name="{group}-MaxLag"'
    assert max_lag.domain == "kafka.consumer" and max_lag.attribute("Value") == 0
    lag = bean(reading, type="FetcherLagMetrics")
    assert lag.property("name") == f"{group}-host_127.0.0.1-port_9092-orders-0-ConsumerLag"


def test_a_pid_without_a_process_is_reported_as_such(start) -> None:
    # GIVEN the PID of a process that has exited
    process = subprocess.Popen(["true"])
    process.wait()
    # WHEN kafkadiag reads it
    with pytest.raises(JvmNotFoundError) as raised:
        jmx.read_local_jvm(process.pid, timeout_s=5)
    # THEN the error names the PID, says what to do, and exits 3
    assert str(process.pid) in raised.value.message and "jcmd -l" in raised.value.help_text
    assert raised.value.exit_code == ExitCode.INPUT_UNREADABLE


def test_a_process_that_is_not_a_jvm_is_refused_without_sending_it_sigquit() -> None:
    # GIVEN a process that is not a JVM (SIGQUIT's default action would terminate it)
    process = subprocess.Popen(["sleep", "60"])
    try:
        # WHEN kafkadiag is asked to read it
        with pytest.raises(NotAJvmError) as raised:
            jmx.read_local_jvm(process.pid, timeout_s=5)
        # THEN it refuses, says why, and the process is untouched
        assert "not a HotSpot JVM" in raised.value.message and "SIGQUIT" in raised.value.help_text
        time.sleep(0.2)
        assert process.poll() is None
    finally:
        process.kill()
        process.wait()


def test_another_users_jvm_gives_the_user_to_run_as(start) -> None:
    # GIVEN a JVM of root, and kafkadiag running as nobody
    consumer = start(unique("root-owned"), ["orders:1:1"], SETTINGS)
    script = textwrap.dedent(
        f"""
        from kafkadiag.collect.jmx import jvm as jmx
        from kafkadiag.errors import KafkadiagError
        try:
            jmx.read_local_jvm({consumer.pid}, timeout_s=5)
        except KafkadiagError as error:
            print(type(error).__name__, int(error.exit_code), error.message, "|", error.help_text)
        """
    )
    # WHEN nobody reads it
    completed = subprocess.run(
        ["setpriv", f"--reuid={NOBODY}", f"--regid={NOBODY}", "--clear-groups", sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=60,
        cwd="/tmp",
        env={**os.environ, "HOME": "/tmp"},
    )
    # THEN it is refused before any attach, naming the JVM's user and what to run instead
    assert completed.stdout.startswith("OtherUserError 3 "), completed.stdout + completed.stderr
    assert "runs as user root, kafkadiag as nobody" in completed.stdout
    assert "sudo -u USER kafkadiag" in completed.stdout and "--jmx" in completed.stdout


def test_a_jvm_with_attach_disabled_is_explained(start) -> None:
    # GIVEN a JVM started with -XX:+DisableAttachMechanism
    consumer = start(
        unique("noattach"), ["orders:1:1"], SETTINGS, jvm_options=["-XX:+DisableAttachMechanism"]
    )
    # WHEN kafkadiag reads it by PID
    with pytest.raises(AttachDisabledError) as raised:
        jmx.read_local_jvm(consumer.pid, timeout_s=10)
    # THEN the error says attach is disabled and offers the other ways in
    assert "-XX:+DisableAttachMechanism" in raised.value.message
    assert "--jmx" in raised.value.help_text and "--jolokia" in raised.value.help_text


def test_attach_disabled_but_local_connector_started_at_boot_is_still_read(start) -> None:
    # GIVEN a JVM that cannot be attached to but runs its local JMX connector from the start
    group = unique("noattach-local")
    consumer = start(
        group,
        ["orders:1:1"],
        SETTINGS,
        ["--hw", "orders:0:3"],
        jvm_options=["-XX:+DisableAttachMechanism", "-Dcom.sun.management.jmxremote"],
    )
    consumer.wait_for(lambda s: s["partitions"][0]["consumed_offset"] == 3, "consumed")
    # WHEN kafkadiag reads it by PID
    reading = jmx.read_local_jvm(consumer.pid, timeout_s=20)
    # THEN it found the connector's address in the perf counters and never needed jcmd
    assert any("already running" in note for note in reading.notes)
    assert bean(reading, name="MaxLag", clientId=group).attribute("Value") == 0


def test_a_jvm_that_dies_in_the_middle_of_the_read_is_reported_gone(start) -> None:
    # GIVEN a JVM whose MaxLag gauge halts the JVM when it is read
    consumer = start(unique("dies"), ["orders:1:1"], SETTINGS)
    consumer.command("die-on-read")
    # WHEN kafkadiag reads it
    with pytest.raises(JvmGoneError) as raised:
        jmx.read_local_jvm(consumer.pid, timeout_s=10)
    # THEN the error says the JVM went away during the read; the JVM did exit
    assert f"PID {consumer.pid}" in raised.value.message
    assert consumer.process.wait(timeout=10) == 99
    assert "exited" in raised.value.help_text


def test_a_frozen_jvm_times_out_with_advice(start) -> None:
    # GIVEN a JVM stopped with SIGSTOP before its local agent was started
    consumer = start(unique("frozen"), ["orders:1:1"], SETTINGS)
    os.kill(consumer.pid, signal.SIGSTOP)
    try:
        # WHEN kafkadiag reads it with a short timeout
        started = time.monotonic()
        with pytest.raises(JvmNotRespondingError) as raised:
            jmx.read_local_jvm(consumer.pid, timeout_s=2)
        # THEN it gives up after about the timeout and says what may be wrong
        assert time.monotonic() - started < 15
        assert "SIGSTOP" in raised.value.help_text
    finally:
        os.kill(consumer.pid, signal.SIGCONT)
