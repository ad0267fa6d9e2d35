"""One read-only ZooKeeper session through kazoo, used for waves of pipelined reads.

A wave queues every read of one level on kazoo's connection (`pipelining`) before waiting for any answer,
so 10,000 offsets cost one round trip's latency plus the server's time, not 10,000 round trips.
Every wait is bounded by the scan's deadline; a session that is lost or expires, or a server that
stops answering, ends the wave with what was read and names why (`lost`). The session is opened
read-only-capable (a ZooKeeper in read-only mode is still read) and never creates, sets or
deletes a node, nor sets a watch.
"""

from __future__ import annotations

import atexit
import logging
import threading
import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kazoo.client import KazooClient
from kazoo.exceptions import (
    ConnectionLoss,
    KazooException,
    NoAuthError,
    NoNodeError,
    SessionExpiredError,
)
from kazoo.handlers.threading import KazooTimeoutError
from kazoo.protocol.states import KazooState
from kazoo.retry import KazooRetry

from kafkadiag.collect.zookeeper.framing import DECODING_ERRORS, MAX_FRAME_BYTES, ProtocolGuard
from kafkadiag.collect.zookeeper.pipelining import PollHandler, queue_reads
from kafkadiag.collect.zookeeper.security import NO_SECURITY, ZooKeeperSecurity

GET_DATA = "data"
GET_CHILDREN = "children"
NO_ANSWER = "no answer from ZooKeeper within --timeout"
# How often the wait for a session looks whether the server turned out not to be ZooKeeper.
_SETTLE_POLL_S = 0.05
# A refused connection is known at once. It is asked again for this long (a ZooKeeper being
# restarted opens its port within moments), then reported: the rest of --timeout would only hear
# the same refusal.
REFUSED_RETRY_S = 1.0


