"""Bounded queues in a Java dump: who is parked putting into one, and who might take from it.

A thread blocked in put() waits on the queue's internal condition (ArrayBlockingQueue's notFull,
a SynchronousQueue's transfer stack), which has no owner: the dump links the putter to the queue's
class and condition, never to the thread that should take. Candidates for that thread are found
by role: threads parked taking from a queue of the same class show which application loop
consumes such queues, and a thread running that loop without taking is busy elsewhere (the
stalled consumer, or another one); threads running in the class the queue belongs to (the
caller of put: a channel, a connector) may be taking from it; for Kafka's old consumer also by
name (threads named after the fetcher's consumer id). All are guesses, and the findings say so.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

from kafkadiag.model import Frame, LockEvent, Thread, ThreadDump, ThreadStatus
from kafkadiag.rules import oldconsumer, stackindex, stacks

# Methods of a BlockingQueue / BlockingDeque / TransferQueue that wait for room or a taker. A
# plain offer() never waits, so a thread parked under offer is in the timed offer(e, t, unit).
PUT_METHODS = frozenset(
    {"put", "putFirst", "putLast", "offer", "offerFirst", "offerLast", "transfer", "tryTransfer"}
)
TAKE_METHODS = frozenset({"take", "takeFirst", "takeLast", "poll", "pollFirst", "pollLast", "drainTo"})

# Frames between the park and the queue's own method: the JDK's blocking machinery (JDK 8 to 21).
_MACHINERY_PREFIXES = (
    "jdk.internal.misc.Unsafe.",
    "sun.misc.Unsafe.",
    "java.util.concurrent.locks.",
    "java.util.concurrent.ForkJoinPool.managedBlock",
    "java.util.concurrent.ForkJoinPool.unmanagedBlock",
    "java.lang.Object.wait",
)
_PARKED = frozenset(
    {
        ThreadStatus.PARKED,
        ThreadStatus.PARKED_TIMED,
        ThreadStatus.IN_OBJECT_WAIT,
        ThreadStatus.IN_OBJECT_WAIT_TIMED,
    }
)


@dataclass(frozen=True)
class BoundedPut:
    index: int  # the putter's index in dump.threads
    put_frame: int  # index of the queue's put/offer/transfer frame
    queue_class: str  # "java.util.concurrent.ArrayBlockingQueue"
    waits_on: LockEvent | None  # the condition it is parked on, as the dump prints it

    def method(self, dump: ThreadDump) -> str:
        return dump.threads[self.index].frames[self.put_frame].function


def _is_queue_class(class_name: str) -> bool:
    simple = class_name.rpartition(".")[2]
    return simple.endswith(("Queue", "Deque"))


def queue_frame(thread: Thread, methods: frozenset[str]) -> int | None:
    """Index of the first frame below the JDK's blocking machinery if it is a queue's `methods`.

    Frames of the queue's own inner classes (SynchronousQueue$TransferStack.transfer,
    LinkedTransferQueue$DualNode.await) are machinery too.
    """
    return queue_frame_in(thread.frames, methods)


def queue_frame_in(frames: tuple[Frame, ...], methods: frozenset[str]) -> int | None:
    """`queue_frame` of a stack."""
    for index, frame in enumerate(frames):
        function = frame.function
        if function.startswith(_MACHINERY_PREFIXES):
            continue
        class_name = frame.class_name
        if "$" in class_name and _is_queue_class(class_name.partition("$")[0]):
            continue
        if frame.method in methods and _is_queue_class(class_name):
            return index
        return None
    return None


def bounded_puts(dump: ThreadDump) -> list[BoundedPut]:
    """Threads parked inside a queue's put (or timed offer, or transfer), in dump order."""
    found = []
    for index, put_frame in queue_frames(dump, PUT_METHODS):
        thread = dump.threads[index]
        if thread.status not in _PARKED:
            continue
        found.append(BoundedPut(index, put_frame, thread.frames[put_frame].class_name, thread.waits_for()))
    return found


def queue_frames(dump: ThreadDump, methods: frozenset[str]) -> list[tuple[int, int]]:
    """(thread index, `queue_frame`) of the threads in one of a queue's `methods`, in dump order."""
    answer = functools.partial(queue_frame_in, methods=methods)
    return stackindex.stack_answers(dump, ("queue-frame", methods), answer)


def consumer_loops(dump: ThreadDump, takers: list[tuple[int, int]]) -> set[str]:
    """The application functions from which the parked takers take (their first own frame below)."""
    loops = set()
    for index, take in takers:
        application = stacks.first_application_frame(dump.threads[index], take + 1)
        if application is not None:
            loops.add(dump.threads[index].frames[application].function)
    return loops


def channel_of(thread: Thread, put_frame: int) -> tuple[str, int] | None:
    """The class the queue belongs to, as the put's caller (`RequestChannel.sendRequest` ->
    "kafka.network.RequestChannel"), and the caller's frame index.

    Scala closures and Java lambdas (`Connector$$anonfun$shutdown$1`, `App$$Lambda$3/0x..`) stand
    for the class that defines them.
    """
    for index in range(put_frame + 1, len(thread.frames)):
        frame = thread.frames[index]
        class_name = frame.class_name
        if frame.function.startswith(_MACHINERY_PREFIXES) or _is_queue_class(class_name.partition("$")[0]):
            continue
        return class_name.split("$$", 1)[0], index
    return None


def channel_users(dump: ThreadDump, channel: str, exclude: set[int]) -> list[int]:
    """Threads, other than `exclude`, that run in the class a queue belongs to: possible takers."""
    return [index for index in stackindex.positions_in_class(dump, channel) if index not in exclude]


