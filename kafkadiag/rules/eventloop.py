"""How event loops look in py-spy dumps: where the loop hands control to a callback or a
coroutine, and what a callback is blocked in when the loop's thread is not running.

py-spy shows only Python frames unless run with --native, and in CPython 3.11 `time.sleep`,
`socket.recv` and `Lock.acquire` are C functions: the topmost Python frame of a loop thread stuck
in one is the coroutine that called it, at the line of the call. With --native the C function is
named too (`time_sleep`, `sock_recv`, `PyThread_acquire_lock_timed`).
"""

from __future__ import annotations

from typing import NamedTuple

from kafkadiag.model import Frame, Thread


class LoopFrame(NamedTuple):
    """A frame of an event loop's own code: its method name and the file it lives in."""

    method: str
    file: str
    framework: str


# Frames from which a loop calls application code (a ready callback, a task step, a delayed call,
# a read handler). Above one of them is a callback or a coroutine; when the loop is idle the
# topmost loop frame is its selector wait instead (BaseEventLoop._run_once -> selectors' select).
DISPATCH_FRAMES = (
    LoopFrame("_run", "asyncio/events.py", "asyncio"),  # Handle._run: callbacks and task steps
    LoopFrame("runUntilCurrent", "twisted/internet/base.py", "Twisted"),  # callLater calls
    LoopFrame("_doReadOrWrite", "reactor.py", "Twisted"),  # epoll/poll/select reactors' I/O handlers
    LoopFrame("_run_callback", "tornado/ioloop.py", "tornado"),
    # Greenlet.run: a greenlet's body. gevent's wheels compile it (Cython), so it is a native frame
    # ("run (gevent/_gevent_cgreenlet.cpython-311-x86_64-linux-gnu.so)") seen only with --native;
    # without --native a greenlet's stack shows just its own frames, and nothing of the hub.
    LoopFrame("run", "gevent/_gevent_cgreenlet", "gevent"),
    LoopFrame("run", "gevent/greenlet.py", "gevent"),  # pure-Python gevent (PURE_PYTHON=1)
    LoopFrame("run", "gevent/hub.py", "gevent"),  # Hub.run: callbacks run by the hub itself
)
# One turn of a loop: with the selector wait above it the loop is idle. A dispatch frame further
# down belongs to an outer loop that runs this one (nest_asyncio, a loop run from a callback).
ITERATION_FRAMES = (
    LoopFrame("_run_once", "asyncio/base_events.py", "asyncio"),
    LoopFrame("_run_once", "nest_asyncio.py", "asyncio"),  # "_patch_loop.<locals>._run_once"
    LoopFrame("doIteration", "twisted/internet/", "Twisted"),
    LoopFrame("doPoll", "twisted/internet/", "Twisted"),
    LoopFrame("doSelect", "twisted/internet/", "Twisted"),
)
# Frames that show which framework runs the loop, when it sits on another (tornado on asyncio).
FRAMEWORK_FRAMES = (
    LoopFrame("start", "tornado/platform/asyncio.py", "tornado"),
    LoopFrame("start", "tornado/ioloop.py", "tornado"),
    LoopFrame("mainLoop", "twisted/internet/base.py", "Twisted"),
)

# Python library code that blocks the calling thread: a frame of one of these files above the
# callback names the blocking call ("HTTPConnection.getresponse (http/client.py:1386)").
BLOCKING_LIBRARY_FILES = (
    "selectors.py",  # a synchronous client's own wait (kafka-python's poll) called from a callback
    "socket.py",
    "ssl.py",
    "http/client.py",
    "urllib/request.py",
    "subprocess.py",
    "threading.py",
    "queue.py",
    "concurrent/futures/_base.py",
    "logging/__init__.py",
)
BLOCKING_LIBRARY_PACKAGES = (
    "urllib3/",
    "requests/",
    "httpx/",
    "kafka/",  # kafka-python: a synchronous KafkaConsumer/KafkaProducer used from a coroutine
    "psycopg2/",
    "pymysql/",
    "redis/",
    "botocore/",
)

