"""KD308: a thread blocked in a KafkaProducer call, and what the producer's I/O thread is doing."""

from __future__ import annotations

from collections.abc import Iterator
from typing import NamedTuple

from kafkadiag.model import LockEventKind, Thread, ThreadDump, ThreadStatus
from kafkadiag.rules import newconsumer, stackindex, stacks
from kafkadiag.rules.base import Evidence, Finding, Requirement, Rule, Severity
from kafkadiag.rules.context import AnalysisContext


class _Wait(NamedTuple):
    """What a producer call waits for, and whether it gives up by itself."""

    awaited: str
    bounded: bool  # max.block.ms ends it with a TimeoutException
    limit: str = ""  # how long the call waits, when max.block.ms does not say it


_METADATA = _Wait("the metadata of the record's topic", True)
_BUFFER = _Wait("free buffer memory (buffer.memory is used up)", True)
_FLUSH = _Wait("every record sent so far to be acknowledged (flush)", False)
_RESULT = _Wait("the acknowledgement of a record it sent (Future.get)", False)
_TRANSACTION = _Wait("the transaction coordinator's answer", True)
_CLOSE = _Wait(
    "the I/O thread to send the records still buffered and end (close)",
    False,
    " close() without a timeout has no time limit.",
)
# Waits of these kinds in one dump end when the brokers acknowledge what was sent: one finding.
_ACKNOWLEDGEMENTS = _Wait("the acknowledgement of the records sent so far", False)
_SAME_CAUSE = {_FLUSH: _ACKNOWLEDGEMENTS, _RESULT: _ACKNOWLEDGEMENTS, _CLOSE: _ACKNOWLEDGEMENTS}
_JOIN = "java.lang.Thread.join"
_CALL_NAMES = {_FLUSH: "flush", _RESULT: "Future.get", _CLOSE: "close"}

# The innermost producer frame of each blocking call, across releases: 0.8.2 kept Metadata in the
# producer's internals, 0.9 to 2.2 in org.apache.kafka.clients, 2.3 on in ProducerMetadata.
PRODUCER_WAITS = {
    "org.apache.kafka.clients.producer.internals.Metadata.awaitUpdate": _METADATA,
    "org.apache.kafka.clients.Metadata.awaitUpdate": _METADATA,
    "org.apache.kafka.clients.producer.internals.ProducerMetadata.awaitUpdate": _METADATA,
    "org.apache.kafka.clients.producer.KafkaProducer.waitOnMetadata": _METADATA,
    "org.apache.kafka.clients.producer.internals.BufferPool.allocate": _BUFFER,
    "org.apache.kafka.clients.producer.internals.RecordAccumulator.awaitFlushCompletion": _FLUSH,
    "org.apache.kafka.clients.producer.internals.FutureRecordMetadata.get": _RESULT,
    "org.apache.kafka.clients.producer.internals.TransactionalRequestResult.await": _TRANSACTION,
    # close() joins the I/O thread (ioThread.join), which first sends what is buffered.
    "org.apache.kafka.clients.producer.KafkaProducer.close": _CLOSE,
}
# The producer's I/O thread, "kafka-producer-network-thread | <client.id>": it fetches metadata,
# sends the batches, frees their memory, completes the futures and runs the send callbacks.
SENDER_RUN = newconsumer.PRODUCER_IO_RUN
SENDER_NAME = newconsumer.PRODUCER_IO_THREAD_NAME
# Where the I/O thread calls the application's send callbacks and interceptors: 0.9 to 0.11 from
# RecordBatch.done, 1.0 on from ProducerBatch.completeFutureAndFireCallbacks, through the producer's
# own wrapper right under the application's callback: KafkaProducer$InterceptorCallback (real 1.1.1),
# KafkaProducer$AppendCallbacks in the releases that replaced it (real 4.1.1, fixtures/captured/
# real-producer-callback-*; its frame was read as the application's callback, so an I/O thread held
# in a callback that waits for a reply was not named).
CALLBACK_FIRING = (
    "org.apache.kafka.clients.producer.internals.ProducerBatch.completeFutureAndFireCallbacks",
    "org.apache.kafka.clients.producer.internals.RecordBatch.done",
    "org.apache.kafka.clients.producer.KafkaProducer$InterceptorCallback.onCompletion",
    "org.apache.kafka.clients.producer.KafkaProducer$AppendCallbacks.onCompletion",
    "org.apache.kafka.clients.producer.internals.ProducerInterceptors.onAcknowledgement",
)
_PRODUCER_PACKAGE = "org.apache.kafka.clients.producer."
_KAFKA_PACKAGE = "org.apache.kafka."
# More waiting threads than this are summed up, not each named in the message.
NAMED_WAITERS = 5