class ZooKeeperSessionError(Exception):
    """No session could be had; `reason` says why, in words for the user."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


class NotZooKeeperError(ZooKeeperSessionError):
    """The server answered, but not as ZooKeeper does (an HTTP or TLS port, a broken proxy)."""


class RefusedError(ZooKeeperSessionError):
    """Every server refused the connection for REFUSED_RETRY_S: nothing listens there."""


@dataclass(frozen=True)
class Failure:
    """A read that got an error (NoNode, NoAuth ...) or no answer at all."""

    missing: bool
    reason: str


def parse_hosts(zookeeper: str) -> tuple[str, str]:
    """Split "h1:2181,h2:2181/chroot" into ("h1:2181,h2:2181", "/chroot" or "")."""
    hosts, slash, chroot = zookeeper.partition("/")
    return hosts, (slash + chroot).rstrip("/") if slash else ""


class KazooSession:
    def __init__(self, zookeeper: str, timeout_s: float, security: ZooKeeperSecurity = NO_SECURITY) -> None:
        hosts, _ = parse_hosts(zookeeper)
        if not hosts.strip(","):
            raise ZooKeeperSessionError(f"no ZooKeeper host in {zookeeper!r}")
        self.lost: str | None = None
        self._causes = _ConnectionLog()
        logger = logging.getLogger("kafkadiag.kazoo")
        logger.propagate = False
        logger.handlers[:] = [self._causes]
        logger.setLevel(logging.INFO)
        self.client = KazooClient(
            hosts=zookeeper,
            timeout=max(timeout_s, 1.0),  # the session timeout kazoo negotiates
            read_only=True,
            randomize_hosts=False,  # the order given, like the other clients
            connection_retry=KazooRetry(max_tries=-1, delay=0.05, max_delay=0.5, ignore_expire=False),
            command_retry=None,
            handler=PollHandler(),
            logger=logger,
            **security.kazoo_options(),
        )
        self.client.add_listener(self._on_state)
        self.protocol_error: str | None = None
        self._guard = ProtocolGuard(
            self.client, self._on_protocol_error, max(MAX_FRAME_BYTES, security.jute_maxbuffer or 0)
        )
        try:
            # kazoo's start() stops the client on a timeout and waits for its connection thread,
            # which a server trickling bytes holds for as long as it likes: wait here instead.
            self._wait_for_session(self.client.start_async(), timeout_s)
        except Exception as error:  # noqa: BLE001 - TLS and SASL set-up errors among others
            self.close()
            raise ZooKeeperSessionError(f"{type(error).__name__}: {error}") from None
        except BaseException:  # Ctrl-C while connecting: the started threads must not outlive it
            self.close()
            raise
        if self.protocol_error is not None:
            self.close()
            raise NotZooKeeperError(self.protocol_error)
        if not self.client.connected:
            self.close()
            if self._causes.only_refused:
                raise RefusedError(f"connection refused for {REFUSED_RETRY_S:g}s")
            raise ZooKeeperSessionError(
                self._guard.cause or self._causes.last or "no session within the time given"
            )

    def _wait_for_session(self, live: Any, timeout_s: float) -> None:
        """Until a session is had, the server is seen not to be ZooKeeper, or `timeout_s` is up
        (kazoo would otherwise reconnect to a wrong port until the time is up)."""
        started = time.monotonic()
        deadline = started + timeout_s
        while self.protocol_error is None:
            now = time.monotonic()
            remaining = deadline - now
            if remaining <= 0 or live.wait(min(_SETTLE_POLL_S, remaining)):
                return
            if self._causes.only_refused and now - started >= REFUSED_RETRY_S:
                return

    def _on_protocol_error(self, message: str) -> None:
        # On kazoo's connection thread; the first reason is the one told.
        if self.protocol_error is None:
            self.protocol_error = message

    def _on_state(self, state: str) -> None:
        if state == KazooState.LOST and self.lost is None:
            self.lost = "ZooKeeper session lost while reading (session expired or closed)"

    def wave(self, kind: str, paths: Sequence[str], deadline: float) -> list[Any]:
        """Answers in the order of `paths`: (data, stat), [children], or a Failure."""
        if self.lost is None and self.protocol_error is not None:
            self.lost = self.protocol_error
        if self.lost is not None:
            return [Failure(False, self.lost)] * len(paths)
        pending = queue_reads(self.client, kind == GET_CHILDREN, paths, deadline)
        answers: list[Any] = []
        for result in pending:
            if self.lost is not None:
                answers.append(Failure(False, self.lost))
                continue
            try:
                answers.append(result.get(timeout=max(deadline - time.monotonic(), 0.001)))
            except KazooTimeoutError:
                self.lost = f"ZooKeeper connection lost while reading ({NO_ANSWER})"
                answers.append(Failure(False, self.lost))
            except NoNodeError:
                answers.append(Failure(True, "NoNode"))
            except NoAuthError:
                answers.append(Failure(False, "not allowed to read (ZooKeeper ACL)"))
            except (ConnectionLoss, SessionExpiredError) as error:
                self.lost = (
                    self.protocol_error or f"ZooKeeper connection lost while reading ({type(error).__name__})"
                )
                answers.append(Failure(False, self.lost))
            except KazooException as error:
                answers.append(Failure(False, type(error).__name__))
            except DECODING_ERRORS as error:
                # A reply kazoo could not decode (cut inside its frame): not ZooKeeper speaking.
                self.lost = self._guard.undecodable_reply(error)
                answers.append(Failure(False, self.lost))
        return answers

    def close(self, wait_s: float = 1.0) -> None:
        """Close the session; a connection stuck in a read (a server that trickles bytes) is
        left to its daemon thread after `wait_s` rather than holding the command up."""

        def stop() -> None:
            try:
                self.client.stop()
                self.client.close()
            except Exception:  # noqa: BLE001 - closing a dead session may fail in many ways
                pass

        closer = threading.Thread(target=stop, name="kafkadiag-zookeeper-close", daemon=True)
        closer.start()
        closer.join(wait_s)
        if closer.is_alive():
            # kazoo's handler registers an exit hook that joins its worker threads without a
            # time limit; the close that gave up here would otherwise hold the process at exit.
            atexit.unregister(self.client.handler.stop)


class _ConnectionLog(logging.Handler):
    """The last cause kazoo logged while connecting (refused, TLS, auth ...): kazoo's own
    timeout error says only that no session came."""

    def __init__(self) -> None:
        super().__init__(logging.INFO)
        self.last: str | None = None
        self.refusals = 0
        self.other_causes = 0

    @property
    def only_refused(self) -> bool:
        """Every cause so far was a refused connection (every server, when several are named)."""
        return self.refusals > 0 and self.other_causes == 0

    def emit(self, record: logging.LogRecord) -> None:
        message = record.getMessage()
        # "Connection dropped: socket connection error: Connection refused", TLS and auth errors;
        # not kazoo's closing summary ("Failed connecting to Zookeeper within the ... policy").
        if record.levelno >= logging.WARNING and not message.startswith("Failed connecting to Zookeeper"):
            self.last = message.splitlines()[0][:300]
            if message.endswith("Connection refused"):
                self.refusals += 1
            else:
                self.other_causes += 1
