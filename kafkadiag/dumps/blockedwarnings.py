"""An event loop's blocked-thread warning: the watchdog's line, then the blocked thread's stack.

Vert.x's BlockedThreadChecker logs, once a second, every event-loop (or worker) thread that has run
one task for longer than its limit (2 s for an event loop, 60 s for a worker), and from
warningExceptionTime (5 s) on it adds the thread's stack as an exception's:

    WARN  BlockedThreadChecker: - Thread Thread[vert.x-eventloop-thread-1,5,main] has been blocked
    for 5457 ms, time limit is 2000 ms                              (one line in the log)
    io.vertx.core.VertxException: Thread blocked
    \tat jdk.internal.misc.Unsafe.park(Native Method) ~[?:?]

Its forms seen in published reports: Vert.x 3 through java.util.logging puts the logger on a line
of its own and "WARNING: " before the message, with "time limit is 2000" and no unit; 3.9 and 4.0
print the thread twice ("Thread[x,5,main]=Thread[x,5,main] has been blocked"); Quarkus ends the
line with the exception (": io.vertx.core.VertxException: Thread blocked"); log4j2's extended
stack traces end each frame with its jar (" ~[?:?]").

BlockHound (Reactor's agent that forbids blocking calls on threads it is told are non-blocking: Reactor's
parallel and single schedulers, reactor-netty's event loops) throws an error at the blocking call instead
of letting it wait, and its stack is what a report shows:

    reactor.blockhound.BlockingOperationError: Blocking call! java.lang.Object#wait
    \tat java.base/java.lang.Object.wait(Object.java)

It does not name the thread: the thread read from it is named for what is known of it.

Lines copied out of a log viewer carry its columns in front of each line: kubectl's or stern's pod
and container names, a console's "  | " gutter. That prefix is learned from the exception's line
(which starts the stack in every form but Quarkus') and stripped from the frames under it.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from kafkadiag.digits import is_decimal
from kafkadiag.dumps.logprefix import generalise

EXCEPTION = "io.vertx.core.VertxException: Thread blocked"
BLOCKHOUND = "reactor.blockhound.BlockingOperationError: Blocking call! "
# The name given to the thread of a BlockHound error, which names none.
BLOCKHOUND_THREAD = "(a non-blocking thread BlockHound does not name)"
_OPENING = "Thread Thread["
_BLOCKED = "] has been blocked for "
_TWICE = "]=Thread["  # Vert.x 3.9 and 4.0: Thread.toString() printed twice, joined by "="
# What follows the thread, anchored where the thread ends: tried once per warning line.
_TAIL = re.compile(
    r"has been blocked for (?P<blocked>\d+) ms, time limit is (?P<limit>\d+)(?: ms)?"
    rf"(?P<exception>: {re.escape(EXCEPTION)})?\s*$"
)

NOTE = (
    "An event loop's blocked-thread warning (Vert.x's BlockedThreadChecker): one thread's stack, "
    "printed by the watchdog because the thread has run one task past its time limit. No thread "
    "state and no lock lines are printed, and the process's other threads are not in it"
)
PRODUCER = "Vert.x BlockedThreadChecker"
BLOCKHOUND_PRODUCER = "BlockHound"
BLOCKHOUND_NOTE = (
    "A BlockHound error: the stack of a blocking call it stopped on a thread it watches as "
    "non-blocking. It names neither the thread nor a state, and the process's other threads are not in it"
)
NOTES = {PRODUCER: NOTE, BLOCKHOUND_PRODUCER: BLOCKHOUND_NOTE}


class BlockedWarning(NamedTuple):
    """One warning line: the thread it names and how long it has been blocked."""

    name: str
    blocked_ms: int
    limit_ms: int
    start: int  # where "Thread Thread[" starts in the line
    stack_follows_inline: bool  # the line itself ends with the exception (Quarkus)


def blocked_warning(line: str) -> BlockedWarning | None:
    """The warning a line holds, or None."""
    start = line.find(_OPENING)
    if start < 0 or _BLOCKED not in line:
        return None
    body_start = start + len(_OPENING)
    end = line.find(_BLOCKED, body_start)
    twice = line.find(_TWICE, body_start, end)
    body = line[body_start : twice if twice >= 0 else end]
    parts = body.rsplit(",", 2)
    if len(parts) != 3 or not is_decimal(parts[1]):
        return None
    tail = _TAIL.match(line, end + 2)
    if tail is None:
        return None
    name = parts[0]
    if name.startswith("#") and "," in name and is_decimal(name[1 : name.index(",")]):
        name = name[name.index(",") + 1 :]  # JDK 19+: "Thread[#21,name,5,main]"
    return BlockedWarning(
        name, int(tail["blocked"]), int(tail["limit"]), start, tail["exception"] is not None
    )


def blockhound_call(line: str) -> str | None:
    """The blocking call a BlockHound error names ("java.lang.Object#wait"), or None."""
    at = line.find(BLOCKHOUND)
    if at < 0:
        return None
    call = line[at + len(BLOCKHOUND) :].strip()
    return call or None


def blocked_for(header: str) -> tuple[int, int] | None:
    """(blocked ms, limit ms) from a thread's header that is a warning, else None."""
    warning = blocked_warning(header)
    return None if warning is None else (warning.blocked_ms, warning.limit_ms)


class FramePrefix:
    """The log viewer's columns in front of a warning's frames, learned from its exception line."""

    def __init__(self) -> None:
        self._pattern: re.Pattern[str] | None = None

    def learn(self, exception_line: str) -> None:
        prefix = exception_line[: exception_line.find(EXCEPTION)]
        self._pattern = re.compile(generalise(prefix.rstrip())) if prefix.strip() else None

    def forget(self) -> None:
        self._pattern = None

    def strip(self, line: str) -> str:
        if self._pattern is None:
            return line
        match = self._pattern.match(line)
        return line[match.end() :] if match else line


def without_jar(stripped: str) -> str:
    """A frame without the jar log4j2's %xEx prints after it ("~[?:?]", "~[netty-common.jar:4.1]").

    Found from the last bracket, not by a pattern: a pattern tried from every space of a long line
    would take time of the square of its length."""
    if not stripped.endswith("]"):
        return stripped
    opening = stripped.rfind("[")
    head = stripped[:opening].removesuffix("~")
    if opening <= 0 or head == head.rstrip():
        return stripped  # no space before the bracket: part of the frame, not a jar
    return head.rstrip()
