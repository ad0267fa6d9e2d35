"""kafkadiag against the tools operators use, on real Apache Kafka, side by side in one run.

    .venv/bin/python bench/real_kafka_bench.py [--runs 5] [--tool-runs 3] [--only kafka,zookeeper]

Scenarios (servers on free 127.0.0.1 ports, stopped by PID at the end):
  kafka      a KRaft Apache Kafka 4.1.1 broker holding 1,000 groups with 10 committed partitions
             each (100 topics x 10 partitions): `kafkadiag lag --all-groups` against
             `kafka-consumer-groups --describe --all-groups` of the same release (the JVM tool,
             start-up included) and against bare kafka-python doing the same reads
             (bench/bare_clients.py), once printing only the count, once writing every
             partition's lag as JSON as kafkadiag does; then kafkadiag's JSON and that bare
             JSON by turns, so that both meet the same load on a shared machine (medians, best
             runs and CPU per run side by side).
  zookeeper  a ZooKeeper-mode Apache Kafka 0.8.2.2 broker and one old-consumer group with 10,000
             offsets in ZooKeeper (100 topics x 100 partitions, all hosted by the broker):
             `kafkadiag lag --zookeeper --bootstrap-server --group` against Kafka's own
             ConsumerOffsetChecker (also start-up included) and the bare clients doing the same
             reads: kazoo (offsets and owners, as ConsumerOffsetChecker reads them) and
             kafka-python's consumer (the latest and earliest offset of every partition).

Every run is a whole cold process. Prints one JSON line per measurement, then the ratios the goal
is stated in: at least 5x faster than the JVM tools, within 1.3x of the bare client.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "bench"))

import machine  # noqa: E402
from lag_bench import bare_library_runs, settle, timed_runs, write_zookeeper_group  # noqa: E402

from kafkadiag.sandbox import kafka_release, kafka_servers  # noqa: E402
from kafkadiag.sandbox.servers import ServerProcess, start_zookeeper  # noqa: E402
from tests.infra.real_kafka import TOOLS_GROUP_COMMAND, RealKafka, with_group_coordinator  # noqa: E402


def timed_tool(name: str, argv: list[str], runs: int, against: dict, expect_in_output: str) -> dict:
    """A JVM tool as a cold process, `runs` times (one warm-up run first, as for kafkadiag)."""
    subprocess.run(argv, capture_output=True, timeout=1800)
    times, output = [], ""
    for _ in range(runs):
        started = time.perf_counter()
        result = subprocess.run(argv, capture_output=True, text=True, timeout=1800)
        times.append(time.perf_counter() - started)
        output = result.stdout
    if expect_in_output not in output:
        tail = f"{output[-2000:]}\n{result.stderr[-2000:]}"
        raise SystemExit(f"{name} printed no {expect_in_output!r}:\n{tail}")
    median = statistics.median(times)
    row = {
        "scenario": name,
        "median_s": round(median, 3),
        "min_s": round(min(times), 3),
        "runs": runs,
        "output_lines": output.count("\n"),
        "kafkadiag_median_s": against["median_s"],
        "tool_over_kafkadiag": round(median / against["median_s"], 2),
    }
    print(json.dumps(row), flush=True)
    return row


def bare_json_runs(
    name: str, args: list[str], runs: int, servers: list[ServerProcess], against: dict
) -> None:
    """The bare client giving a lag tool's answer: cold processes, their JSON checked for every
    partition kafkadiag reported. On a machine others load, the wall times swing with the load:
    the CPU each process used and the best run are compared too."""
    settle(servers)
    command = [sys.executable, str(REPO / "bench" / "bare_clients.py"), *args]
    subprocess.run(command, capture_output=True, check=True, timeout=300)  # warm-up, not counted
    times, document = [], {}
    children_before = os.times()
    for _ in range(runs):
        started = time.perf_counter()
        result = subprocess.run(command, capture_output=True, text=True, check=True, timeout=300)
        times.append(time.perf_counter() - started)
        document = json.loads(result.stdout)
    children_after = os.times()
    cpu_s = (children_after.children_user - children_before.children_user) + (
        children_after.children_system - children_before.children_system
    )
    partitions = sum(len(group["partitions"]) for group in document["groups"])
    if partitions != against["partitions"]:
        raise SystemExit(f"{name}: {partitions} partitions, kafkadiag reported {against['partitions']}")
    median = statistics.median(times)
    row = {
        "scenario": name,
        "median_s": round(median, 3),
        "min_s": round(min(times), 3),
        "runs": runs,
        "partitions": partitions,
        "cpu_s": round(cpu_s / runs, 3),
        "kafkadiag_median_s": against["median_s"],
        "kafkadiag_over_bare": round(against["median_s"] / median, 2),
        "kafkadiag_min_over_bare_min": round(against["min_s"] / min(times), 2),
        "kafkadiag_cpu_over_bare_cpu": round(against["kafkadiag_cpu_s"] / (cpu_s / runs), 2),
    }
    print(json.dumps(row), flush=True)


def by_turns(address: str, runs: int, servers: list[ServerProcess]) -> None:
    """kafkadiag and the bare client's JSON run by turns, so that both meet the same load (a
    shared machine's other processes come and go within a series): their medians, best runs and
    CPU per run, and kafkadiag's ratios to the bare client's."""
    settle(servers)
    commands = {
        "kafkadiag": [sys.executable, "-m", "kafkadiag", "lag", "--bootstrap-server", address,
                      "--all-groups", "--format", "json"],
        "bare": [sys.executable, str(REPO / "bench" / "bare_clients.py"), "kafka", address, "--json"],
    }  # fmt: skip
    times: dict[str, list[float]] = {name: [] for name in commands}
    cpu: dict[str, float] = dict.fromkeys(commands, 0.0)
    partitions: dict[str, int] = {}
    load_before = os.getloadavg()[0]
    for turn in range(runs + 1):  # the first turn warms both up and is not counted
        for name, command in commands.items():
            before = resource.getrusage(resource.RUSAGE_CHILDREN)
            started = time.perf_counter()
            result = subprocess.run(
                command, capture_output=True, text=True, check=True, cwd=REPO, timeout=300
            )
            elapsed = time.perf_counter() - started
            after = resource.getrusage(resource.RUSAGE_CHILDREN)
            if turn:
                times[name].append(elapsed)
                cpu[name] += (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
            document = json.loads(result.stdout)
            partitions[name] = sum(len(group["partitions"]) for group in document["groups"])
    if partitions["kafkadiag"] != partitions["bare"]:
        raise SystemExit(
            f"by turns: kafkadiag reported {partitions['kafkadiag']} partitions, bare {partitions['bare']}"
        )
    medians = {name: statistics.median(values) for name, values in times.items()}
    bests = {name: min(values) for name, values in times.items()}
    row = {
        "scenario": "kafkadiag lag --format json and bare kafka-python's JSON, by turns",
        "runs": runs,
        "partitions": partitions["kafkadiag"],
        "kafkadiag_median_s": round(medians["kafkadiag"], 3),
        "bare_median_s": round(medians["bare"], 3),
        "kafkadiag_min_s": round(bests["kafkadiag"], 3),
        "bare_min_s": round(bests["bare"], 3),
        "kafkadiag_cpu_s": round(cpu["kafkadiag"] / runs, 3),
        "bare_cpu_s": round(cpu["bare"] / runs, 3),
        "median_ratio": round(medians["kafkadiag"] / medians["bare"], 2),
        "min_ratio": round(bests["kafkadiag"] / bests["bare"], 2),
        "cpu_ratio": round(cpu["kafkadiag"] / cpu["bare"], 2),
        "load_1m": [round(load_before, 2), round(os.getloadavg()[0], 2)],
    }
    print(json.dumps(row), flush=True)


def kafka_scenario(work: Path, runs: int, tool_runs: int) -> None:
    from kafka import KafkaAdminClient, TopicPartition
    from kafka.admin import NewTopic
    from kafka.structs import OffsetAndMetadata

    broker = kafka_servers.start_kraft_broker("4.1.1", work / "kafka-41", jvm_options=("-Xmx1g",))
    try:
        kafka = with_group_coordinator(RealKafka(broker, work))
        topics = [f"bench-topic-{index:03d}" for index in range(100)]
        admin = KafkaAdminClient(bootstrap_servers=kafka.address, request_timeout_ms=120_000)
        try:
            admin.create_topics([NewTopic(topic, 10, 1) for topic in topics])
            for topic in topics:
                kafka.wait_for_leaders(topic, 10)
            kafka.produce(topics[0], {partition: 3 for partition in range(10)})
            started = time.monotonic()
            for index in range(1000):
                topic = topics[index % 100]
                admin.alter_group_offsets(
                    f"bench-group-{index:04d}",
                    {TopicPartition(topic, p): OffsetAndMetadata(0, "", -1) for p in range(10)},
                )
            seconds = round(time.monotonic() - started, 1)
            print(json.dumps({"setup": "1,000 groups committed", "seconds": seconds}))
        finally:
            admin.close()
        servers: list[ServerProcess] = [broker.server]
        ours = timed_runs(
            "kafkadiag lag --all-groups (Kafka 4.1.1)",
            ["lag", "--bootstrap-server", kafka.address, "--all-groups"], runs, servers,
        )  # fmt: skip
        bare_library_runs("bare kafka-python (same reads)", ["kafka", kafka.address], runs, servers, ours)
        name = "bare kafka-python (same reads, then the lag of every partition written as JSON)"
        bare_json_runs(name, ["kafka", kafka.address, "--json"], runs, servers, ours)
        by_turns(kafka.address, runs, servers)
        argv = kafka_servers.java_argv(
            "4.1.1", work, "consumer-groups", TOOLS_GROUP_COMMAND,
            "--bootstrap-server", kafka.address, "--describe", "--all-groups",
        )  # fmt: skip
        name = "kafka-consumer-groups --describe --all-groups (4.1.1)"
        timed_tool(name, argv, tool_runs, ours, "bench-group-0999")
    finally:
        broker.stop()


def zookeeper_scenario(work: Path, runs: int, tool_runs: int) -> None:
    zookeeper = start_zookeeper(work / "zookeeper")
    broker = None
    try:
        broker = kafka_servers.start_zookeeper_broker(
            "0.8.2.2", work / "kafka-0822", zookeeper.address, jvm_options=("-Xmx1g",),
            settings={"num.recovery.threads.per.data.dir": "4"},
        )  # fmt: skip
        chroot = "/" + broker.zookeeper.split("/", 1)[1] if broker.zookeeper else ""
        _register_topics(zookeeper.address + chroot, 100, 100)
        _wait_for_partitions(zookeeper.address + chroot, 100 * 100)
        # Owners too: ConsumerOffsetChecker refuses a group without /owners.
        group, sessions = write_zookeeper_group(zookeeper, chroot, 100, 100, owners=True)
        servers = [zookeeper, broker.server]
        assert broker.zookeeper is not None
        ours = timed_runs(
            "kafkadiag lag, 10,000 ZooKeeper offsets (Kafka 0.8.2.2)",
            ["lag", "--zookeeper", broker.zookeeper, "--bootstrap-server", broker.address, "--group", group],
            runs, servers,
        )  # fmt: skip
        bare = ["zookeeper", broker.zookeeper, group, broker.address, "0.8.2"]
        name = "bare kazoo + kafka-python (same reads: offsets, owners, both watermarks)"
        bare_library_runs(name, bare, runs, servers, ours)
        argv = kafka_servers.java_argv(
            "0.8.2.2", work, "offset-checker", "kafka.tools.ConsumerOffsetChecker",
            "--zookeeper", broker.zookeeper, "--group", group,
        )  # fmt: skip
        timed_tool("ConsumerOffsetChecker (0.8.2.2)", argv, tool_runs, ours, "bench-topic-099")
        for session in sessions:
            session.stop()
    finally:
        if broker is not None:
            broker.stop()
        zookeeper.stop()


def _register_topics(hosts: str, topics: int, partitions: int) -> None:
    """/brokers/topics/<t> as Kafka's TopicCommand (AdminUtils.createTopic) writes it; the
    controller then creates the partitions on broker 0."""
    from tests.infra import workload

    client = workload.zk_client(hosts)
    try:
        client.ensure_path("/brokers/topics")
        for index in range(topics):
            assignment = {str(partition): [0] for partition in range(partitions)}
            value = json.dumps({"version": 1, "partitions": assignment}).encode()
            client.create(f"/brokers/topics/bench-topic-{index:03d}", value)
    finally:
        client.stop()
        client.close()


def _wait_for_partitions(hosts: str, expected: int, timeout_s: float = 600.0) -> None:
    from tests.infra import workload

    client = workload.zk_client(hosts)
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            ready = 0
            for topic in client.get_children("/brokers/topics"):
                path = f"/brokers/topics/{topic}/partitions"
                if client.exists(path):
                    ready += sum(1 for p in client.get_children(path) if client.exists(f"{path}/{p}/state"))
            if ready >= expected:
                return
            time.sleep(2.0)
    finally:
        client.stop()
        client.close()
    raise SystemExit(f"the broker did not create {expected} partitions within {timeout_s}s")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--tool-runs", type=int, default=3)
    parser.add_argument("--only", default="kafka,zookeeper")
    options = parser.parse_args()
    for version in ("0.8.2.2", "3.9.1", "4.1.1"):
        kafka_release.release_jars(version)
    # Bytecode, as an installed kafkadiag has it (pip compiles on install): a run must not pay for
    # compiling modules that changed since the last one, which the clients' packages never do.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "kafkadiag")], check=True)
    print(json.dumps({"machine": machine.describe()}), flush=True)
    with tempfile.TemporaryDirectory(prefix="kafkadiag-real-bench-") as scratch:
        work = Path(scratch)
        if "kafka" in options.only:
            kafka_scenario(work, options.runs, options.tool_runs)
        if "zookeeper" in options.only:
            zookeeper_scenario(work, options.runs, options.tool_runs)


if __name__ == "__main__":
    main()
