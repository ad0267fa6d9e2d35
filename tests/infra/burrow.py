"""Burrow (LinkedIn's consumer lag checker, Debian's `burrow` 1.2.1) beside a real broker, as the
oracle for kafkadiag's Burrow statuses.

Burrow is started from its Debian binary with a configuration written for the test: its own
coordination in a ZooKeeper root of its own, a `kafka` cluster module refreshing the brokers' high
watermarks every second, a `kafka` consumer module reading commits from `__consumer_offsets`, a
`kafka_zk` consumer module reading the old consumer's `/consumers` (under the broker's chroot),
in-memory storage keeping `intervals` commits per partition, and the HTTP API on a free port. It
is stopped by PID like every other server of the tests.

Burrow speaks the Kafka protocol through sarama 1.22, which needs to be told the broker's release
(`kafka-version` of a client profile).
"""

from __future__ import annotations

import json
import shutil
import time
import urllib.error
import urllib.request
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from kafkadiag.sandbox.servers import ServerProcess, free_port, spawn, starting

CLUSTER = "local"
BINARY = "Burrow"
# Debian's package puts it here; `.ci/run` installs it with apt-get.
DEBIAN_PATH = "/usr/bin/Burrow"


def burrow_binary() -> str:
    """The Burrow executable; an AssertionError (never a skip) when it is not installed: the
    side-by-side tests exist to compare with it."""
    found = shutil.which(BINARY) or (DEBIAN_PATH if Path(DEBIAN_PATH).exists() else None)
    if found is None:
        raise AssertionError(
            "Burrow is not installed: `apt-get install -y burrow` (Debian's package, 1.2.1); "
            ".ci/run installs it on a fresh machine"
        )
    return found


@dataclass
class Burrow:
    server: ServerProcess
    workdir: Path

    @property
    def url(self) -> str:
        return f"http://{self.server.address}"

    def get(self, path: str) -> dict[str, Any]:
        """GET a path of Burrow's API; its JSON answer (Burrow answers errors with JSON too)."""
        try:
            with urllib.request.urlopen(self.url + path, timeout=10) as response:  # noqa: S310 - 127.0.0.1
                document: dict[str, Any] = json.loads(response.read())
        except urllib.error.HTTPError as error:
            document = json.loads(error.read())
        return document

    def group_lag(self, group: str) -> dict[str, Any]:
        """`/lag`: the group's status with every partition's (`/status` lists only those not OK)."""
        return self.get(f"/v3/kafka/{CLUSTER}/consumer/{group}/lag")

    def group_status(self, group: str) -> dict[str, Any]:
        return self.get(f"/v3/kafka/{CLUSTER}/consumer/{group}/status")

    def partition_statuses(self, group: str) -> dict[tuple[str, int], str]:
        status = self.group_lag(group).get("status") or {}
        return {
            (entry["topic"], entry["partition"]): entry["status"] for entry in status.get("partitions") or []
        }

    def log_tail(self, characters: int = 4000) -> str:
        return self.server.log_tail(characters)

    def stop(self) -> None:
        self.server.stop()


def write_config(
    directory: Path,
    *,
    http_port: int,
    zookeeper: str,
    brokers: str,
    kafka_version: str,
    old_consumer_root: str | None,
    intervals: int,
    offset_refresh_s: int = 1,
) -> Path:
    """burrow.toml for one cluster. `old_consumer_root`: the ZooKeeper path above `/consumers`
    (the broker's chroot), or None to leave the old consumer's groups unread."""
    zookeeper_host = zookeeper.split("/", 1)[0]
    coordination_root = f"/burrow-{directory.name}"
    sections = [
        f'[general]\npidfile="{directory / "burrow.pid"}"\n',
        # An empty filename logs to stdout, which spawn() keeps in the server's log file.
        '[logging]\nlevel="info"\n',
        f'[zookeeper]\nservers=["{zookeeper_host}"]\ntimeout=6\nroot-path="{coordination_root}"\n',
        f'[client-profile.tests]\nclient-id="burrow-tests"\nkafka-version="{kafka_version}"\n',
        (
            f'[cluster.{CLUSTER}]\nclass-name="kafka"\nservers=["{brokers}"]\n'
            f'client-profile="tests"\ntopic-refresh=2\noffset-refresh={offset_refresh_s}\n'
        ),
        (
            f'[consumer.{CLUSTER}]\nclass-name="kafka"\ncluster="{CLUSTER}"\nservers=["{brokers}"]\n'
            'client-profile="tests"\nstart-latest=false\n'
        ),
        f'[httpserver.default]\naddress="127.0.0.1:{http_port}"\n',
        # min-distance 0: every commit is its own entry in the ring (1.2.1 merges commits closer
        # than min-distance seconds into the previous one).
        (
            f'[storage.default]\nclass-name="inmemory"\nworkers=4\nintervals={intervals}\n'
            "expire-group=604800\nmin-distance=0\n"
        ),
        # Burrow caches an evaluation for expire-cache seconds (10 by default): the tests ask
        # again within a second and must see a fresh one.
        '[evaluator.default]\nclass-name="caching"\nexpire-cache=1\n',
    ]
    if old_consumer_root is not None:
        # zookeeper-path is the part before "/consumers"; "/" would make 1.2.1 panic on "//consumers".
        sections.append(
            f'[consumer.{CLUSTER}_zk]\nclass-name="kafka_zk"\ncluster="{CLUSTER}"\n'
            f'servers=["{zookeeper_host}"]\nzookeeper-path="{old_consumer_root}"\nzookeeper-timeout=6\n'
        )
    path = directory / "burrow.toml"
    path.write_text("\n".join(sections))
    return path


def start_burrow(
    workdir: Path,
    *,
    zookeeper: str,
    brokers: str,
    kafka_version: str,
    old_consumer_root: str | None = None,
    intervals: int = 10,
    offset_refresh_s: int = 1,
    ready_timeout_s: float = 30.0,
) -> Burrow:
    """Burrow watching one broker; ready once its API lists the cluster with at least one topic
    (its first metadata refresh went through)."""
    binary = burrow_binary()
    workdir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    write_config(
        workdir,
        http_port=port,
        zookeeper=zookeeper,
        brokers=brokers,
        kafka_version=kafka_version,
        old_consumer_root=old_consumer_root,
        intervals=intervals,
        offset_refresh_s=offset_refresh_s,
    )
    argv = [binary, "-config-dir", str(workdir)]
    with starting(lambda: spawn("burrow", argv, workdir, port, env={"PATH": "/usr/bin:/bin"})) as server:
        burrow = Burrow(server, workdir)
        _wait_until_ready(burrow, ready_timeout_s)
    return burrow


def _wait_until_ready(burrow: Burrow, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    last = ""
    while time.monotonic() < deadline:
        if burrow.server.process.poll() is not None:
            raise AssertionError(f"Burrow exited {burrow.server.process.returncode}:\n{burrow.log_tail()}")
        try:
            topics = burrow.get(f"/v3/kafka/{CLUSTER}/topic").get("topics") or []
            if topics:
                return
            last = f"no topic listed yet: {topics}"
        except (OSError, ValueError) as error:
            last = str(error)
        time.sleep(0.3)
    raise AssertionError(f"Burrow not ready within {timeout_s}s ({last}):\n{burrow.log_tail()}")