# C functions of CPython that a blocking call waits in (py-spy --native), and what they are.
NATIVE_BLOCKING_CALLS = {
    "time_sleep": "time.sleep",
    "pysleep": "time.sleep",
    "sock_recv": "socket.recv",
    "sock_recv_into": "socket.recv_into",
    "sock_recvfrom": "socket.recvfrom",
    "sock_send": "socket.send",
    "sock_sendall": "socket.sendall",
    "sock_connect": "socket.connect",
    "sock_accept": "socket.accept",
    "socket_getaddrinfo": "socket.getaddrinfo",
    "socket_gethostbyname": "socket.gethostbyname",
    "_ssl__SSLSocket_read": "ssl.SSLSocket.read",
    "_ssl__SSLSocket_write": "ssl.SSLSocket.write",
    "_ssl__SSLSocket_do_handshake": "ssl.SSLSocket.do_handshake",
    "PyThread_acquire_lock_timed": "Lock.acquire",
    "os_waitpid": "os.waitpid",
    "os_read": "os.read",
    "os_write": "os.write",
}
# Native frames of a thread waiting for the GIL, not for I/O: py-spy calls such a thread idle too.
GIL_WAIT_NATIVE = ("take_gil", "PyEval_RestoreThread", "PyEval_AcquireThread")


# py-spy --native prints C functions of extension modules with their source file and line
# ("task_step (_asynciomodule.c:2990)", "sock_recv (socketmodule.c:3567)"): native all the same.
C_SOURCE_SUFFIXES = (".c", ".h", ".cc", ".cpp", ".cxx", ".hpp", ".hh", ".pyx")


def is_native(frame: Frame) -> bool:
    return frame.native or (frame.file or "").endswith(C_SOURCE_SUFFIXES)


def python_indexes(thread: Thread, below: int | None = None) -> list[int]:
    """Indexes of the Python (not native) frames, topmost first, above frame `below` if given."""
    end = len(thread.frames) if below is None else below
    return [index for index in range(end) if not is_native(thread.frames[index])]


def _matches(frame: Frame, loop_frame: LoopFrame) -> bool:
    # Python 3.11+ py-spy prints "Class.method", earlier versions the bare method name.
    return frame.function.rpartition(".")[2] == loop_frame.method and loop_frame.file in (frame.file or "")


def dispatch_index(thread: Thread) -> int | None:
    """Index of the topmost frame from which an event loop called the code above it."""
    for index, frame in enumerate(thread.frames):
        if any(_matches(frame, loop_frame) for loop_frame in DISPATCH_FRAMES):
            return index
        iteration = next((loop for loop in ITERATION_FRAMES if _matches(frame, loop)), None)
        if iteration is not None:
            # Application code right above asyncio's iteration: the dispatch frame between them
            # (Handle._run, its only way to call code) was left out of an excerpt. Other loops
            # call helpers of their own between an iteration and a callback.
            above = thread.frames[index - 1] if index > 0 else None
            if iteration.framework == "asyncio" and above is not None and _called_by_the_loop(above):
                return index
            return None  # the innermost loop is between callbacks: waiting for I/O or timers
    return None


def _called_by_the_loop(frame: Frame) -> bool:
    if is_native(frame) or is_loop_machinery(frame):
        return False
    file = frame.file or ""
    return bool(file) and not file.endswith("selectors.py") and not file.startswith("<")


def framework(thread: Thread, dispatch: int) -> str:
    for frame in thread.frames[dispatch:]:
        for loop_frame in FRAMEWORK_FRAMES:
            if not is_native(frame) and _matches(frame, loop_frame):
                return loop_frame.framework
    frame = thread.frames[dispatch]
    return next(loop.framework for loop in DISPATCH_FRAMES + ITERATION_FRAMES if _matches(frame, loop))


def is_loop_machinery(frame: Frame) -> bool:
    """asyncio's own code between the loop and a coroutine (Task.__step where tasks are pure
    Python, as on PyPy or under nest_asyncio)."""
    return "asyncio/" in (frame.file or "") and not (frame.file or "").endswith("nest_asyncio.py")


def is_blocking_library(frame: Frame) -> bool:
    file = "/" + (frame.file or "")
    return file.endswith(BLOCKING_LIBRARY_FILES) or any(
        "/" + package in file for package in BLOCKING_LIBRARY_PACKAGES
    )


def native_blocking_call(thread: Thread, above: int) -> tuple[int, str] | None:
    """The C function (index, what it is) the thread waits in, among the native frames above
    Python frame `above`; None without --native frames there."""
    for index in range(above - 1, -1, -1):
        frame = thread.frames[index]
        if is_native(frame) and frame.function in NATIVE_BLOCKING_CALLS:
            return index, NATIVE_BLOCKING_CALLS[frame.function]
    return None


def waits_for_gil(thread: Thread) -> bool:
    return any(is_native(frame) and frame.function in GIL_WAIT_NATIVE for frame in thread.frames[:6])