class QueueScan:
    """The candidate-taker searches above for one dump, each whole-dump pass made once.

    A dump can hold thousands of putters (a pool of producers behind one full queue) and
    hundreds of thousands of threads; asking each search once per putter would scan every thread
    once per putter. Here each pass is kept by what it depends on (the queue's class, the loops,
    the consumer id), and a putter's own exclusions are filtered from its result. Which threads
    run in a channel the stack index keeps itself (`channel_users`).
    """

    def __init__(self, dump: ThreadDump) -> None:
        self.dump = dump
        self._takers: dict[str, list[tuple[int, int]]] | None = None
        self._busy: dict[frozenset[str], list[int]] = {}
        self._loops: dict[str, set[str]] = {}
        self._taking: set[int] | None = None
        self._named: dict[str, tuple[list[int], set[int]]] = {}
        self._taker_indexes: dict[str, dict[int, None]] = {}

    def parked_takers(self, queue_class: str, exclude: int) -> list[tuple[int, int]]:
        """Threads but `exclude` parked in take/poll of a queue of `queue_class`, with the index of
        that frame.

        A queue with a parked taker is empty, so while the putter's queue is full these wait on
        other queues of the same class: not its consumers, but their loops show what a consumer runs.
        """
        takers, indexes = self._parked_takers(queue_class)
        if exclude not in indexes:
            return takers  # a putter is parked in put, not in take: the common case
        return [taker for taker in takers if taker[0] != exclude]

    def parked_taker_indexes(self, queue_class: str, exclude: int) -> tuple[int, ...]:
        """The thread indexes of `parked_takers`."""
        _, indexes = self._parked_takers(queue_class)
        if exclude not in indexes:
            return tuple(indexes)
        return tuple(index for index in indexes if index != exclude)

    def _parked_takers(self, queue_class: str) -> tuple[list[tuple[int, int]], dict[int, None]]:
        if self._takers is None:
            self._takers = {}
            for index, take in queue_frames(self.dump, TAKE_METHODS):
                thread = self.dump.threads[index]
                if thread.status in _PARKED:
                    self._takers.setdefault(thread.frames[take].class_name, []).append((index, take))
            self._taker_indexes = {
                queue: dict.fromkeys(index for index, _ in takers) for queue, takers in self._takers.items()
            }
        return self._takers.get(queue_class, []), self._taker_indexes.get(queue_class, {})

    def busy_consumers(self, loops: set[str], exclude: set[int]) -> list[int]:
        """Threads but `exclude` running one of the consumer loops but not taking now: busy
        elsewhere, so possibly the consumer that stopped draining the full queue (as a stalled
        stream thread is)."""
        if not loops:
            return []
        key = frozenset(loops)
        if key not in self._busy:
            if self._taking is None:
                self._taking = {index for index, _ in queue_frames(self.dump, TAKE_METHODS)}
            running = stackindex.positions_with(self.dump, *sorted(loops))
            self._busy[key] = [index for index in running if index not in self._taking]
        return [index for index in self._busy[key] if index not in exclude]

    def consumer_loops(self, queue_class: str) -> set[str]:
        """`consumer_loops` of the threads parked taking from a queue of `queue_class` (a putter
        is never one of them: it is parked in put)."""
        if queue_class not in self._loops:
            self._loops[queue_class] = consumer_loops(self.dump, self.parked_takers(queue_class, -1))
        return self._loops[queue_class]

    def same_consumer(self, putter: Thread) -> list[int]:
        """For an old-consumer fetcher: the other threads named after its consumer id."""
        name = oldconsumer.FETCHER_NAME.match(putter.name)
        if name is None:
            return []
        consumer_id = name["consumer_id"]
        if consumer_id not in self._named:
            named = [index for index, thread in enumerate(self.dump.threads) if consumer_id in thread.name]
            self._named[consumer_id] = (named, {id(self.dump.threads[index]) for index in named})
        named, members = self._named[consumer_id]
        if id(putter) not in members:
            return named
        return [index for index in named if self.dump.threads[index] is not putter]


@dataclass(frozen=True)
class QueueRing:
    """Threads parked putting into different queues of one channel that no other thread uses."""

    channel: str
    puts: tuple[BoundedPut, ...]
    callers: tuple[int, ...]  # per put, the frame index of the channel's method that called put


def queue_identity(put: BoundedPut, caller: str) -> object:
    """What tells two queues apart: the condition parked on (one per queue), else the caller."""
    if put.waits_on is not None and put.waits_on.lock_id is not None:
        return put.waits_on.lock_id
    return caller


def queue_rings(dump: ThreadDump) -> list[QueueRing]:
    """Channels whose every user is parked putting into one of its queues, two queues or more.

    A queue's consumer must call into the class the queue belongs to in order to take from it.
    When every thread that does is itself parked putting into another of that class's queues,
    each queue can only be drained by a thread that waits for room in another: a ring, unless
    the consumer is a thread the input does not show.
    """
    members: dict[str, list[tuple[BoundedPut, int]]] = {}
    for put in bounded_puts(dump):
        found = channel_of(dump.threads[put.index], put.put_frame)
        if found is not None:
            members.setdefault(found[0], []).append((put, found[1]))
    rings = []
    for channel, puts in members.items():
        if len(puts) < 2:
            continue
        identities = {
            queue_identity(put, dump.threads[put.index].frames[caller].function) for put, caller in puts
        }
        if len(identities) < 2:
            continue  # producers of one queue: a full queue, not a ring
        if channel_users(dump, channel, {put.index for put, _ in puts}):
            continue  # another thread uses the channel and may be taking
        rings.append(QueueRing(channel, tuple(put for put, _ in puts), tuple(caller for _, caller in puts)))
    return rings
