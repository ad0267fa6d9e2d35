"""Code entered asynchronously in a Python thread: signal handlers and finalizers.

CPython runs a Python signal handler in the main thread, between two bytecodes of whatever that
thread was doing, or from inside a blocking C call that checks for signals when interrupted
(time.sleep, a socket call, a lock acquire). py-spy then shows the handler's frame directly above
the interrupted frame, as if that frame had called it: in the text dump only the handler's name
tells it apart. Stronger evidence comes with --native (the handler is called from a C function
that only ever calls Python to run signal handlers) and --locals (its arguments are the signal
number and the interrupted frame). A `__del__` runs wherever the garbage collector happens to free
the object, in any thread.
"""

from __future__ import annotations

import re
from typing import NamedTuple

from kafkadiag.model import Frame, Thread
from kafkadiag.rules import eventloop, python

# C functions from which CPython 3.11 calls Python only to run signal handlers (the eval loop's
# pending-call check, and the EINTR retry loops of sleeps, socket calls and lock acquires).
SIGNAL_DISPATCH_NATIVE = frozenset(
    {
        "PyErr_CheckSignals",
        "_PyErr_CheckSignals",
        "_PyErr_CheckSignalsTstate",
        "handle_signals",
        "_Py_HandlePending",
        "make_pending_calls",
        "Py_MakePendingCalls",
        "sock_call_ex",
        "sock_call",
        "pysleep",
        "time_sleep",
        "acquire_timed",
        "lock_PyThread_acquire_lock",
        "rlock_acquire",
    }
)
# Names people give signal handlers: on_sigterm, handle_signal, _sigint_handler, sig_handler.
SIGNAL_HANDLER_NAME = re.compile(
    r"signal|sig(?:term|int|hup|quit|usr[12]?|chld|alrm|pipe|winch|abrt)|(?:^|_)sig(?:_|handler|$)",
    re.IGNORECASE,
)
FRAME_VALUE = re.compile(r"^<frame (?:object )?at 0x[0-9a-fA-F]+")
INT_VALUE = re.compile(r"^-?\d+$")
MAIN_THREAD = "MainThread"


class AsyncEntry(NamedTuple):
    """A frame entered asynchronously, and what shows it."""

    frame_index: int
    kind: str  # "signal handler" or "finalizer"
    shown_by: str  # what in the dump shows it: "--native frames", "--locals", "its name"
    confirmed: bool  # shown by the interpreter's own frames or the handler's arguments, not a name


def async_entry(thread: Thread, index: int) -> AsyncEntry | None:
    """Whether Python frame `index` of the thread was entered asynchronously, and how we know."""
    frame = thread.frames[index]
    method = frame.function.rpartition(".")[2]
    if method == "__del__":
        return AsyncEntry(index, "finalizer", "its name (__del__)", confirmed=True)
    if thread.name != MAIN_THREAD:
        return None  # CPython runs Python signal handlers in the main thread only
    caller = index + 1
    if caller < len(thread.frames) and eventloop.is_native(thread.frames[caller]):
        if thread.frames[caller].function in SIGNAL_DISPATCH_NATIVE:
            return AsyncEntry(
                index, "signal handler", f"--native: called from {thread.frames[caller].function}", True
            )
    if _has_signal_arguments(frame):
        return AsyncEntry(
            index, "signal handler", "--locals: its arguments are a signal number and a frame", True
        )
    if SIGNAL_HANDLER_NAME.search(method):
        return AsyncEntry(index, "signal handler", "its name", confirmed=False)
    return None


def _has_signal_arguments(frame: Frame) -> bool:
    values = [variable.value.strip() for variable in frame.locals]
    return any(FRAME_VALUE.match(value) for value in values) and any(
        INT_VALUE.match(value) for value in values
    )


# Python frames that only take a lock for their caller: the lock-taking code is the caller.
LOCK_WRAPPERS = (
    ("acquire", "logging/__init__.py"),  # Handler.acquire
    ("__enter__", "threading.py"),  # Condition.__enter__ (with condition:), Semaphore.__enter__
    ("acquire", "threading.py"),  # Semaphore.acquire, _RLock.acquire (pure-Python RLock)
)
LOCK_ACQUIRE_NATIVE = frozenset(
    {"PyThread_acquire_lock_timed", "lock_PyThread_acquire_lock", "rlock_acquire"}
)


def lock_taking_index(thread: Thread) -> int | None:
    """Index of the frame whose lock acquisition the (idle) thread is stopped in, else None.

    The topmost Python frame, or its caller when it is a lock wrapper of the standard library.
    A thread in Condition.wait has released the lock; one in other library code (a queue, a
    socket) is not acquiring. With --native frames, a lock acquire must be among them.
    """
    if thread.active is not False:
        return None
    frames = eventloop.python_indexes(thread)
    if not frames:
        return None
    top = thread.frames[frames[0]]
    method, file = top.function.rpartition(".")[2], top.file or ""
    taker = frames[0]
    if any(method == name and file.endswith(where) for name, where in LOCK_WRAPPERS):
        if len(frames) < 2:
            return None
        taker = frames[1]
    elif python.is_library_frame(top) or eventloop.is_blocking_library(top):
        return None
    natives = [frame for frame in thread.frames[: frames[0]] if eventloop.is_native(frame)]
    if natives and not any(frame.function in LOCK_ACQUIRE_NATIVE for frame in natives):
        return None
    return taker
