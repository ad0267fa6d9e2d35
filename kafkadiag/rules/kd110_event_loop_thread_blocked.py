"""KD110: a Java event loop's thread (Netty, Vert.x) held by one task: blocked in a call, or
running one task past the watchdog's limit."""

from __future__ import annotations

from collections.abc import Iterator

from kafkadiag.dumps.blockedwarnings import blocked_for, blockhound_call
from kafkadiag.model import Thread
from kafkadiag.rules import stacks
from kafkadiag.rules.base import Evidence, Finding, Requirement, Rule, Severity
from kafkadiag.rules.context import AnalysisContext

# The loop's own run method, for Netty's transports and as Vert.x runs them; matched as suffixes,
# so a relocated Netty ("io.grpc.netty.shaded.io.netty...") is one too.
LOOP_RUN_FRAMES = (
    "io.netty.channel.nio.NioEventLoop.run",
    "io.netty.channel.epoll.EpollEventLoop.run",
    "io.netty.channel.kqueue.KQueueEventLoop.run",
    "io.netty.channel.DefaultEventLoop.run",
    "io.netty.channel.SingleThreadIoEventLoop.run",
)
# Where the loop hands control to a handler or a task: above one of these runs the application.
# Without one, a loop thread that waits is waiting in its own selector or task queue: idle.
DISPATCH_FRAMES = (
    "io.netty.util.concurrent.AbstractEventExecutor.safeExecute",
    "io.netty.util.concurrent.AbstractEventExecutor.runTask",
    "io.netty.util.concurrent.SingleThreadEventExecutor.runAllTasks",
    "io.netty.channel.nio.NioEventLoop.processSelectedKeys",
    "io.netty.channel.nio.NioEventLoop.processSelectedKey",
    "io.netty.channel.epoll.EpollEventLoop.processReady",
    "io.netty.channel.kqueue.KQueueEventLoop.processReady",
)
# Where an idle loop waits: its selector (the JDK's, or Netty's native epoll and kqueue) or, for a
# loop without I/O, its task queue. A loop thread waiting in one of these has nothing to do.
LOOP_IDLE_FRAMES = (
    "sun.nio.ch.SelectorImpl.select",
    "sun.nio.ch.SelectorImpl.lockAndDoSelect",
    "sun.nio.ch.EPoll.wait",
    "sun.nio.ch.EPollArrayWrapper.epollWait",
    "sun.nio.ch.KQueue.poll",
    "sun.nio.ch.KQueueArrayWrapper.kevent0",
    "sun.nio.ch.WEPoll.wait",
    "sun.nio.ch.WindowsSelectorImpl$SubSelector.poll0",
    ".channel.epoll.Native.epollWait",
    ".channel.epoll.Native.epollWait0",
    ".channel.epoll.Native.epollBusyWait0",
    ".channel.kqueue.Native.keventWait",
    ".channel.kqueue.Native.keventWait0",
    ".util.concurrent.SingleThreadEventExecutor.takeTask",
)
# Package roots that name an organisation, not a product: a vendor is known by two parts under them.
_ORGANISATION_ROOTS = frozenset({"io", "org", "com", "net", "dev", "me"})
_KAFKA_APIS = (".KafkaProducer", ".KafkaConsumer", ".KafkaAdminClient")
# Libraries that are one product's layers: okio is okhttp's I/O.
_SAME_VENDOR = {"okhttp3": ("okio",)}
# Frameworks' own code, skipped when naming the application's call.
_FRAMEWORK_PREFIXES = (*stacks.LIBRARY_PREFIXES, "io.netty.", "io.vertx.", "io.smallrye.", "io.quarkus.")
_WAITS = frozenset(stacks.WAITING_STATUSES)
# The JDK's waiting machinery under a call that waits: the call is named, not these.
_MACHINERY_PREFIXES = (
    "jdk.internal.misc.Unsafe.",
    "sun.misc.Unsafe.",
    "java.util.concurrent.locks.",
    "java.util.concurrent.ForkJoinPool.managedBlock",
    "java.util.concurrent.ForkJoinPool.unmanagedBlock",
    "java.util.concurrent.CompletableFuture$Signaller.",
    "java.util.concurrent.CompletableFuture.waitingGet",
    "java.util.concurrent.CompletableFuture.timedGet",
    "java.lang.Object.wait",
)


# The loop frameworks' own packages (Netty relocated under another root too): a thread whose body
# is a run() outside them runs some other loop.
_LOOP_PACKAGES = (".io.netty.", ".io.vertx.")
_THREAD_START = ("java.lang.Thread.run", "java.lang.Thread.runWith", "java.lang.VirtualThread.run")


