"""KD406: an event loop's thread stopped in a blocking call made by one of its callbacks."""

from __future__ import annotations

import re
from collections.abc import Iterator

from kafkadiag.model import Frame, Thread, UnparsedLine
from kafkadiag.rules import eventloop
from kafkadiag.rules.base import Evidence, Finding, Requirement, Rule, Severity
from kafkadiag.rules.context import AnalysisContext

_ADDRESS = re.compile(r" at (0x[0-9a-fA-F]+)")
_BLOCKED = " appears to be blocked"


def gevent_blocked_report(signals: tuple[UnparsedLine, ...]) -> list[UnparsedLine] | None:
    """The last report of gevent's monitor thread among the dump's signals: its first line, then
    the blocked greenlet's stack."""
    starts = [index for index, line in enumerate(signals) if line.text.endswith(_BLOCKED)]
    return list(signals[starts[-1] :]) if starts else None


def _where(frame: Frame) -> str:
    return frame.text.strip()  # as the dump printed it: "Class.method (file.py:12)"


# What a finding adds when the dump cannot show the blocking call.
_UNNAMED_CALL = (
    " Without --native the dump cannot name the call, and a callback that only waits "
    "for the GIL looks the same for an instant: a dump with --native, or a second dump at "
    "the same line, tells."
)
# What it adds when the call is named but the input is one dump: where the loop is, not for how long.
_ONE_DUMP = (
    " One dump shows the call in progress, not how long it lasts: a second dump a few seconds later, "
    "at the same line, tells."
)


