"""Questions rules ask of a stack: where is a frame, is the thread idle, what is it doing."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Iterable

from kafkadiag.model import Frame, Thread, ThreadStatus

# Frames of the runtime and of Kafka's client, skipped when naming "what the application does".
LIBRARY_PREFIXES = (
    "java.",
    "javax.",
    "jdk.",
    "sun.",
    "com.sun.",
    "kotlin.",
    "scala.",
    "kafka.",
    "org.apache.kafka.",
)

WAITING_STATUSES = frozenset(
    {
        ThreadStatus.PARKED,
        ThreadStatus.PARKED_TIMED,
        ThreadStatus.IN_OBJECT_WAIT,
        ThreadStatus.IN_OBJECT_WAIT_TIMED,
        ThreadStatus.BLOCKED,
        ThreadStatus.SLEEPING,
        ThreadStatus.IDLE,
    }
)

# Synchronizers that are locks: a thread parked on one waits for its holder, which only
# `jstack -l` shows. (A latch, a condition or a future has no holder.)
LOCK_SYNCS = (
    "ReentrantLock$NonfairSync",
    "ReentrantLock$FairSync",
    "ReentrantReadWriteLock$NonfairSync",
    "ReentrantReadWriteLock$FairSync",
    "Semaphore$NonfairSync",
    "Semaphore$FairSync",
)

# Where an idle worker of a pool waits for its next task.
IDLE_POOL_FRAMES = (
    "java.util.concurrent.ThreadPoolExecutor.getTask",
    "java.util.concurrent.ScheduledThreadPoolExecutor$DelayedWorkQueue.take",
    "java.util.concurrent.ForkJoinPool.awaitWork",
    "java.util.concurrent.ForkJoinPool.runWorker",
)


# Waiting for work, by design: such a thread is idle, not stuck, however long it waits.
IDLE_WAIT_FRAMES = (
    "ThreadPoolExecutor.getTask",
    "LinkedBlockingQueue.take",
    "LinkedBlockingQueue.poll",
    "ArrayBlockingQueue.take",
    "ArrayBlockingQueue.poll",
    "SynchronousQueue.take",
    "SynchronousQueue.poll",
    "DelayedWorkQueue.take",
    "LinkedTransferQueue.take",
    "ReferenceQueue.remove",
    "Reference.waitForReferencePendingList",
    "TimerThread.mainLoop",
    "ForkJoinPool.awaitWork",
    # An NIO selector waiting for its channels, on every platform: SelectorImpl.select and
    # lockAndDoSelect are common to all, the natives below them stand for stacks cut short.
    "SelectorImpl.select",
    "SelectorImpl.lockAndDoSelect",
    "EPoll.wait",
    "EPollArrayWrapper.epollWait",
    "KQueue.poll",
    "KQueueArrayWrapper.kevent0",
    "PollArrayWrapper.poll0",
    "DevPollArrayWrapper.poll0",
    "WindowsSelectorImpl$SubSelector.poll0",
    "WEPoll.wait",
    "PollsetArrayWrapper.pollsetPoll",
    "Net.accept",
    "ServerSocketChannelImpl.accept",
    "PlainSocketImpl.socketAccept",
    # A datagram listener waiting for the next packet (JGroups, SNMP, syslog receivers): up to
    # JDK 14 in PlainDatagramSocketImpl, from JDK 15 through a blocking DatagramChannel.
    "PlainDatagramSocketImpl.receive0",
    "PlainDatagramSocketImpl.peekData",
    "DatagramChannelImpl.blockingReceive",
    # The old consumer's fetcher (or an application's SimpleConsumer) waiting for the broker's
    # answer to a fetch: a broker with nothing new holds the fetch for fetch.wait.max.ms, so a
    # caught-up fetcher spends its life in this blocking socket read, RUNNABLE, by design (real
    # Kafka 0.8.2.2 and 1.1.1 dumps: fixtures/captured/real-old-consumer-healthy-*). A broker that
    # never answers is cut off by socket.timeout.ms and the fetch is sent again.
    "SimpleConsumer.fetch",
    "Thread.join",
    "Object.wait",  # unless it holds up others, which the lock rules report
)


# Reading a pipe or the terminal (System.in, a child process's output): RUNNABLE in native code
# for as long as nobody writes, by design. Reads of regular files do not wait.
INPUT_WAIT_FRAMES = ("java.io.FileInputStream.readBytes", "java.io.FileInputStream.read0")


# A thread RUNNABLE with one of these on top is blocked in the kernel, not running: a socket read
# or write that waits for the peer (JDK 13+ NioSocketImpl reads in SocketDispatcher.read0, a timed
# read parks in Net.poll; up to JDK 12 SocketInputStream.socketRead0), a connect that waits for an
# answer. The real Kafka captures' downstream calls that never answer show SocketDispatcher.read0
# (fixtures/captured/real-new-consumer-*, JDK 17).
BLOCKING_IO_FRAMES = frozenset(
    {
        "sun.nio.ch.SocketDispatcher.read0",
        "sun.nio.ch.SocketDispatcher.readv0",
        "sun.nio.ch.SocketDispatcher.write0",
        "sun.nio.ch.Net.poll",
        "sun.nio.ch.Net.connect0",
        "java.net.SocketInputStream.socketRead0",
        "java.net.SocketOutputStream.socketWrite0",
        "java.net.PlainSocketImpl.socketConnect",
    }
)


def is_waiting_for_input(thread: Thread) -> bool:
    return bool(thread.frames) and thread.frames[0].function in INPUT_WAIT_FRAMES


def is_idle_wait(thread: Thread) -> bool:
    return thread.status is not ThreadStatus.BLOCKED and has_frame(thread, *IDLE_WAIT_FRAMES, suffix=True)


# Thread -> its frames' functions joined by newlines, so that "is this function anywhere in the
# stack" is one substring search in C instead of a Python loop over the frames. Rules ask that
# question tens of thousands of times on a large dump. Keyed by id() with the frames kept for an
# identity check; emptied by the engine after each analysis.
_FUNCTIONS: dict[int, tuple[tuple[Frame, ...], str]] = {}


def _functions(thread: Thread) -> str:
    entry = _FUNCTIONS.get(id(thread.frames))
    if entry is None or entry[0] is not thread.frames:
        entry = _FUNCTIONS[id(thread.frames)] = (thread.frames, joined_functions(thread.frames))
    return entry[1]


def joined_functions(frames: tuple[Frame, ...]) -> str:
    """The frames' functions, each between newlines: what has_frame and runs_in_class search."""
    return "\n" + "\n".join([frame.function for frame in frames]) + "\n"