def is_event_loop(thread: Thread) -> bool:
    """A thread that runs an event loop: by its stack, or by the name Vert.x gives its loops."""
    if stacks.index_of(thread, *LOOP_RUN_FRAMES, suffix=True) is not None:
        return True
    if "eventloop" not in thread.name.lower().replace("-", "").replace("_", ""):
        return False
    # The name alone, unless the stack shows the thread's own body: Spark's dag-scheduler-event-loop
    # runs org.apache.spark.util.EventLoop$$anon$1.run (tests/wild/dumps/spark-6492-...), a queue
    # taker with no channels, and was told as a Netty loop whose stack was cut.
    return not _runs_another_body(thread)


def _runs_another_body(thread: Thread) -> bool:
    body = next((frame for frame in reversed(thread.frames) if frame.function not in _THREAD_START), None)
    if body is None or body.method != "run":
        return False  # no body shown: the stack is cut above it
    return not any(package in f".{body.function}" for package in _LOOP_PACKAGES)


def _caller_frame(thread: Thread, call: int) -> int | None:
    """The code that made the call: the first frame below it of another vendor than the call's
    (an HTTP client's own layers are one vendor), past the runtime's and the frameworks' frames."""
    vendor = _vendor(thread.frames[call].function)
    for index in range(call + 1, len(thread.frames)):
        function = thread.frames[index].function
        if function.startswith(_FRAMEWORK_PREFIXES) or _vendor(function) in (
            vendor,
            *_SAME_VENDOR.get(vendor, ()),
        ):
            continue
        return index
    return None


def _vendor(function: str) -> str:
    """ "io.fabric8" of io.fabric8.kubernetes..., "okhttp3" of okhttp3.internal...: whose code it is."""
    parts = function.split(".")
    return ".".join(parts[:2]) if parts[0] in _ORGANISATION_ROOTS and len(parts) > 2 else parts[0]


def _call_frame(thread: Thread) -> int:
    """The call the thread is in: its top frame, past the JDK's waiting machinery."""
    for index, frame in enumerate(thread.frames):
        if not frame.function.startswith(_MACHINERY_PREFIXES):
            return index
    return 0


def _idle(thread: Thread) -> bool:
    return stacks.index_of(thread, *LOOP_IDLE_FRAMES, suffix=True) is not None


def _blocked_in_call(thread: Thread) -> bool:
    """Waiting (parked, in Object.wait, asleep, entering a monitor) or in a blocking socket call."""
    top = thread.frames[0].function if thread.frames else ""
    return thread.status in _WAITS or top in stacks.BLOCKING_IO_FRAMES


