"""Topics and live producers for the sandbox's broker (kafka-python).

Records go one per batch: a broker that answers ListOffsets(latest) with the base offset of the
last batch plus one (Tansu does) then reports exact high watermarks.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Mapping, Sequence


def create_topics(bootstrap: str, partitions: Mapping[str, int], timeout_s: float = 20.0) -> int:
    """Create the topics and wait until the broker describes them; return the broker's node id."""
    from kafka import KafkaAdminClient
    from kafka.admin import NewTopic

    admin = KafkaAdminClient(bootstrap_servers=bootstrap, client_id="kafkadiag-sandbox")
    try:
        admin.create_topics([NewTopic(topic, count, 1) for topic, count in partitions.items()])
        deadline = time.monotonic() + timeout_s
        while True:
            described = {
                entry["name"]: len(entry["partitions"]) for entry in admin.describe_topics(list(partitions))
            }
            if all(described.get(topic) == count for topic, count in partitions.items()):
                break
            if time.monotonic() > deadline:
                raise TimeoutError(f"topics not described by the broker: {described}")
            time.sleep(0.1)
        cluster = admin.describe_cluster()
        return int(cluster["brokers"][0]["broker_id"])
    finally:
        admin.close()


class Producers:
    """One background thread writing `rate` records per second to every partition of the topics."""

    def __init__(self, bootstrap: str, partitions: Mapping[str, int], rate: float = 5.0) -> None:
        self._bootstrap = bootstrap
        self._targets: Sequence[tuple[str, int]] = [
            (topic, partition) for topic, count in partitions.items() for partition in range(count)
        ]
        self._interval = 1.0 / rate
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="sandbox-producers", daemon=True)
        self.produced = 0
        self.error: Exception | None = None

    def start(self) -> None:
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        self._thread.join(timeout=10)

    def _run(self) -> None:
        from kafka import KafkaProducer

        try:
            producer = KafkaProducer(
                bootstrap_servers=self._bootstrap,
                batch_size=1,
                linger_ms=0,
                acks=1,
                client_id="sandbox-producer",
            )
        except Exception as error:  # noqa: BLE001 - reported by the demo
            self.error = error
            return
        try:
            while not self._stop.is_set():
                started = time.monotonic()
                futures = [
                    producer.send(topic, value=b"order %d" % self.produced, partition=partition)
                    for topic, partition in self._targets
                ]
                producer.flush(timeout=10)
                for future in futures:
                    future.get(timeout=10)
                self.produced += len(futures)
                self._stop.wait(max(0.0, self._interval - (time.monotonic() - started)))
        except Exception as error:  # noqa: BLE001 - reported by the demo
            self.error = error
        finally:
            producer.close(timeout=5)
