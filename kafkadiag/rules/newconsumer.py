"""How the Java KafkaConsumer (0.9 to 3.x, the poll model) and its threads look in a dump."""

from __future__ import annotations

import re
from collections.abc import Callable

from kafkadiag.model import Frame, Thread, ThreadDump, ThreadStatus
from kafkadiag.rules import stackindex, stacks
from kafkadiag.rules.base import Evidence
from kafkadiag.rules.context import AnalysisContext
from kafkadiag.rules.kd103_hidden_wait_deadlock import HIDDEN_WAITS

KAFKA_CONSUMER_POLL = ("KafkaConsumer.poll",)
HEARTBEAT_NAME = re.compile(r"^kafka-coordinator-heartbeat-thread(?: \| (?P<group>.+))?$")
HEARTBEAT_RUN = ("AbstractCoordinator$HeartbeatThread.run",)
COORDINATOR_CLASSES = (
    "org.apache.kafka.clients.consumer.internals.AbstractCoordinator",
    "org.apache.kafka.clients.consumer.internals.ConsumerCoordinator",
    "org.apache.kafka.clients.consumer.internals.ConsumerNetworkClient",
)
# Where a client thread legitimately is while it holds the coordinator: doing network I/O.
NETWORK_POLL = (
    "ConsumerNetworkClient.poll",
    "NetworkClient.poll",
    "Selector.poll",
    "Selector.select",
    "EPoll.wait",
    "EPollArrayWrapper.epollWait",
)
POLL_THREAD_NAME = re.compile(r"poll|consum|kafka|listener", re.IGNORECASE)
APPLICATION_POLL_FRAME = re.compile(r"poll|consum", re.IGNORECASE)
NAME_FAMILY = re.compile(r"^([A-Za-z0-9]+[-_.])")
POOL_WORKER_FRAMES = ("ThreadPoolExecutor$Worker.run", "ForkJoinWorkerThread.run")
# The clients' own I/O threads, named "kafka-..." but never a consumer's poll thread: the
# producer's ("kafka-producer-network-thread | <client.id>", the Sender) and the admin client's.
PRODUCER_IO_THREAD_NAME = "kafka-producer-network-thread"
PRODUCER_IO_RUN = "org.apache.kafka.clients.producer.internals.Sender.run"
ADMIN_IO_THREAD_NAME = "kafka-admin-client-thread"
ADMIN_IO_RUN = "org.apache.kafka.clients.admin.KafkaAdminClient$AdminClientRunnable.run"
CLIENT_IO_THREAD_NAMES = (PRODUCER_IO_THREAD_NAME, ADMIN_IO_THREAD_NAME)
CLIENT_IO_THREAD_RUNS = (PRODUCER_IO_RUN, ADMIN_IO_RUN)


# A broker's and ZooKeeper's own code. Their threads carry "kafka" in their names
# ("kafka-log-cleaner-thread-0", "kafka-request-handler-3") and wait on latches when idle (the
# log cleaner pauses in ShutdownableThread.pause, a CountDownLatch, on a real 4.1.1 broker): none
# is a consumer's poll thread. The old consumer's fetchers run kafka.server's AbstractFetcherThread
# under kafka.consumer code, so they stay clients.
SERVER_PACKAGES = (
    "kafka.Kafka",
    "kafka.server.",
    "kafka.log.",
    "kafka.network.",
    "kafka.controller.",
    "kafka.coordinator.",
    "kafka.cluster.",
    "kafka.raft.",
    "kafka.zk.",
    "org.apache.kafka.server.",
    "org.apache.kafka.storage.",
    "org.apache.kafka.raft.",
    "org.apache.kafka.controller.",
    "org.apache.kafka.coordinator.",
    "org.apache.kafka.metadata.",
    "org.apache.kafka.image.",
    "org.apache.kafka.queue.",
    "org.apache.kafka.snapshot.",
    "org.apache.zookeeper.server.",
)
OLD_CONSUMER_PACKAGE = "kafka.consumer."


def runs_server_code(thread: Thread) -> bool:
    """A broker's or ZooKeeper's internal thread, by the code in its stack."""
    functions = [frame.function for frame in thread.frames]
    if any(function.startswith(OLD_CONSUMER_PACKAGE) for function in functions):
        return False
    return any(function.startswith(SERVER_PACKAGES) for function in functions)