class EventLoopThreadBlocked(Rule[AnalysisContext]):
    code = "KD110"
    name = "event-loop-thread-blocked"
    title = "A Java event loop's thread (Netty, Vert.x) held by one task"
    severity = Severity.ERROR
    requires = frozenset({Requirement.JAVA})
    explanation = """
An event loop (Netty's NioEventLoop, EpollEventLoop and KQueueEventLoop, and Vert.x's
vert.x-eventloop-thread-N, which run on them) serves all of its channels, timers and tasks from one
thread, one task at a time. A task that blocks - waiting on a future (CompletableFuture.get,
Future.get, a latch), a lock, a synchronous network call, a sleep - or that computes for seconds
holds up every other task of that loop: requests and responses of its connections, timers, health
checks, and the Kafka clients that deliver their records or results on it (vertx-kafka-client, a
reactive Kafka binder). Vert.x's BlockedThreadChecker warns once a thread has run one task past its
limit (2 s for an event loop) and prints the thread's stack from warningExceptionTime (5 s) on;
BlockHound, in tests or staging, throws at a blocking call made on such a thread (it does not name
the thread); a dump shows the same thing as a loop thread waiting above the frame where the loop
dispatched a task.
The finding names the thread, the call it is held in and the application code that made it. A
warning holds only that one thread's stack: what the call waits for (who should complete the future,
release the lock, answer the request) is not in it, and the finding says so. When the loop is held
by running code rather than a wait, the task computes (or spins) for that long: a warning then. A
warning whose stack shows the loop in its own selector is not reported: no task held the loop when the
stack was taken (the watchdog's count can include a pause of the whole JVM).
"""
    remedy = """
Never block an event loop's thread: run blocking calls with vertx.executeBlocking (or a worker
verticle, @Blocking in Quarkus), or on an executor of your own, and complete the loop's work from
its callback; compose futures (compose/onComplete, thenCompose) instead of get(). Move long
computations off the loop too. A jstack taken while the warnings repeat shows what the blocked call
waits for.
"""

    def check(self, context: AnalysisContext) -> Iterator[Finding]:
        for thread in context.dump.threads:
            if not thread.frames:
                continue
            warned = blocked_for(thread.header)
            stopped = blockhound_call(thread.header)
            if stopped is not None:
                yield self._stopped(context, thread, stopped)
            elif warned is not None and not _idle(thread):
                yield self._warned(context, thread, *warned)
            elif is_event_loop(thread) and _blocked_in_call(thread) and not _idle(thread):
                yield self._dumped(context, thread)

    def _warned(self, context: AnalysisContext, thread: Thread, blocked_ms: int, limit_ms: int) -> Finding:
        name = context.label(thread)
        loop = "event loop" if is_event_loop(thread) else "worker"
        article = "an" if loop == "event loop" else "a"
        held = "blocked in" if _blocked_in_call(thread) else "running"
        severity = self.severity if loop == "event loop" and held == "blocked in" else Severity.WARNING
        message = (
            f"Vert.x's watchdog reports that {name}, {article} {loop} thread, has been held by one task for "
            f"{blocked_ms} ms (its limit is {limit_ms} ms): it is {held} {self._where(thread)}. "
            + self._consequence(loop)
            + " The warning holds this thread's stack only: what the call waits for, and the "
            "process's other threads, are not in the input."
        )
        return self.finding(
            message,
            [name],
            [context.header(thread), *self._frames(context, thread)],
            severity=severity,
            story=f"The {loop} thread {name} was held by one task for {blocked_ms} ms",
            details={"blocked_ms": blocked_ms, "limit_ms": limit_ms, "loop": loop},
        )

    def _stopped(self, context: AnalysisContext, thread: Thread, call: str) -> Finding:
        """BlockHound threw at a blocking call on a thread it watches: where the loop would have waited."""
        message = (
            f"BlockHound stopped a blocking call ({call}) on a thread it watches as non-blocking (a "
            f"Reactor scheduler's or a Netty event loop's): {self._where(thread)}. Without BlockHound "
            "the call waits there and holds the loop; "
            + self._consequence("event loop")[0].lower()
            + self._consequence("event loop")[1:]
            + " BlockHound names no thread: which loop it was is not in the input."
        )
        return self.finding(
            message,
            [context.label(thread)],
            [context.header(thread), *self._frames(context, thread)],
            severity=Severity.WARNING,
            story=f"BlockHound stopped a blocking call ({call}) on a non-blocking thread",
            details={"loop": "event loop", "blocking_call": call},
        )

    def _dumped(self, context: AnalysisContext, thread: Thread) -> Finding:
        name = context.label(thread)
        # A loop thread waiting outside its selector and task queue waits inside a task; the stack
        # shows where the loop dispatched it unless the excerpt is cut above the loop's frames.
        if stacks.index_of(thread, *DISPATCH_FRAMES, suffix=True) is not None:
            inside = "inside a task the loop dispatched"
        elif stacks.index_of(thread, *LOOP_RUN_FRAMES, suffix=True) is not None:
            inside = "in the loop's own code, outside its selector and task queue"
        else:
            inside = (
                "outside the loop's selector and task queue (the stack is cut before the loop's "
                "frames, so the task is not shown)"
            )
        message = (
            f"{name}, an event loop thread, is blocked in {self._where(thread)}, {inside}. "
            + self._consequence("event loop")
            + " One dump cannot tell how long it has waited: a second dump a few seconds later, or "
            "Vert.x's blocked-thread warnings, tell."
        )
        return self.finding(
            message,
            [name],
            [context.header(thread), *self._frames(context, thread)],
            severity=Severity.WARNING,
            story=f"The event loop thread {name} is blocked inside a task",
            details={"loop": "event loop"},
        )

    @staticmethod
    def _consequence(loop: str) -> str:
        if loop != "event loop":
            return "A worker held this long is a blocking task that takes longer than its limit."
        return (
            "While it is, every other channel, timer and task of this loop waits, Kafka client "
            "callbacks and records delivered on it included."
        )

    @staticmethod
    def _where(thread: Thread) -> str:
        call = _call_frame(thread)
        caller = _caller_frame(thread, call)
        if caller is None:
            return thread.frames[call].function
        # A Kafka client's public call says more than the client's internals it waits in.
        public = [i for i in range(call, caller) if thread.frames[i].class_name.endswith(_KAFKA_APIS)]
        call = public[-1] if public else call
        return f"{thread.frames[call].function} called from {thread.frames[caller].function}"

    @staticmethod
    def _frames(context: AnalysisContext, thread: Thread) -> list[Evidence]:
        indexes = [_call_frame(thread)]
        caller = _caller_frame(thread, indexes[0])
        if caller is not None:
            indexes.append(caller)
        return [context.frame(thread, index) for index in indexes]