class PythonEventLoopBlocked(Rule[AnalysisContext]):
    code = "KD406"
    name = "python-event-loop-blocked"
    title = "Python event loop blocked in a synchronous call"
    severity = Severity.ERROR
    requires = frozenset({Requirement.PYTHON})
    explanation = """
A thread that runs an event loop (asyncio's run_forever/_run_once/Handle._run, tornado's IOLoop,
a Twisted reactor, the gevent hub) is not running and not waiting in the loop's own selector: a
callback or coroutine the loop called is waiting in a blocking call - time.sleep, a socket
connect/recv/sendall, getaddrinfo, an SSL handshake or read, http.client/urllib3/requests, a
subprocess wait, a threading lock or a queue.Queue.get. A loop runs one callback at a time, so
until that call returns every other task and callback of the loop is stalled: timers, reads,
writes, heartbeats. An aiokafka consumer stalls this way: its heartbeat and fetch tasks starve, the
group coordinator evicts the member after session.timeout.ms and the partitions are reassigned.
The finding names the loop's thread, the blocking call, the code that made it and the coroutine or
callback the loop was running. Without --native a call into C (time.sleep, socket.recv,
Lock.acquire) shows only as the calling line, and a callback waiting a moment for the GIL looks the
same: such a finding is a warning; --native names the C function (an error then). gevent's
compiled greenlets show no loop frame at all without --native (a greenlet's stack starts at its
own function), so a blocked gevent hub is found only in a --native dump, or from the report gevent's
own monitor thread (config.monitor_thread) prints above its run info ("... appears to be blocked").
"""
    remedy = """
Never block the loop's thread: `await asyncio.sleep(...)` instead of time.sleep; move blocking
calls to a thread with `await loop.run_in_executor(None, ...)` (or asyncio.to_thread); use async
clients (asyncio streams, aiohttp/httpx.AsyncClient, aiokafka, asyncio.Lock/asyncio.Queue) for I/O
made from coroutines. Run asyncio with debug mode (PYTHONASYNCIODEBUG=1) to log slow callbacks.
"""

    def check(self, context: AnalysisContext) -> Iterator[Finding]:
        for thread in context.dump.threads:
            finding = self._blocked_loop(context, thread)
            if finding is not None:
                yield finding
        report = gevent_blocked_report(context.dump.log_signals)
        if report is not None:
            yield self._gevent_report(context, report)

    def _gevent_report(self, context: AnalysisContext, report: list[UnparsedLine]) -> Finding:
        """gevent's monitor thread saw a greenlet keep the hub from running: what it reported."""
        address = _ADDRESS.search(report[0].text)
        named = next(
            (t for t in context.dump.threads if address is not None and address[0] in t.header), None
        )
        greenlet = (
            named.name if named is not None else report[0].text.split(" : ", 1)[-1].split(" appears")[0]
        )
        frames = [line for line in report if line.text.lstrip().startswith('File "')]
        where = frames[-1].text.strip() if frames else "a stack the report does not show"
        source = context.dump.source
        return self.finding(
            f"gevent's monitor thread reported that greenlet {greenlet} blocked the hub: it ran without "
            f"yielding past the monitor's max_blocking_time, innermost at {where}. While it runs, every "
            "other greenlet of that hub is stalled (timers, reads, writes, heartbeats).",
            [greenlet],
            [Evidence(source, line.line_no, line.text) for line in report[:1] + frames[-2:]],
            story=f"The gevent hub was blocked by greenlet {greenlet}, its monitor thread reported",
            details={"loop": "gevent", "reported_by": "gevent monitor thread", "innermost": where},
        )

    def _blocked_loop(self, context: AnalysisContext, thread: Thread) -> Finding | None:
        # An active thread runs Python code (a CPU-bound callback is another problem); one waiting
        # for the GIL is idle to py-spy but not blocked in a call.
        if thread.active is not False or eventloop.waits_for_gil(thread):
            return None
        dispatch = eventloop.dispatch_index(thread)
        if dispatch is None:
            return None
        above = eventloop.python_indexes(thread, below=dispatch)
        if not above:
            return None  # the loop's own code on top: idle (gevent's hub waits in C)
        # What the loop called: the task's coroutine or the callback (past asyncio's own Task.__step).
        callback = next(
            (index for index in reversed(above) if not eventloop.is_loop_machinery(thread.frames[index])),
            above[-1],
        )
        caller = next(
            (index for index in above if not eventloop.is_blocking_library(thread.frames[index])), callback
        )
        library = [index for index in above if index < caller]
        native = eventloop.native_blocking_call(thread, above[0])
        call, short = self._describe_call(thread, library, native)
        # Without library frames or --native the dump cannot show the call; for an instant, a
        # thread waiting for the GIL between two bytecodes of a callback looks the same.
        identified = bool(library or native)
        unnamed = _UNNAMED_CALL if not identified else _ONE_DUMP if len(context.series) == 1 else ""
        quoted = {above[0], caller, callback, dispatch}
        quoted |= {native[0]} if native else set()
        quoted |= {library[-1]} if library else set()
        evidence = [context.header(thread)] + [context.frame(thread, index) for index in sorted(quoted)]
        loop = eventloop.framework(thread, dispatch)
        caller_frame, callback_frame = thread.frames[caller], thread.frames[callback]
        running = (
            f", called from {_where(callback_frame)}, the coroutine or callback the loop is running"
            if callback != caller
            else ""
        )
        return self.finding(
            f"{thread.name} runs the {loop} event loop and is held in one of its callbacks: "
            f"{_where(caller_frame)} is blocked in {call}{running}. Until that call returns, every "
            f"other task and callback of this loop is stalled (timers, reads, writes, heartbeats; an "
            f"aiokafka consumer on it neither fetches nor heartbeats).{unnamed}",
            [thread.name],
            evidence,
            severity=Severity.ERROR if identified else Severity.WARNING,
            story=(
                f"The {loop} event loop of {thread.name} is blocked: {caller_frame.function} waits in {short}"
            ),
            details={
                "loop": loop,
                "blocking_call": call,
                "caller": _where(caller_frame),
                "callback": _where(callback_frame),
            },
        )

    @staticmethod
    def _describe_call(thread: Thread, library: list[int], native: tuple[int, str] | None) -> tuple[str, str]:
        """The blocking call in full (library frames as printed, the C call), and in short."""
        frames = thread.frames
        if library:
            outer, inner = frames[library[-1]], frames[library[0]]
            call = _where(outer)
            if inner is not outer:
                call += f", waiting in {_where(inner)}"
            return call + (f", in {native[1]}" if native else ""), outer.function
        if native:
            return f"{native[1]} ({frames[native[0]].function})", native[1]
        return (
            "a call into C made at that line (time.sleep, a socket call, a lock acquire: "
            "py-spy --native names it)",
            "a call into C",
        )
