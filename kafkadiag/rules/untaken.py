"""A bounded put that no thread of the dump could take from: KD107's finding when the putter holds
nobody up.

A put is reported only when the dump shows no candidate consumer at all (see `finding`): a thread
parked in put while its consumer works on the previous item is ordinary back-pressure, and its
consumer then shows up as a thread running in the class the queue belongs to, or as a thread
running the loop other threads take in.
"""

from __future__ import annotations

from kafkadiag.model import Thread
from kafkadiag.rules import queues
from kafkadiag.rules.base import Evidence, Finding, Rule, Severity
from kafkadiag.rules.context import AnalysisContext

REMEDY = """
Find where the queue's consumer stopped: its thread exited (look for its last log lines), or it
waits for this thread. A second dump that shows the same put confirms the put is stuck, not slow.
Never block putting into a queue whose consumer may have stopped: offer with a timeout, or send
one stop marker per consumer, not one per producer or topic.
"""


def _short(class_name: str) -> str:
    return class_name.rpartition(".")[2]


def has_candidate_taker(context: AnalysisContext, put: queues.BoundedPut) -> bool:
    """Some thread the dump shows could take from the put's queue (see queues)."""
    dump = context.dump
    scan = context.cached("queue-scan", dump, queues.QueueScan)
    putter = dump.threads[put.index]
    if scan.parked_takers(put.queue_class, put.index):
        return True
    if scan.busy_consumers(scan.consumer_loops(put.queue_class), {put.index}):
        return True
    if scan.same_consumer(putter):
        return True
    channel = queues.channel_of(putter, put.put_frame)
    return channel is not None and bool(queues.channel_users(dump, channel[0], {put.index}))


def finding(rule: Rule[AnalysisContext], context: AnalysisContext, put: queues.BoundedPut) -> Finding | None:
    """A warning naming the putter, when no thread of the dump could take from its queue."""
    if has_candidate_taker(context, put):
        return None
    dump = context.dump
    putter = dump.threads[put.index]
    name = context.label(putter)
    simple_class = _short(put.queue_class)
    evidence: list[Evidence] = [context.header(putter), context.frame(putter, put.put_frame)]
    condition = ""
    if put.waits_on is not None:
        evidence.append(context.event(putter, put.waits_on))
        if put.waits_on.lock_id is not None:
            condition = f" on <0x{put.waits_on.lock_id:x}>"
    channel = queues.channel_of(putter, put.put_frame)
    caller = ""
    runs_in = ""
    if channel is not None:
        evidence.append(context.frame(putter, channel[1]))
        caller = f" called by {putter.frames[channel[1]].function}"
        runs_in = f" or runs in {_short(channel[0])}"
    message = (
        f"{name} is parked in {put.method(dump)}{condition}{caller}, and no thread of this dump takes "
        f"from a queue of class {simple_class}{runs_in}: nothing the dump shows will make room in that "
        "queue. If its consumer has stopped (exited, or waits for this thread), the put never returns."
        + _held_note(context, putter, evidence)
        + excerpt_note(context)
    )
    return rule.finding(
        message,
        [name],
        evidence,
        severity=Severity.WARNING,
        remedy=REMEDY,
        story=f"Thread {name} is parked putting into a full {simple_class} that no thread takes from",
        details={
            "queue_class": put.queue_class,
            "condition": f"0x{put.waits_on.lock_id:x}"
            if put.waits_on is not None and put.waits_on.lock_id is not None
            else None,
            "channel": channel[0] if channel is not None else None,
            "locks": [f"0x{lock.lock_id:x}" for lock in putter.held_locks()],
        },
    )


def _held_note(context: AnalysisContext, putter: Thread, evidence: list[Evidence]) -> str:
    held = putter.held_locks()
    if not held:
        return ""
    evidence.extend(context.held(putter, lock) for lock in held)
    locks = ", ".join(f"<0x{lock.lock_id:x}> ({lock.lock_class})" for lock in held)
    return f" It holds {locks}, which no thread of this dump waits for yet: the next one that needs it will."


def excerpt_note(context: AnalysisContext) -> str:
    if context.dump.banner is not None:
        return ""
    return (
        " The input is an excerpt (no 'Full thread dump' banner): the queue's consumer may be a thread "
        "left out of it."
    )