class ProducerCallBlocked(Rule[AnalysisContext]):
    code = "KD308"
    name = "producer-call-blocked"
    title = "Threads blocked in a KafkaProducer call, or its I/O thread held in a send callback"
    severity = Severity.WARNING
    requires = frozenset({Requirement.JAVA})
    explanation = """
KafkaProducer.send() returns at once only when the producer has the topic's metadata and room in
buffer.memory; otherwise the caller waits, up to max.block.ms (60 s by default) for each record.
flush() and a send's Future.get() wait, with no time limit, until the brokers acknowledge the
records; close() joins the I/O thread, which first sends every buffered record (without a timeout,
for as long as that takes). A single thread does all the producer's work:
kafka-producer-network-thread (the Sender) fetches metadata, sends the batches, frees their memory
and completes the futures, and it runs every send callback. So a blocked caller is explained by
that thread. When it is in network I/O, the cluster is the cause: the brokers are unreachable or
slow, the topic does not exist (with automatic creation off) or the client may not write to it.
When it is blocked itself - a send callback waiting on a lock, a logging appender that sends to
Kafka - nothing completes any more. When it is not in a complete dump, the producer was closed or
its thread ended (an Error thrown in it ends it silently), and the waits never end. A consumer's
poll thread that produces is held with it: past max.poll.interval.ms it leaves the group. An I/O
thread held in a send callback (waiting for a lock, a reply, a future) is named even when no
thread waits in a producer call yet: every send of that producer is already stopped behind it.
"""
    remedy = """
If the I/O thread is blocked, free it: send callbacks must not block or call flush(), and the
producer's own logging must not go to an appender that sends through a producer. If it is doing
network I/O, check that the brokers in bootstrap.servers are reachable, that the topic exists and
that the principal may write to it; raise buffer.memory or slow the producers when the brokers
cannot keep up. Send from the poll loop without waiting on each record, and bound the waits
(max.block.ms, Future.get with a timeout, delivery.timeout.ms).
"""

    def check(self, context: AnalysisContext) -> Iterator[Finding]:
        dump = context.dump
        waiting: dict[_Wait, list[tuple[Thread, int, _Wait]]] = {}
        for thread in stackindex.threads_with(dump, *PRODUCER_WAITS):
            if thread.status is ThreadStatus.RUNNABLE:
                continue  # about to return, or still deciding
            index = stacks.index_of(thread, *PRODUCER_WAITS)
            if index is None:
                continue
            wait = PRODUCER_WAITS[thread.frames[index].function]
            if wait is _CLOSE and all(frame.function != _JOIN for frame in thread.frames[:index]):
                continue  # closing something else (metrics, interceptors), not waiting for the I/O thread
            waiting.setdefault(_SAME_CAUSE.get(wait, wait), []).append((thread, index, wait))
        senders = _senders(dump)
        if not waiting:
            # Nobody waits on the producer in this dump, but its I/O thread may be held in a send
            # callback: every send of the producer stops behind it all the same.
            for sender in senders:
                if _doing_network_io(sender):
                    continue
                callback = _callback_index(sender)
                if callback is not None:
                    yield self._held_in_callback(context, sender, callback)
                    continue
                application = _application_frame_of_cut_stack(sender)
                if application is not None:
                    yield self._held_in_callback(context, sender, application, cut=True)
            return
        for waiters in waiting.values():
            yield self._finding(context, waiters, senders)

    def _held_in_callback(
        self, context: AnalysisContext, sender: Thread, callback: int, cut: bool = False
    ) -> Finding:
        label = context.label(sender)
        callback_frame = sender.frames[callback].function
        where = (
            "in code that is not the client's own, which this thread runs only from a send callback, an "
            "interceptor or the client's logging (the stack ends before the producer's frames)"
            if cut
            else f"inside a send callback ({callback_frame})"
        )
        return self.finding(
            f"{label}, the producer's I/O thread, is {stacks.doing(sender)}, {where}. Until the callback "
            "returns, the producer sends nothing, completes no "
            "future and frees no buffer memory: flush() and Future.get() wait, and send() blocks once "
            "buffer.memory is full. A callback that waits for something the producer must deliver "
            "first never returns.",
            [label],
            [
                context.header(sender),
                *(context.frame(sender, index) for index in dict.fromkeys((0, callback))),
            ],
            story=f"The Kafka producer's I/O thread {label} is held inside a send callback "
            f"({'.'.join(callback_frame.rsplit('.', 2)[-2:])}): no record of that producer is sent or "
            "acknowledged",
            details={"io_thread": label, "callback": callback_frame, "waiting": []},
        )

    def _finding(
        self,
        context: AnalysisContext,
        waiters: list[tuple[Thread, int, _Wait]],
        senders: list[Thread],
    ) -> Finding:
        threads = [thread for thread, _, _ in waiters]
        waits = list(dict.fromkeys(wait for _, _, wait in waiters))
        wait = waits[0] if len(waits) == 1 else _mixed(waits)
        # The calls, by the innermost producer frame of each: "BufferPool.allocate"
        calls = (".".join(thread.frames[index].function.rsplit(".", 2)[-2:]) for thread, index, _ in waiters)
        call = ", ".join(dict.fromkeys(calls))
        names = context.labels(threads)
        evidence: list[Evidence] = []
        for thread, index, _ in waiters[:NAMED_WAITERS]:
            evidence += [context.header(thread), context.frame(thread, index)]
        on_sender = [thread for thread in threads if stacks.has_frame(thread, SENDER_RUN)]
        verdict, severity, culprits = _verdict(context, wait, senders, on_sender, evidence)
        verdict += _held_by_waiter(context, culprits, threads)
        shown = ", ".join(names[:NAMED_WAITERS]) + (
            f" and {len(names) - NAMED_WAITERS} more" if len(names) > NAMED_WAITERS else ""
        )
        verb = "waits" if len(threads) == 1 else "wait"
        polling = [thread for thread in threads if newconsumer.looks_like_poll_thread(thread, frozenset())]
        held = (
            " A consumer poll thread among them stops polling while it waits: past max.poll.interval.ms "
            "it leaves the group."
            if polling
            else ""
        )
        return self.finding(
            f"{shown} {verb} in the Kafka producer ({call}) for {wait.awaited}. {verdict}{held}",
            [*context.labels(culprits), *names],
            evidence,
            severity=severity,
            story=f"In the Kafka producer, {shown} {verb} for {wait.awaited}: {verdict[0].lower()}"
            f"{verdict[1:].split('. ')[0].rstrip('.')}",
            details={
                "awaited": wait.awaited,
                "bounded_by_max_block_ms": wait.bounded,
                "waiting": names,
                "io_threads": context.labels(senders),
            },
        )


