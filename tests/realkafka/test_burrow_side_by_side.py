"""Burrow and kafkadiag side by side: the same real consumers on the same real broker, watched by
Debian's Burrow (1.2.1) and sampled by `kafkadiag lag --samples` over the same seconds; the
statuses per partition and per group are Burrow's, or the difference docs/lag.md documents.

Brokers: Apache Kafka 0.9.0.1 (Burrow's `kafka-version="0.9.0.1"`) and 3.9.1 in ZooKeeper mode
(`kafka-version="2.0.0"`); a 4.x broker refuses Burrow 1.2.1's ListOffsets v0 (docs/lag.md). Burrow
reads Kafka-committed groups from `__consumer_offsets` and the old consumer's groups from
ZooKeeper. The consumers are real: kafka-python consumers that poll and commit (one per
Kafka-committed group, each on a topic of its own) and Kafka's own old console consumer (0.9.0.1;
1.1.1, the last one, against 3.9.1).

| group | what the consumer does | Burrow | kafkadiag |
|---|---|---|---|
| keeps-up | reads every record (1 every 0.7 s), commits after every poll | OK | OK |
| catching-up | works off a backlog, no new records | OK | OK |
| falling-behind | commits progress slower than records arrive | WARN | WARN |
| stopped | commits progress, then its process ends | STOP | STOP |
| poisoned | re-reads one record that fails, commits the same offset every 0.5 s | STALL | STOP (documented) |
| zk-keeps-up | old console consumer, caught up | OK | OK |
| zk-stopped | old console consumer that read part of its topic and exited | STOP | STOP |

The poisoned group is the documented difference: OffsetFetch shows no commit that does not move
the offset, so kafkadiag cannot tell it from a consumer that stopped committing. The old
consumer never reaches WARN or STALL here: its console consumer cannot be slowed down, and it
writes an offset znode only when the offset changed, so it never commits without progress.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import pytest

from kafkadiag.collect.lagrecord import RECORD_FILE
from tests.infra import workload
from tests.infra.burrow import Burrow, start_burrow
from tests.infra.cli import group_of, run_json
from tests.infra.real_kafka import RealKafka

# Burrow's window: 5 commits per partition, high watermarks refreshed every second (5 of them are
# its "recent broker offsets"). kafkadiag's: 6 samples a second apart.
BURROW_INTERVALS = 5
SAMPLES = 6
INTERVAL_S = 1.0
# How long the consumers run before kafkadiag's first sample, so that Burrow has several commits.
WARM_UP_S = 4.0
# The stopped consumer commits until this long into kafkadiag's window: both see progress, then
# silence.
STOPPED_AFTER_S = 1.5
# The poisoned consumer's record that fails every time.
POISON_AT = 7

# Kafka-committed groups: Burrow's status and kafkadiag's.
KAFKA_GROUPS = {
    "keeps-up": ("OK", "OK"),
    "catching-up": ("OK", "OK"),
    "falling-behind": ("WARN", "WARN"),
    "stopped": ("STOP", "STOP"),
    # docs/lag.md: a commit that repeats the offset leaves no trace in OffsetFetch.
    "poisoned": ("STALL", "STOP"),
}
ZOOKEEPER_GROUPS = {"zk-keeps-up": ("OK", "OK"), "zk-stopped": ("STOP", "STOP")}


class Loop(threading.Thread):
    """A consumer's or producer's loop, run until `finish` (or until it ends by itself)."""

    def __init__(
        self, name: str, step: Callable[[], None], period_s: float, until_s: float | None = None
    ) -> None:
        super().__init__(name=name, daemon=True)
        self.step, self.period_s = step, period_s
        self.deadline = time.monotonic() + until_s if until_s is not None else None
        self.stopping = threading.Event()
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            while not self.stopping.is_set():
                if self.deadline is not None and time.monotonic() >= self.deadline:
                    return
                self.step()
                self.stopping.wait(self.period_s)
        except BaseException as error:  # noqa: BLE001 - reported by finish() in the test's thread
            self.error = error

    def finish(self) -> None:
        self.stopping.set()
        self.join(timeout=15)
        if self.error is not None:
            raise AssertionError(f"{self.name} failed: {self.error!r}") from self.error


class Consumer:
    """A kafka-python consumer of one partition in a group, committing to Kafka (no group join:
    the group's offsets are what Burrow and kafkadiag read)."""

    def __init__(self, kafka: RealKafka, topic: str, group: str) -> None:
        from kafka import KafkaConsumer, TopicPartition

        self.partition = TopicPartition(topic, 0)
        self.consumer = KafkaConsumer(
            bootstrap_servers=kafka.address,
            group_id=group,
            client_id=f"side-by-side-{group}",
            enable_auto_commit=False,
            auto_offset_reset="earliest",
            **kafka.client_settings(),
        )
        self.consumer.assign([self.partition])

    def poll(self, max_records: int) -> list[Any]:
        return self.consumer.poll(timeout_ms=200, max_records=max_records).get(self.partition, [])

    def commit(self) -> None:
        self.consumer.commit()

    def recommit(self, offset: int) -> None:
        from kafka.structs import OffsetAndMetadata

        self.consumer.seek(self.partition, offset)
        self.consumer.commit({self.partition: OffsetAndMetadata(offset, "", -1)})

    def close(self) -> None:
        self.consumer.close(autocommit=False)


def producer_for(kafka: RealKafka) -> Any:
    from kafka import KafkaProducer

    return KafkaProducer(bootstrap_servers=kafka.address, acks=1, **kafka.client_settings())


def produce(producer: Any, topic: str, records: int) -> None:
    for index in range(records):
        producer.send(topic, value=f"record-{index}".encode(), partition=0)
    producer.flush(timeout=30)


@contextmanager
def consumers_at_work(kafka: RealKafka, topics: dict[str, str], groups: dict[str, str]) -> Iterator[None]:
    """The Kafka-committed groups' consumers and the producers that feed the topics still
    written to (see the module's table), running until the block ends."""
    loops: list[Loop] = []
    with ExitStack() as cleanup:

        def consumer(role: str) -> Consumer:
            made = Consumer(kafka, topics[role], groups[role])
            cleanup.callback(made.close)
            return made

        def producing(role: str, records: int, period_s: float) -> Loop:
            producer = producer_for(kafka)
            cleanup.callback(producer.close, 5)
            return Loop(f"{role}-producer", lambda: produce(producer, topics[role], records), period_s)

        keeps_up = consumer("keeps-up")

        def keep_up() -> None:
            # Commits whether or not it read anything, as a consumer's auto-commit does.
            keeps_up.poll(500)
            keeps_up.commit()

        catching_up = consumer("catching-up")

        def catch_up() -> None:
            catching_up.poll(4)
            catching_up.commit()

        falling_behind = consumer("falling-behind")

        def fall_behind() -> None:
            falling_behind.poll(2)
            falling_behind.commit()

        stopped = consumer("stopped")

        def work_then_stop() -> None:
            stopped.poll(5)
            stopped.commit()

        poisoned = consumer("poisoned")

        def retry_poison() -> None:
            # The record at POISON_AT fails every time: seek back to it and commit where it stands.
            poisoned.poll(1)
            poisoned.recommit(POISON_AT)

        # One record every 0.7 s (not a multiple of the sample interval, so the samples do not
        # keep landing in the instant between a record and its commit).
        loops = [
            producing("keeps-up", 1, 0.7),
            Loop("keeps-up", keep_up, 0.05),
            producing("zk-keeps-up", 1, 0.7),
            Loop("catching-up", catch_up, 0.5),
            # 40 records a second against 2 consumed every 1.5 s: between two samples a second
            # apart the log end gains ~40, the committed offset at most 4.
            producing("falling-behind", 10, 0.25),
            Loop("falling-behind", fall_behind, 1.5),
            Loop("stopped", work_then_stop, 0.5, until_s=WARM_UP_S + STOPPED_AFTER_S),
            Loop("poisoned", retry_poison, 0.5),
        ]
        for loop in loops:
            loop.start()
        try:
            yield
        finally:
            errors = []
            for loop in loops:
                try:
                    loop.finish()
                except AssertionError as error:
                    errors.append(str(error))
            assert not errors, errors


def recorded_series(record: Path, group: str) -> list[tuple[int, int | None, int | None]]:
    """(time, committed offset, high watermark) of the group's first partition in each recorded
    sample: what kafkadiag judged, quoted when it disagrees with Burrow."""
    series = []
    for line in (record / RECORD_FILE).read_text().splitlines():
        snapshot = json.loads(line)
        marks = {(m["topic"], m["partition"]): m["high_watermark"] for m in snapshot["partitions"]}
        for entry in snapshot["groups"]:
            if entry["group"] == group:
                for offset in entry["offsets"][:1]:
                    key = (offset["topic"], offset["partition"])
                    series.append((snapshot["taken_at_ms"], offset["offset"], marks.get(key)))
    return series


def burrow_verdict(burrow: Burrow, group: str) -> dict[str, Any]:
    """Burrow's group status and its partitions' statuses and current lags, from `/lag` (which
    lists every partition; `/status` only those not OK)."""
    status = burrow.group_lag(group)["status"]
    partitions = {(entry["topic"], entry["partition"]): entry for entry in status["partitions"]}
    return {
        "group": status["status"],
        "partitions": {key: entry["status"] for key, entry in partitions.items()},
        "lags": {key: entry["current_lag"] for key, entry in partitions.items()},
    }


def kafkadiag_verdict(document: dict[str, Any], group: str, source: str) -> dict[str, Any]:
    found = group_of(document, group, source)
    partitions = {(entry["topic"], entry["partition"]): entry for entry in found["partitions"]}
    return {
        "group": found["status"],
        "partitions": {key: entry["status"] for key, entry in partitions.items()},
        "lags": {key: entry["lag"] for key, entry in partitions.items()},
    }


def group_status_of(partition_status: str) -> str:
    """Burrow's group status for a group of one partition: STOP, STALL and REWIND count as ERR."""
    return "ERR" if partition_status in ("STOP", "STALL", "REWIND") else partition_status


def lag_arguments(kafka: RealKafka, groups: list[str], record: Path, pinned: str | None) -> list[str]:
    arguments = ["lag", "--zookeeper", kafka.zookeeper, "--bootstrap-server", kafka.address]
    arguments += ["--samples", str(SAMPLES), "--interval", str(INTERVAL_S), "--record", str(record)]
    if pinned is not None:
        # 0.9 answers no version probe: pinned, no 1.5 s wait for it in each sample
        properties = record.parent / "client.properties"
        properties.write_text(f"api.version={pinned}\n")
        arguments += ["--command-config", str(properties)]
    for group in groups:
        arguments += ["--group", group]
    return arguments


@pytest.mark.parametrize(
    ("release", "burrow_speaks", "old_consumer", "pinned"),
    [
        pytest.param("kafka_09", "0.9.0.1", "0.9.0.1", "0.9", id="0.9.0.1"),
        # sarama 1.22 knows releases up to 2.1; a 3.9 broker still serves their request versions,
        # and Burrow decodes its __consumer_offsets commits (value version 3)
        pytest.param("kafka_39", "2.0.0", "1.1.1", None, id="3.9.1"),
    ],
)
def test_burrow_and_kafkadiag_agree_on_real_consumers(
    release: str,
    burrow_speaks: str,
    old_consumer: str,
    pinned: str | None,
    request: pytest.FixtureRequest,
    tmp_path: Path,
) -> None:
    kafka: RealKafka = request.getfixturevalue(release)
    expected = {**KAFKA_GROUPS, **ZOOKEEPER_GROUPS}
    topics = {role: workload.unique(f"burrow-{role}") for role in expected}
    groups = {role: workload.unique(f"burrow-{role}") for role in expected}
    # GIVEN a topic per group, with the records each consumer starts from
    backlog = {"keeps-up": 20, "catching-up": 300, "falling-behind": 20, "stopped": 100, "poisoned": 40,
               "zk-keeps-up": 15, "zk-stopped": 40}  # fmt: skip
    producer = producer_for(kafka)
    try:
        for role, records in backlog.items():
            kafka.create_topic(topics[role], 1)
            produce(producer, topics[role], records)
    finally:
        producer.close(timeout=5)
    # AND the old console consumer that read 10 of its 40 records and exited (offset in ZooKeeper)
    kafka.consume_with_old_consumer(topics["zk-stopped"], groups["zk-stopped"], 10, release=old_consumer)
    with ExitStack() as running:
        # AND the old console consumer that stays and keeps up
        running.enter_context(
            kafka.running_old_consumer(
                topics["zk-keeps-up"], groups["zk-keeps-up"], {"auto.commit.interval.ms": "50"}, old_consumer
            )
        )
        # AND Burrow watching the cluster: commits from __consumer_offsets, old consumers from ZooKeeper
        burrow = start_burrow(
            tmp_path / "burrow",
            zookeeper=kafka.zookeeper,
            brokers=kafka.address,
            kafka_version=burrow_speaks,
            old_consumer_root="/" + kafka.zookeeper.split("/", 1)[1],  # the broker's chroot
            intervals=BURROW_INTERVALS,
            offset_refresh_s=1,
        )
        running.callback(burrow.stop)
        # AND the Kafka-committed groups' consumers at work, long enough for Burrow to see commits
        running.enter_context(consumers_at_work(kafka, topics, groups))
        time.sleep(WARM_UP_S)
        # WHEN kafkadiag samples every group over the next seconds
        record = tmp_path / "record"
        document = run_json(lag_arguments(kafka, list(groups.values()), record, pinned))
        # AND Burrow is asked at the end of the same window, the consumers still at work
        theirs = {role: burrow_verdict(burrow, group) for role, group in groups.items()}
    ours = {
        role: kafkadiag_verdict(document, group, "zookeeper" if role in ZOOKEEPER_GROUPS else "kafka")
        for role, group in groups.items()
    }
    # THEN per group and partition: Burrow's status, and kafkadiag's as the module's table says
    for role, (burrow_says, kafkadiag_says) in expected.items():
        key = (topics[role], 0)
        both = {"role": role, "burrow": theirs[role], "kafkadiag": ours[role]}
        assert theirs[role]["partitions"] == {key: burrow_says}, (both, burrow.log_tail())
        assert theirs[role]["group"] == group_status_of(burrow_says), both
        # (time, committed offset, high watermark) of each sample: what kafkadiag judged
        judged = recorded_series(record, groups[role])
        assert ours[role]["partitions"] == {key: kafkadiag_says}, (both, judged)
        # the group statuses agree even where the partition statuses differ (STALL and STOP are ERR)
        assert ours[role]["group"] == theirs[role]["group"], both