# ConsumerNetworkClient's lock (a fair ReentrantLock) is held only inside ConsumerNetworkClient's
# own methods, for a network poll bounded by the heartbeat interval at most, and never while
# application code runs (completion handlers fire outside it): a heartbeat thread parked on it
# waits its turn. Real 4.1.1 consumers: caught up, parked there under ConsumerNetworkClient.poll
# in three dumps in a row, the poll thread idle in ConsumerNetworkClient.poll holding it
# (fixtures/captured/real-new-consumer-healthy-4.1.1); closing, under
# ConsumerNetworkClient.isUnavailable while close() commits (real-new-consumer-close-hang-4.1.1).
NETWORK_CLIENT_LOCK_WAIT = ("ReentrantLock.lock",)
NETWORK_CLIENT = "org.apache.kafka.clients.consumer.internals.ConsumerNetworkClient."


def waits_for_network_client(thread: Thread) -> bool:
    """A heartbeat thread taking the network client's lock: a momentary wait, by design."""
    lock = stacks.index_of(thread, *NETWORK_CLIENT_LOCK_WAIT, suffix=True)
    if lock is None or lock + 1 >= len(thread.frames) or not is_heartbeat(thread):
        return False
    return thread.frames[lock + 1].function.startswith(NETWORK_CLIENT)


def is_heartbeat(thread: Thread) -> bool:
    return bool(HEARTBEAT_NAME.match(thread.name)) or stacks.has_frame(thread, *HEARTBEAT_RUN, suffix=True)


def heartbeat_positions(dump: ThreadDump) -> list[int]:
    """Positions of the threads `is_heartbeat` accepts, in dump order."""
    by_stack = stackindex.positions_with(dump, *HEARTBEAT_RUN, suffix=True)
    by_name = [position for position, thread in enumerate(dump.threads) if HEARTBEAT_NAME.match(thread.name)]
    return sorted({*by_stack, *by_name})


def disabled_heartbeat(dump: ThreadDump) -> Thread | None:
    """The dump's one classic heartbeat thread when it is disabled: WAITING in Object.wait() with
    no timeout under HeartbeatThread.run, as it is from the moment the member (re)joins the group
    until it has its assignment, and after it left (real 4.1.1: a member waiting in a rebalance, a
    member past max.poll.interval.ms). Between heartbeats it waits with a timeout. With several
    consumers in the process nothing in the dump says which heartbeat thread is whose: None."""
    positions = heartbeat_positions(dump)
    if len(positions) != 1:
        return None
    heartbeat = dump.threads[positions[0]]
    if heartbeat.status is not ThreadStatus.IN_OBJECT_WAIT or not heartbeat.frames:
        return None
    if heartbeat.frames[0].function != "java.lang.Object.wait":
        return None
    return heartbeat if stacks.has_frame(heartbeat, *HEARTBEAT_RUN, suffix=True) else None


def pollers(dump: ThreadDump) -> frozenset[tuple[str, int | None]]:
    """Threads (name, OS id) that are in KafkaConsumer.poll in this dump."""
    polling = stackindex.threads_with(dump, *KAFKA_CONSUMER_POLL, suffix=True)
    return frozenset(thread.identity for thread in polling)


def looks_like_poll_thread(thread: Thread, polled: frozenset[tuple[str, int | None]]) -> bool:
    """A consumer's poll thread, judged by its stack history (`polled`: threads seen in
    KafkaConsumer.poll in any dump of the process), its name or its application code."""
    if is_heartbeat(thread) or stacks.has_frame(thread, *POOL_WORKER_FRAMES, suffix=True):
        return False
    if thread.name.startswith(CLIENT_IO_THREAD_NAMES) or stacks.has_frame(thread, *CLIENT_IO_THREAD_RUNS):
        return False
    if thread.identity in polled or stacks.has_frame(thread, *KAFKA_CONSUMER_POLL, suffix=True):
        return True
    if runs_server_code(thread):
        return False
    if POLL_THREAD_NAME.search(thread.name):
        return True
    return any(
        APPLICATION_POLL_FRAME.search(frame.function.rpartition(".")[2])
        for frame in thread.frames
        if not stacks.is_library(frame)
    )


def busy_workers(dump: ThreadDump, exclude: set[str]) -> list[Thread]:
    return busy_workers_among([thread for thread in dump.threads if thread.name not in exclude])


def busy_workers_among(threads: list[Thread]) -> list[Thread]:
    """Application threads busy with something other than waiting for work: candidate workers.

    Pool threads not waiting for their next task, and plain threads in application code that
    are not idle; the heartbeat, the poll threads themselves and a main() parked for the
    process's lifetime are left out.
    """
    busy = []
    for thread in threads:
        if not thread.frames or is_heartbeat(thread):
            continue
        if stacks.is_idle_wait(thread) or stacks.has_frame(thread, *KAFKA_CONSUMER_POLL, suffix=True):
            continue
        application = stacks.first_application_frame(thread)
        if application is None:
            continue
        if all(frame.function.endswith(".main") for frame in thread.frames if not stacks.is_library(frame)):
            continue
        busy.append(thread)
    return busy