def _mixed(waits: list[_Wait]) -> _Wait:
    """Waits of several calls that the same acknowledgements end, as one: "(flush, close)"."""
    calls = ", ".join(_CALL_NAMES[wait] for wait in waits)
    limit = next((wait.limit for wait in waits if wait.limit), "")
    return _ACKNOWLEDGEMENTS._replace(awaited=f"{_ACKNOWLEDGEMENTS.awaited} ({calls})", limit=limit)


def _senders(dump: ThreadDump) -> list[Thread]:
    """The producers' I/O threads, by stack or by name (a stack may be cut from an excerpt)."""
    by_stack = stackindex.positions_with(dump, SENDER_RUN)
    by_name = [index for index, thread in enumerate(dump.threads) if thread.name.startswith(SENDER_NAME)]
    return [dump.threads[index] for index in sorted({*by_stack, *by_name})]


def _verdict(
    context: AnalysisContext,
    wait: _Wait,
    senders: list[Thread],
    on_sender: list[Thread],
    evidence: list[Evidence],
) -> tuple[str, Severity, list[Thread]]:
    """What the I/O threads say about the wait: the sentence, its severity and the culprits."""
    if on_sender:
        names = ", ".join(context.labels(on_sender))
        return (
            f"{names} is the producer's own I/O thread, blocked inside a send callback: the thread that "
            "would complete the wait is the one waiting, so it never ends.",
            Severity.ERROR,
            on_sender,
        )
    stuck = [sender for sender in senders if not _doing_network_io(sender)]
    if stuck:
        return _held_senders(context, senders, stuck, evidence)
    if senders:
        for sender in senders[:NAMED_WAITERS]:
            evidence.append(context.header(sender))
        return (_network_io(wait), Severity.WARNING, [])
    if context.dump.banner is not None:
        return (
            "No producer I/O thread (kafka-producer-network-thread) is in the dump: the producer was "
            "closed or its thread has ended, so nothing will complete the wait.",
            Severity.ERROR,
            [],
        )
    return (
        "The producer's I/O thread (kafka-producer-network-thread) is not in the excerpt: what it is "
        "doing decides whether the wait can end.",
        Severity.WARNING,
        [],
    )


