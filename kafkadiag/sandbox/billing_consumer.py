"""The sandbox's Python consumer: a billing service on a kafka-python group consumer.

Run as `python -m kafkadiag.sandbox.billing_consumer --bootstrap-server B --group G --topic T`. The poll
loop (on the main thread) hands records to a pool of worker threads through a bounded queue and
commits what the workers finished. A line `hang` on stdin makes the payment gateway the workers
call stop answering: the workers sleep in it, the queue fills, and the poll loop blocks in
Queue.put, so it neither polls nor commits while the heartbeat thread keeps the member alive.
Answers `status` with one JSON line.
"""

from __future__ import annotations

import argparse
import json
import queue
import selectors
import sys
import threading
import time
from typing import Any

HANDOFF_CAPACITY = 8
WORKERS = 2


class PaymentGateway:
    """The downstream call every record needs; while hung, a call never returns."""

    def __init__(self) -> None:
        self.hung = threading.Event()

    def charge(self, record: Any) -> None:
        while self.hung.is_set():
            time.sleep(0.5)


class Progress:
    """The next offset to commit per partition, as the workers finish records."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._done: dict[Any, int] = {}

    def finished(self, partition: Any, offset: int) -> None:
        with self._lock:
            self._done[partition] = max(self._done.get(partition, 0), offset + 1)

    def snapshot(self) -> dict[Any, int]:
        with self._lock:
            return dict(self._done)


def worker_loop(handoff: queue.Queue[Any], gateway: PaymentGateway, progress: Progress) -> None:
    while True:
        record = handoff.get()
        gateway.charge(record)
        progress.finished((record.topic, record.partition), record.offset)


def commit(consumer: Any, progress: Progress) -> None:
    from kafka import TopicPartition
    from kafka.structs import OffsetAndMetadata

    offsets = {
        TopicPartition(topic, partition): OffsetAndMetadata(offset, "", -1)
        for (topic, partition), offset in progress.snapshot().items()
    }
    if offsets:
        consumer.commit(offsets)


def poll_loop(consumer: Any, handoff: queue.Queue[Any], progress: Progress) -> None:
    ready = False
    while True:
        batches = consumer.poll(timeout_ms=200)
        if not ready and consumer.assignment():
            # Ready once the group assigned the topic's partitions to this member.
            print("READY", flush=True)
            ready = True
        for records in batches.values():
            for record in records:
                handoff.put(record)  # blocks while the workers are stuck and the queue is full
        commit(consumer, progress)


def serve_commands(gateway: PaymentGateway, handoff: queue.Queue[Any], progress: Progress) -> None:
    # Waiting in a selector, as an event loop waits, so a thread dump shows this thread idle.
    selector = selectors.DefaultSelector()
    selector.register(sys.stdin, selectors.EVENT_READ)
    while True:
        selector.select()
        line = sys.stdin.readline()
        if not line:
            return
        command = line.strip()
        if command == "hang":
            gateway.hung.set()
            print("OK", flush=True)
        elif command == "status":
            done = {
                f"{topic}-{partition}": offset for (topic, partition), offset in progress.snapshot().items()
            }
            print(
                "STATUS "
                + json.dumps({"queued": handoff.qsize(), "capacity": HANDOFF_CAPACITY, "done": done}),
                flush=True,
            )
        else:
            print(f"ERROR unknown command {command}", flush=True)


def main(argv: list[str] | None = None) -> None:
    from kafka import KafkaConsumer

    parser = argparse.ArgumentParser()
    parser.add_argument("--bootstrap-server", dest="bootstrap", required=True)
    parser.add_argument("--group", required=True)
    parser.add_argument("--topic", required=True)
    args = parser.parse_args(argv)
    consumer = KafkaConsumer(
        args.topic,
        bootstrap_servers=args.bootstrap,
        group_id=args.group,
        client_id="billing-service",
        enable_auto_commit=False,
        auto_offset_reset="earliest",
        session_timeout_ms=10000,
        heartbeat_interval_ms=1000,
        max_poll_records=20,
    )
    handoff: queue.Queue[Any] = queue.Queue(maxsize=HANDOFF_CAPACITY)
    gateway = PaymentGateway()
    progress = Progress()
    for number in range(WORKERS):
        threading.Thread(
            target=worker_loop,
            args=(handoff, gateway, progress),
            name=f"billing-worker-{number}",
            daemon=True,
        ).start()
    threading.Thread(
        target=serve_commands, args=(gateway, handoff, progress), name="sandbox-commands", daemon=True
    ).start()
    poll_loop(consumer, handoff, progress)


if __name__ == "__main__":
    main()