def families(dump: ThreadDump) -> dict[str, list[Thread]]:
    """Threads by the first word of their name ("payments-" for "payments-worker-1")."""
    grouped: dict[str, list[Thread]] = {}
    for thread in dump.threads:
        family = NAME_FAMILY.match(thread.name)
        if family is not None:
            grouped.setdefault(family.group(1), []).append(thread)
    return grouped


def workers_of(
    poll_thread: Thread,
    families: dict[str, list[Thread]],
    polled: frozenset[tuple[str, int | None]],
    all_candidates: Callable[[], list[Thread]],
    family_workers: dict[str, list[Thread]],
) -> list[Thread]:
    """The busy workers that belong to this poll thread.

    When names tell ("payments-poll-0" and "payments-worker-1" share "payments"), only that
    family is examined - cheap on a dump of thousands of threads; otherwise every busy thread that
    is not a poll thread itself (`all_candidates`, computed once per dump by the caller).
    """
    family = NAME_FAMILY.match(poll_thread.name)
    if family is not None:
        prefix = family.group(1)
        busy_kin = family_workers.get(prefix)
        if busy_kin is None:
            # Once per family and dump: a dump may hold thousands of poll threads of one family.
            kin = families.get(prefix, [])
            busy_kin = family_workers[prefix] = [
                t for t in busy_workers_among(kin) if not looks_like_poll_thread(t, polled)
            ]
        related = [t for t in busy_kin if t.name != poll_thread.name]
        if related:
            return related
    return [t for t in all_candidates() if t.name != poll_thread.name]


def worker_candidates(dump: ThreadDump, polled: frozenset[tuple[str, int | None]]) -> list[Thread]:
    """Busy threads of a dump that are not poll threads themselves: the possible workers."""
    return [thread for thread in busy_workers(dump, set()) if not looks_like_poll_thread(thread, polled)]


class PollThreads:
    """Answers KD301/KD302 share: is this a poll thread, which busy threads are its workers, and
    the evidence that quotes them. Per-dump work is cached in the analysis context."""

    def __init__(self, context: AnalysisContext) -> None:
        self.context = context
        self.dump = context.dump
        self.polled = frozenset().union(*(context.cached("pollers", d, pollers) for d in context.series))

    def is_poll_thread(self, thread: Thread) -> bool:
        return looks_like_poll_thread(thread, self.polled)

    def named(self, thread: Thread) -> str:
        """ "Poll thread <name>", or, when no dump shows it in KafkaConsumer.poll, what it was told
        by (SPARK-10125's pool-1-thread-1-ScalaTest-running-StreamingListenerSuite, a test thread
        with no Kafka frame, was a poll thread by the "Listener" in its name alone)."""
        if thread.identity in self.polled or stacks.has_frame(thread, *KAFKA_CONSUMER_POLL, suffix=True):
            return f"Poll thread {thread.name}"
        by = "its name" if POLL_THREAD_NAME.search(thread.name) else "its own code's method names"
        return (
            f"{thread.name}, a consumer's poll thread by {by} (no dump read shows it in KafkaConsumer.poll),"
        )

    def _candidates(self) -> list[Thread]:
        # Computed once per dump, and only when a poll thread is found.
        return self.context.cached(
            "worker-candidates", self.dump, lambda d: worker_candidates(d, self.polled)
        )

    def workers_of(self, thread: Thread) -> list[Thread]:
        return workers_of(
            thread,
            self.context.cached("families", self.dump, families),
            self.polled,
            self._candidates,
            self.context.cached("family-workers", self.dump, lambda _: {}),
        )

    def evidence(self, thread: Thread, index: int, workers: list[Thread]) -> list[Evidence]:
        """The poll thread's header and waiting frame, its caller, and each worker's top frame."""
        evidence = [self.context.header(thread), self.context.frame(thread, index)]
        caller = stacks.first_application_frame(thread, index)
        if caller is not None:
            evidence.append(self.context.frame(thread, caller))
        for worker in workers[:5]:
            evidence.append(self.context.header(worker))
            if worker.frames:
                evidence.append(self.context.frame(worker, 0))
        return evidence


# Workers described by what they do in a finding's message; the rest are counted (a pool of
# thousands reads no better for each being listed, and every poll thread of the pool lists them).
DESCRIBED_WORKERS = 10


def describe_workers(workers: list[Thread]) -> str:
    described = ", ".join(f"{worker.name} ({stacks.doing(worker)})" for worker in workers[:DESCRIBED_WORKERS])
    more = len(workers) - DESCRIBED_WORKERS
    return described + (f" and {more} more" if more > 0 else "")


