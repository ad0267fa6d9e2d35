"""A ZooKeeper session that cannot close in time must not hold the process at exit.

kazoo's threading handler registers an exit hook that joins its worker threads without a time
limit. When a close gives up (a worker stuck in a callback, a connection stuck in a read), the
command still has to end: the hook would otherwise wait for ever after the report was printed
or after Ctrl-C. Each case runs in its own interpreter, because the hang is at interpreter exit.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap

from tests.infra.servers import ServerProcess

EXIT_LIMIT_S = 20  # interpreter start-up and a one-second close, on a loaded machine

HELD_WORKER = textwrap.dedent(
    """
    import sys, threading
    from kafkadiag.collect.zookeeper.session import KazooSession
    session = KazooSession(sys.argv[1], 5.0)
    held = threading.Event()
    # A callback that never returns occupies kazoo's completion worker, as a callback stuck
    # on a lock or a slow listener would.
    session.client.handler.completion_queue.put(lambda: (held.set(), threading.Event().wait()))
    held.wait(5)
    session.close(wait_s=0.5)
    print("closed", flush=True)
    """
)

INTERRUPTED_WHILE_CONNECTING = textwrap.dedent(
    """
    import sys, threading, _thread
    from kafkadiag.collect.zookeeper import session as module
    # Ctrl-C lands while the session is being set up: the client has started its threads.
    real_start = module.KazooClient.start_async
    def start_then_interrupt(client):
        result = real_start(client)
        client.handler.completion_queue.put(lambda: threading.Event().wait())
        _thread.interrupt_main()
        return result
    module.KazooClient.start_async = start_then_interrupt
    try:
        module.KazooSession(sys.argv[1], 5.0)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    """
)


def run_to_exit(script: str, zookeeper: ServerProcess) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", script, zookeeper.address],
        capture_output=True,
        text=True,
        timeout=EXIT_LIMIT_S,
    )


def test_a_close_that_gives_up_does_not_hold_the_exit(zookeeper: ServerProcess) -> None:
    # GIVEN a session whose kazoo worker is stuck, WHEN it is closed and the interpreter ends
    finished = run_to_exit(HELD_WORKER, zookeeper)
    # THEN the process ends (subprocess.run raises TimeoutExpired otherwise)
    assert finished.returncode == 0 and finished.stdout == "closed\n", finished.stderr


def test_ctrl_c_while_the_session_is_set_up_closes_it(zookeeper: ServerProcess) -> None:
    finished = run_to_exit(INTERRUPTED_WHILE_CONNECTING, zookeeper)
    assert finished.returncode == 0 and finished.stdout == "interrupted\n", finished.stderr
