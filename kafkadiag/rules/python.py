"""How Python consumers look in py-spy dumps: poll loops, hand-off queues, workers."""

from __future__ import annotations

import re

from kafkadiag.model import Frame, Thread
from kafkadiag.rules.base import Evidence
from kafkadiag.rules.context import AnalysisContext

# Frames of the standard library and of kafka-python, skipped when naming application code.
LIBRARY_FILES = ("threading.py", "queue.py", "selectors.py", "socket.py", "ssl.py", "concurrent/futures")
# Green-thread libraries: their hub and primitives are not the application's code. An eventlet
# Guru Meditation Report shows every green thread parked in eventlet/hubs/hub.py's switch and the
# hub's own OS thread in eventlet/hubs/poll.py's wait (fixtures/captured/pyfmt-eventlet-poll-queue-full):
# read as application code, an idle hub was named as a queue's consumer.
GREEN_LIBRARY_DIRS = ("/eventlet/", "/gevent/", "/greenlet/")
POLL_NAMES = re.compile(r"poll|consum|kafka|fetch", re.IGNORECASE)
QUEUE_PUT = ("Queue.put",)
QUEUE_GET = ("Queue.get",)
# Where a Python thread waits for work or time without being stuck.
IDLE_FUNCTIONS = frozenset(
    {
        "Queue.get",
        "EpollSelector.select",
        "PollSelector.select",
        "SelectSelector.select",
        "DefaultSelector.select",
        "Event.wait",
        "Thread.join",
        "Thread._wait_for_tstate_lock",
        "_worker",  # concurrent.futures idle worker (queue.get below it)
    }
)
# The same waits in the green-thread libraries, whose reports print the bare method name: an
# eventlet Event's wait, a GreenThread's wait (its join), gevent's Event.wait and Greenlet.join.
GREEN_IDLE = frozenset(
    {
        ("eventlet/event.py", "wait"),
        ("eventlet/greenthread.py", "wait"),
        ("gevent/event.py", "wait"),
        ("gevent/greenlet.py", "join"),
    }
)


def python_function_index(thread: Thread, *functions: str) -> int | None:
    for index, frame in enumerate(thread.frames):
        if frame.native:
            continue
        if frame.function in functions:
            return index
    return None


def python_frames(thread: Thread) -> list[tuple[int, Frame]]:
    return [(index, frame) for index, frame in enumerate(thread.frames) if not frame.native]


def is_library_frame(frame: Frame) -> bool:
    file = frame.file or ""
    # py-spy prints paths relative to sys.path entries ("kafka/coordinator/base.py") or absolute.
    rooted = "/" + file
    return (
        file.endswith(LIBRARY_FILES)
        or "/kafka/" in rooted
        or any(directory in rooted for directory in GREEN_LIBRARY_DIRS)
        or file.startswith("<")
    )


def first_application_frame(thread: Thread) -> int | None:
    for index, frame in python_frames(thread):
        if not is_library_frame(frame):
            return index
    return None


def is_waiting_for_work(thread: Thread) -> bool:
    """Idle in a queue get, a selector, an event or a join: waiting for something to do."""
    return any(_is_idle(frame) for _, frame in python_frames(thread)[:3])


def _is_idle(frame: Frame) -> bool:
    if frame.function in IDLE_FUNCTIONS:
        return True
    method = frame.function.rpartition(".")[2]
    if any((frame.file or "").endswith(file) and method == name for file, name in GREEN_IDLE):
        return True
    # Every selector class has its own select; before Python 3.11 py-spy prints it bare.
    return method == "select" and (frame.file or "").endswith("selectors.py")


def looks_like_poll_loop(thread: Thread) -> bool:
    if POLL_NAMES.search(thread.name):
        return True
    return any(POLL_NAMES.search(frame.function) for _, frame in python_frames(thread)[:6])


def self_address(frame: Frame) -> int | None:
    for variable in frame.locals:
        if variable.name == "self":
            match = re.search(r"at (0x[0-9a-fA-F]+)>", variable.value)
            if match:
                return int(match.group(1), 16)
    return None


def blocked_with_workers_evidence(
    context: AnalysisContext, thread: Thread, index: int, workers: list[Thread]
) -> list[Evidence]:
    """The blocked thread's header, blocking frame and caller, then each worker's own code."""
    evidence = [context.header(thread), context.frame(thread, index)]
    caller = first_application_frame(thread)
    if caller is not None:
        evidence.append(context.frame(thread, caller))
    for worker in workers[:5]:
        evidence.append(context.header(worker))
        application = first_application_frame(worker)
        if application is not None:
            evidence.append(context.frame(worker, application))
    return evidence