def runs_in_class(thread: Thread, class_name: str) -> bool:
    """Some frame of the thread runs in `class_name` or one of its nested classes or closures
    (`pkg.Channel.send`, `pkg.Channel$Inner.run`): one search of the joined functions."""
    return class_pattern(class_name).search(_functions(thread)) is not None


@functools.lru_cache(maxsize=512)
def class_pattern(class_name: str) -> re.Pattern[str]:
    # A method name holds no dot: "pkg.Channel.x.y" is a class of package pkg.Channel, not Channel.
    return re.compile("\n" + re.escape(class_name) + r"(?:\$|\.[^.\n]*\n)")


def forget_stacks() -> None:
    _FUNCTIONS.clear()


def index_of(thread: Thread, *functions: str, suffix: bool = False) -> int | None:
    """Index of the first (topmost) frame whose function is one of `functions`.

    With `suffix`, a function matches when it ends with one of them ("PartitionTopicInfo.enqueue"
    matches Kafka's Scala and Java class names alike).
    """
    if not has_frame(thread, *functions, suffix=suffix):
        return None
    if suffix:
        for index, frame in enumerate(thread.frames):
            if frame.function.endswith(functions):
                return index
        return None
    wanted = frozenset(functions)
    for index, frame in enumerate(thread.frames):
        if frame.function in wanted:
            return index
    return None


def has_frame(thread: Thread, *functions: str, suffix: bool = False) -> bool:
    if not thread.frames:
        return False
    return any(map(_functions(thread).__contains__, needles(functions, suffix)))


@functools.lru_cache(maxsize=512)
def needles(functions: tuple[str, ...], suffix: bool) -> tuple[str, ...]:
    """What to search the joined functions for: "X\n" matches a function ending in X."""
    if suffix:
        return tuple(function + "\n" for function in functions)
    return tuple("\n" + function + "\n" for function in functions)


def index_where(thread: Thread, predicate: Callable[[Frame], bool]) -> int | None:
    for index, frame in enumerate(thread.frames):
        if predicate(frame):
            return index
    return None


def is_library(frame: Frame) -> bool:
    return frame.function.startswith(LIBRARY_PREFIXES)


def first_application_frame(thread: Thread, start: int = 0) -> int | None:
    """Index of the topmost frame from `start` on that is application code, not library code."""
    for index in range(start, len(thread.frames)):
        if not is_library(thread.frames[index]):
            return index
    return None


def doing(thread: Thread) -> str:
    """A short description of what the thread is doing, for messages."""
    if not thread.frames:
        return f"{thread.status.value} with no stack"
    top = thread.frames[0].function
    application = first_application_frame(thread)
    if application is None or application == 0:
        where = top
    else:
        where = f"{top} under {thread.frames[application].function}"
    return f"{thread.status.value.lower().replace('_', ' ')} in {where}"


def names(threads: Iterable[Thread]) -> list[str]:
    return [thread.name for thread in threads]


def is_idle_pool_worker(thread: Thread) -> bool:
    return thread.status in WAITING_STATUSES and has_frame(thread, *IDLE_POOL_FRAMES)
