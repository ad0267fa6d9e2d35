"""Waves queued on kazoo's connection at once answer what kazoo's own calls answer, in order.

`pipelining` reaches into kazoo (its request queue and the socket pair that wakes its connection
thread): a kazoo release that changes either fails here, on a real ZooKeeper, before a scan
silently reads nothing.
"""

from __future__ import annotations

import socket
import time
import uuid

from kafkadiag.collect.zookeeper.pipelining import PollHandler
from kafkadiag.collect.zookeeper.session import GET_CHILDREN, GET_DATA, Failure, KazooSession
from tests.infra import workload
from tests.infra.servers import ServerProcess


def _tree(zookeeper: ServerProcess, nodes: int) -> str:
    root = f"/pipelining-{uuid.uuid4().hex[:8]}"
    client = workload.zk_client(zookeeper.address)
    try:
        client.ensure_path(root)
        transaction = client.transaction()
        for index in range(nodes):
            transaction.create(f"{root}/{index}", str(index * 7).encode())
        transaction.commit()
    finally:
        client.stop()
        client.close()
    return root


def test_a_wave_of_thousands_of_reads_answers_each_path_with_its_own_value(zookeeper: ServerProcess) -> None:
    # GIVEN 3,000 znodes under a chroot, each holding its own value
    root = _tree(zookeeper, 3000)
    session = KazooSession(zookeeper.address + root, 10.0)
    try:
        # WHEN one wave lists them and the next reads all of them, a missing one among them
        (children,) = session.wave(GET_CHILDREN, ["/"], time.monotonic() + 10)
        paths = [f"/{name}" for name in sorted(children, key=int)] + ["/absent"]
        answers = session.wave(GET_DATA, paths, time.monotonic() + 10)
    finally:
        session.close()
    # THEN every answer is its own path's value, in the order asked, and the absent one is NoNode
    assert len(children) == 3000
    assert [data for data, _stat in answers[:-1]] == [str(index * 7).encode() for index in range(3000)]
    assert answers[-1] == Failure(True, "NoNode")


def test_a_wave_after_the_session_closed_fails_each_read_instead_of_waiting(zookeeper: ServerProcess) -> None:
    # GIVEN a session whose kazoo client was stopped (its socket pair closed)
    session = KazooSession(zookeeper.address, 10.0)
    session.client.stop()
    started = time.monotonic()
    # WHEN a wave is asked of it
    answers = session.wave(GET_DATA, ["/", "/zookeeper"], time.monotonic() + 5)
    session.close()
    # THEN each read fails at once with a reason, none waits out the deadline
    assert len(answers) == 2 and all(isinstance(answer, Failure) for answer in answers)
    assert time.monotonic() - started < 2


def test_the_poll_select_reports_readable_and_writable_sockets_as_kazoo_expects() -> None:
    # GIVEN a socket pair with a byte waiting on one side
    left, right = socket.socketpair()
    try:
        right.send(b"\0")
        handler = PollHandler()
        # WHEN kazoo's select asks for readers and writers, by object and by descriptor
        readable, writable, exceptional = handler.select([left, right.fileno()], [right], [], 1.0)
        # THEN the side with the byte is readable, the other is not, and both can be written
        assert readable == [left] and writable == [right] and exceptional == []
        # AND with nothing to read, a select with a timeout returns empty after it
        left.recv(1)
        started = time.monotonic()
        assert handler.select([left], [], [], 0.2) == ([], [], [])
        assert time.monotonic() - started >= 0.15
    finally:
        left.close()
        right.close()