def _held_senders(
    context: AnalysisContext, senders: list[Thread], stuck: list[Thread], evidence: list[Evidence]
) -> tuple[str, Severity, list[Thread]]:
    """The verdict when I/O threads are held elsewhere than in network I/O: they are the culprits."""
    for sender in stuck:
        evidence.append(context.header(sender))
        if sender.frames:
            evidence.append(context.frame(sender, 0))
    doing = "; ".join(f"{context.label(sender)} is {stacks.doing(sender)}" for sender in stuck)
    which = (
        "The producer's I/O thread is"
        if len(senders) == 1
        else f"Of the {len(senders)} producer I/O threads (the dump does not say which producer a caller "
        f"uses), {len(stuck)} {'is' if len(stuck) == 1 else 'are'}"
    )
    return (
        f"{which} not doing network I/O: {doing}. While it is held there, no metadata arrives, no "
        "memory is freed and no record is acknowledged.",
        Severity.ERROR,
        stuck,
    )


def _network_io(wait: _Wait) -> str:
    """The verdict when the I/O thread is doing network I/O: the cluster is the cause."""
    cause = {
        _METADATA: "the metadata does not arrive: the brokers are unreachable, the topic does not "
        "exist (with automatic creation off) or the client may not write to it",
        _BUFFER: "the brokers take the records more slowly than they are produced, or not at all",
    }.get(wait, "the brokers have not acknowledged the records yet")
    limit = wait.limit or (
        " Each call gives up after max.block.ms." if wait.bounded else " The call has no time limit."
    )
    return f"The producer's I/O thread is doing network I/O, so {cause}.{limit}"


def _held_by_waiter(context: AnalysisContext, stuck: list[Thread], waiters: list[Thread]) -> str:
    """A stuck I/O thread blocked on a lock that a waiting caller holds: the two wait for each other."""
    for thread in stuck:
        waiting = thread.waits_for()
        if waiting is None or waiting.lock_id is None or waiting.kind is LockEventKind.WAITING_ON:
            continue  # in Object.wait() it waits for a notify, not for a holder
        for caller in waiters:
            if caller is not thread and any(held.lock_id == waiting.lock_id for held in caller.held_locks()):
                return (
                    f" It waits for a lock {context.label(caller)} holds while that thread waits for the "
                    "producer: the two wait for each other, a deadlock the JVM's detector does not see."
                )
    return ""


def _callback_index(sender: Thread) -> int | None:
    """The frame of the application's send callback (or interceptor) the I/O thread runs, when it
    runs one: the frame right above the producer's own frame that fires the callbacks."""
    firing = stacks.index_of(sender, *CALLBACK_FIRING)
    if firing is None or firing == 0:
        return None
    callback = firing - 1
    if sender.frames[callback].function.startswith(_PRODUCER_PACKAGE):
        return None  # the producer's own completion code, not the application's callback
    while callback > 0 and "$$Lambda" in sender.frames[callback].function:
        callback -= 1  # a lambda's generated class: its body is the frame above
    return callback


def _application_frame_of_cut_stack(sender: Thread) -> int | None:
    """An I/O thread, known by its name, whose pasted stack ends before any of the producer's
    frames: its innermost frame outside the JDK is application code, which that thread runs only
    from a send callback or an interceptor."""
    if stacks.index_where(sender, lambda frame: frame.function.startswith(_KAFKA_PACKAGE)) is not None:
        return None  # the stack reaches the producer: _callback_index decides
    return stacks.first_application_frame(sender)


def _doing_network_io(sender: Thread) -> bool:
    """Selecting on its sockets (RUNNABLE, as epoll shows) or sleeping out a retry back-off; a
    sender blocked or parked - in a callback, in logging - is stuck, network frames or not."""
    return sender.status in (ThreadStatus.RUNNABLE, ThreadStatus.SLEEPING)
