"""Lag benchmark: a large old-consumer group in ZooKeeper and 1,000 groups on a broker.

    .venv/bin/python bench/lag_bench.py [--partitions 10000] [--groups 1000] [--runs 7]
                                        [--only zk-scan,zk-lag,kafka-lag]

Starts a real ZooKeeper (pyspark's jars) and a real Tansu broker on free 127.0.0.1 ports,
writes the data, then times whole `kafkadiag` processes from a cold start (each run is a new
process) and prints wall times with the request and round-trip counts kafkadiag reports in its
JSON `stats`, and the CPU seconds per run of kafkadiag and of the servers answering it. Before
timing, it waits until the servers are idle (the setup's writes applied). For scale it also times
the naive ways: one synchronous ZooKeeper get per znode,
and one OffsetFetch per group.

Scenarios:
  zk-scan      10,000 offset znodes of one old-consumer group (100 topics x 100 partitions),
               read with --zookeeper only and no broker registered: the ZooKeeper scan alone.
  zk-lag       the same group with its owners (10 consumers x 10 threads), brokers registered:
               offsets, owners, registrations and the 10,000 partitions' watermarks.
  kafka-lag    1,000 groups with 10 partitions each (100 topics x 10 partitions) on the broker,
               `kafkadiag lag --bootstrap-server ... --all-groups`.
Servers are stopped by PID at the end.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from tests.infra import workload  # noqa: E402
from tests.infra.servers import ServerProcess, start_tansu, start_zookeeper  # noqa: E402


def run_kafkadiag(args: list[str]) -> tuple[float, dict, int]:
    started = time.perf_counter()
    result = subprocess.run(
        [sys.executable, "-m", "kafkadiag", *args, "--format", "json"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=300,
    )
    elapsed = time.perf_counter() - started
    try:
        document = json.loads(result.stdout)
    except ValueError:
        raise SystemExit(f"kafkadiag failed ({result.returncode}):\n{result.stderr}") from None
    return elapsed, document, result.returncode


def cpu_seconds(pid: int) -> float:
    import psutil

    times = psutil.Process(pid).cpu_times()
    return times.user + times.system


def settle(servers: list[ServerProcess], idle_cpu_s: float = 0.02, limit_s: float = 60.0) -> float:
    """Wait until the servers use less than idle_cpu_s of CPU in a second: writes the setup made
    may still be applied in the background, and the timings are of kafkadiag, not of that."""
    started = time.monotonic()
    while time.monotonic() - started < limit_s:
        before = sum(cpu_seconds(server.pid) for server in servers)
        time.sleep(1.0)
        if sum(cpu_seconds(server.pid) for server in servers) - before < idle_cpu_s:
            break
    return time.monotonic() - started


def timed_runs(name: str, args: list[str], runs: int, servers: list[ServerProcess]) -> dict:
    settled_s = settle(servers)
    times = []
    document: dict = {}
    code = 0
    # One run first, not counted: the servers' JVM/JIT and page cache warm up, as in production.
    run_kafkadiag(args)
    children_before = os.times()
    servers_before = sum(cpu_seconds(server.pid) for server in servers)
    for _ in range(runs):
        elapsed, document, code = run_kafkadiag(args)
        times.append(elapsed)
    children_after = os.times()
    servers_cpu = sum(cpu_seconds(server.pid) for server in servers) - servers_before
    kafkadiag_cpu = (children_after.children_user - children_before.children_user) + (
        children_after.children_system - children_before.children_system
    )
    partitions = sum(len(group["partitions"]) for group in document["groups"])
    row = {
        "scenario": name,
        "median_s": round(statistics.median(times), 3),
        "min_s": round(min(times), 3),
        "max_s": round(max(times), 3),
        "runs": runs,
        "exit_code": code,
        "groups": len(document["groups"]),
        "partitions": partitions,
        "in_process_ms": document["duration_ms"],
        # CPU per run: kafkadiag's own process, and the servers answering it (same 2 cores).
        "kafkadiag_cpu_s": round(kafkadiag_cpu / runs, 3),
        "servers_cpu_s": round(servers_cpu / runs, 3),
        "settled_s": round(settled_s, 1),
        **document["stats"],
    }
    print(json.dumps(row), flush=True)
    return row


def write_zookeeper_group(
    zookeeper: ServerProcess, chroot: str, topics: int, per_topic: int, owners: bool, consumers: int = 10
) -> tuple[str, list]:
    """Offsets (and owners) as ZookeeperConsumerConnector writes them, in batched transactions."""
    client = workload.zk_client(zookeeper.address + chroot)
    group = "bench-old"
    base = f"/consumers/{group}"
    names = [f"bench-topic-{index:03d}" for index in range(topics)]
    sessions = []
    for name in names:
        client.ensure_path(f"{base}/offsets/{name}")
        transaction = client.transaction()
        for partition in range(per_topic):
            transaction.create(f"{base}/offsets/{name}/{partition}", str(1000 + partition).encode())
        transaction.commit()
    if owners:
        threads = max(1, topics * per_topic // (consumers * per_topic) or 1)
        members = []
        for _ in range(consumers):
            session = workload.zk_client(zookeeper.address + chroot)
            identifier = workload.consumer_id(group, "benchhost")
            value = {"version": 1, "subscription": {name: threads for name in names}, "pattern": "static",
                     "timestamp": str(int(time.time() * 1000))}  # fmt: skip
            session.ensure_path(f"{base}/ids")
            session.create(f"{base}/ids/{identifier}", json.dumps(value).encode(), ephemeral=True)
            sessions.append(session)
            members.append((identifier, session))
        assignment = workload.range_assignment(
            {name: per_topic for name in names},
            {identifier: {name: threads for name in names} for identifier, _ in members},
        )
        by_consumer = {identifier: session for identifier, session in members}
        for name in names:
            client.ensure_path(f"{base}/owners/{name}")
        pending: dict[str, list] = {}
        for (name, partition), thread in assignment.items():
            pending.setdefault(thread.rsplit("-", 1)[0], []).append((name, partition, thread))
        for consumer, claims in pending.items():
            session = by_consumer[consumer]
            transaction = session.transaction()
            for name, partition, thread in claims:
                transaction.create(f"{base}/owners/{name}/{partition}", thread.encode(), ephemeral=True)
            transaction.commit()
    sessions.append(client)
    return group, sessions


def bare_library_runs(
    name: str, args: list[str], runs: int, servers: list[ServerProcess], against: dict
) -> None:
    """The bare library doing the same reads (bench/bare_clients.py), as cold processes too."""
    settle(servers)
    command = [sys.executable, str(REPO / "bench" / "bare_clients.py"), *args]
    subprocess.run(command, capture_output=True, check=True, timeout=300)  # warm-up, not counted
    times, read = [], ""
    for _ in range(runs):
        started = time.perf_counter()
        result = subprocess.run(command, capture_output=True, text=True, check=True, timeout=300)
        times.append(time.perf_counter() - started)
        read = result.stdout.strip()
    median = statistics.median(times)
    print(json.dumps({
        "scenario": name, "median_s": round(median, 3), "min_s": round(min(times), 3), "runs": runs,
        "offsets_read": int(read), "kafkadiag_median_s": against["median_s"],
        "kafkadiag_over_bare": round(against["median_s"] / median, 2),
    }), flush=True)  # fmt: skip


def naive_zookeeper_gets(zookeeper: ServerProcess, chroot: str) -> float:
    """One synchronous get per offset znode: what a simple script does."""
    client = workload.zk_client(zookeeper.address + chroot)
    try:
        started = time.perf_counter()
        base = "/consumers/bench-old/offsets"
        for topic in client.get_children(base):
            for partition in client.get_children(f"{base}/{topic}"):
                client.get(f"{base}/{topic}/{partition}")
        return time.perf_counter() - started
    finally:
        client.stop()
        client.close()


def naive_offset_fetches(bootstrap: str, groups: list[str]) -> float:
    """One OffsetFetch per group (kafka-python's admin list_group_offsets, one group at a time)."""
    from kafka import KafkaAdminClient

    admin = KafkaAdminClient(bootstrap_servers=bootstrap)
    try:
        started = time.perf_counter()
        for group in groups:
            admin.list_group_offsets(group)
        return time.perf_counter() - started
    finally:
        admin.close()


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--partitions", type=int, default=10_000, help="old-consumer partitions (multiple of 100)"
    )
    parser.add_argument("--groups", type=int, default=1_000, help="Kafka-stored groups, 10 partitions each")
    parser.add_argument("--runs", type=int, default=7, help="cold kafkadiag processes per scenario")
    parser.add_argument(
        "--only",
        default="zk-scan,zk-lag,kafka-lag",
        help="comma-separated scenarios to run (zk-scan, zk-lag, kafka-lag)",
    )
    options = parser.parse_args()
    chosen = {name.strip() for name in options.only.split(",") if name.strip()}
    unknown = chosen - {"zk-scan", "zk-lag", "kafka-lag"}
    if unknown:
        parser.error(f"unknown scenario(s): {', '.join(sorted(unknown))}")

    # An installed kafkadiag has its bytecode compiled (pip does it); an editable checkout under
    # PYTHONDONTWRITEBYTECODE=1 would otherwise recompile every module in every timed process.
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(REPO / "kafkadiag")], check=True)
    work = Path(tempfile.mkdtemp(prefix="kafkadiag-lag-bench-"))
    zookeeper = start_zookeeper(work / "zookeeper")
    broker = start_tansu(work / "tansu")
    sessions: list = []
    try:
        print(f"# machine: {os.cpu_count()} cores; python {sys.version.split()[0]}", flush=True)
        topics = 100
        per_topic = options.partitions // topics
        root = workload.zk_client(zookeeper.address)
        root.ensure_path("/scan")
        root.ensure_path("/lag")
        root.stop()
        root.close()
        if "zk-scan" in chosen:
            setup = time.perf_counter()
            group, made = write_zookeeper_group(zookeeper, "/scan", topics, per_topic, owners=False)
            sessions += made
            print(
                f"# zk-scan setup: {options.partitions} offset znodes in {time.perf_counter() - setup:.1f}s",
                flush=True,
            )
            row = timed_runs(
                "zk-scan",
                ["lag", "--zookeeper", f"{zookeeper.address}/scan", "--group", group],
                options.runs,
                [zookeeper],
            )
            bare_library_runs(
                "zk-scan-bare-kazoo-async", ["zookeeper", f"{zookeeper.address}/scan", group],
                options.runs, [zookeeper], row,
            )  # fmt: skip
            naive_seconds = naive_zookeeper_gets(zookeeper, "/scan")
            naive = {"scenario": "zk-naive-sync-gets", "seconds": round(naive_seconds, 3)}
            print(json.dumps({**naive, "round_trips": options.partitions + topics + 1}), flush=True)

        if "zk-lag" in chosen:
            setup = time.perf_counter()
            names = [f"bench-topic-{index:03d}" for index in range(topics)]
            for name in names:
                workload.create_topic(broker.address, name, per_topic)
            broker_id = workload.broker_node_id(broker.address)
            registrar = workload.zk_client(zookeeper.address + "/lag")
            sessions.append(registrar)
            host, port = broker.address.rsplit(":", 1)
            workload.register_broker(registrar, broker_id, host, int(port))
            for name in names:
                registrar.ensure_path("/brokers/topics")
                layout = {"version": 1, "partitions": {str(p): [broker_id] for p in range(per_topic)}}
                registrar.create(f"/brokers/topics/{name}", json.dumps(layout).encode())
            group, made = write_zookeeper_group(zookeeper, "/lag", topics, per_topic, owners=True)
            sessions += made
            print(
                f"# zk-lag setup: topics, owners and registrations in {time.perf_counter() - setup:.1f}s",
                flush=True,
            )
            timed_runs(
                "zk-lag",
                ["lag", "--zookeeper", f"{zookeeper.address}/lag", "--group", group],
                options.runs,
                [zookeeper, broker],
            )

        if "kafka-lag" in chosen:
            setup = time.perf_counter()
            group_topics = [f"bench-groups-{index:03d}" for index in range(100)]
            for name in group_topics:
                workload.create_topic(broker.address, name, 10)
            from kafka import KafkaAdminClient, TopicPartition
            from kafka.structs import OffsetAndMetadata

            admin = KafkaAdminClient(bootstrap_servers=broker.address)
            groups = [f"bench-group-{index:04d}" for index in range(options.groups)]
            for index, name in enumerate(groups):
                topic = group_topics[index % len(group_topics)]
                admin.alter_group_offsets(
                    name,
                    {
                        TopicPartition(topic, partition): OffsetAndMetadata(0, "", -1)
                        for partition in range(10)
                    },
                )
            admin.close()
            print(
                f"# kafka-lag setup: {options.groups} groups in {time.perf_counter() - setup:.1f}s",
                flush=True,
            )
            row = timed_runs(
                "kafka-lag",
                ["lag", "--bootstrap-server", broker.address, "--all-groups"],
                options.runs,
                [broker],
            )
            bare_library_runs(
                "kafka-lag-bare-kafka-python", ["kafka", broker.address], options.runs, [broker], row
            )
            print(json.dumps({"scenario": "kafka-naive-offset-fetch-per-group",
                              "seconds": round(naive_offset_fetches(broker.address, groups), 3),
                              "requests": options.groups}), flush=True)  # fmt: skip
    finally:
        for session in sessions:
            try:
                session.stop()
                session.close()
            except Exception:  # noqa: BLE001 - the servers are going away anyway
                pass
        broker.stop()
        zookeeper.stop()


if __name__ == "__main__":
    main()