# -- a poll thread held in the application's own code (KD310; KD307 leaves such threads to it) ---

# Kafka Streams' stream thread drives its consumer as an application's poll thread does: one loop
# polls, processes the records and runs the punctuators (StreamThread.runOnce, 4.1.1).
STREAM_THREAD_RUN = ("org.apache.kafka.streams.processor.internals.StreamThread.run",)
# Where the client calls back into the application from inside poll(): the rebalance listener,
# called by ConsumerCoordinator.onJoinPrepare/onJoinComplete up to 3.6, through
# ConsumerRebalanceListenerInvoker from 3.7 on, and with group.protocol=consumer from
# AsyncKafkaConsumer's background-event processing, on the application's thread (real 4.1.1
# captures: fixtures/captured/real-new-consumer-listener-blocks-*).
LISTENER_METHODS = frozenset({"onPartitionsRevoked", "onPartitionsAssigned", "onPartitionsLost"})
STREAMS_PUNCTUATE = ("StreamTask.punctuate", "PunctuationQueue.maybePunctuate")
STREAMS_PROCESS = ("ProcessorNode.process", "SourceNode.process", "StreamTask.process")
_CLIENT_PACKAGES = ("org.apache.kafka.", "kafka.")
# Waiting, sleeping or blocked: RUNNABLE counts only in blocking I/O (stacks.BLOCKING_IO_FRAMES).
_HELD_STATUSES = frozenset(
    {
        ThreadStatus.BLOCKED,
        ThreadStatus.PARKED,
        ThreadStatus.PARKED_TIMED,
        ThreadStatus.IN_OBJECT_WAIT,
        ThreadStatus.IN_OBJECT_WAIT_TIMED,
        ThreadStatus.SLEEPING,
    }
)
# A hand-off into a queue is KD302's, as waiting on workers (HIDDEN_WAITS) is KD301's.
_HANDOFF_METHODS = frozenset({"put", "offer", "transfer"})


def is_stream_thread(thread: Thread) -> bool:
    return stacks.has_frame(thread, *STREAM_THREAD_RUN)


POLL_WORD = re.compile(r"poll", re.IGNORECASE)
CONSUMER_IO_THREAD = "consumer_background_thread"


def has_consumer_client(dump: ThreadDump) -> bool:
    """A Java consumer's own thread is in the dump: a heartbeat thread (classic protocol) or the
    background thread of group.protocol=consumer."""
    return bool(heartbeat_positions(dump)) or any(t.name == CONSUMER_IO_THREAD for t in dump.threads)


def drives_a_consumer(thread: Thread, polled: frozenset[tuple[str, int | None]], client_seen: bool) -> bool:
    """A thread held outside poll() is a poll thread only on the stack's word: it is inside
    KafkaConsumer.poll now (a callback), was in another dump of the series, or is a Kafka Streams
    thread; otherwise its name or one of its application methods says "poll" and the dump holds a
    consumer's own thread. (Names that say "consumer" alone are too common outside Kafka: the
    public corpus's "consumerA" threads are a producer/consumer demo.)"""
    if is_heartbeat(thread) or stacks.has_frame(thread, *POOL_WORKER_FRAMES, suffix=True):
        return False
    if is_stream_thread(thread) or thread.identity in polled:
        return True
    if stacks.has_frame(thread, *KAFKA_CONSUMER_POLL, suffix=True):
        return True
    if not client_seen:
        return False
    return bool(POLL_WORD.search(thread.name)) or any(
        POLL_WORD.search(frame.method) for frame in thread.frames if not stacks.is_library(frame)
    )


def held_under(frames: tuple[Frame, ...]) -> int | None:
    """The topmost application frame, when every frame above it is the JDK's (the wait is the
    application's own, not inside Kafka's code) and none is a wait another rule reports."""
    application = next((index for index, frame in enumerate(frames) if not stacks.is_library(frame)), None)
    if application is None:
        return None
    for frame in frames[:application]:
        if frame.function.startswith(_CLIENT_PACKAGES) or frame.function in HIDDEN_WAITS:
            return None
        if frame.function.startswith("java.util.concurrent.") and frame.method in _HANDOFF_METHODS:
            return None
    return application


def held_in_application(thread: Thread) -> int | None:
    """Index of the application frame under which the thread is blocked - a socket read that waits
    for an answer, a lock, a sleep - or None when it runs (CPU), idles or waits inside Kafka."""
    if not thread.frames or stacks.is_idle_wait(thread):
        return None
    if thread.status is ThreadStatus.RUNNABLE:
        if thread.frames[0].function not in stacks.BLOCKING_IO_FRAMES:
            return None
    elif thread.status not in _HELD_STATUSES:
        return None
    return held_under(thread.frames)
