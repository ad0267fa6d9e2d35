"""Class names for the standard library's methods where a dump prints bare function names.

py-spy names a frame by the code object's qualified name, which exists from Python 3.11 on
("Queue.put"); for older interpreters it prints the bare name ("put"). The rules speak of
Queue.put, Condition.wait, Thread.join: these frames get the name 3.11 would print, from the
module they are in and, for threading's three `wait` methods, from what they call. Application
frames are left as printed (a bare name there may as well be a module-level function).
faulthandler, traceback, gdb's py-bt, gevent and asyncio print the bare name on every Python
version (co_name, not co_qualname), so their parsers qualify the same way.
"""

from __future__ import annotations

from kafkadiag.model import Frame

# (module file, bare name) -> qualified name, where the name is one class's method in that module.
_UNIQUE = {
    ("threading.py", "wait_for"): "Condition.wait_for",
    ("threading.py", "notify"): "Condition.notify",
    ("threading.py", "notify_all"): "Condition.notify_all",
    ("threading.py", "join"): "Thread.join",
    ("threading.py", "_wait_for_tstate_lock"): "Thread._wait_for_tstate_lock",
    ("threading.py", "run"): "Thread.run",
    ("threading.py", "start"): "Thread.start",
    ("threading.py", "_bootstrap"): "Thread._bootstrap",
    ("threading.py", "_bootstrap_inner"): "Thread._bootstrap_inner",
    ("threading.py", "acquire"): "Semaphore.acquire",
    ("threading.py", "release"): "Semaphore.release",
    ("threading.py", "_enter"): "Barrier._enter",
    # Condition is threading.py's one class with its own __enter__/__exit__ (the locks' and
    # Semaphore's are aliases of acquire/release, named so in their code objects).
    ("threading.py", "__enter__"): "Condition.__enter__",
    ("threading.py", "__exit__"): "Condition.__exit__",
    ("threading.py", "_wait"): "Barrier._wait",
    ("queue.py", "put"): "Queue.put",
    ("queue.py", "get"): "Queue.get",
    ("queue.py", "put_nowait"): "Queue.put_nowait",
    ("queue.py", "get_nowait"): "Queue.get_nowait",
    ("queue.py", "join"): "Queue.join",
    ("queue.py", "task_done"): "Queue.task_done",
    ("_base.py", "result"): "Future.result",
    ("_base.py", "exception"): "Future.exception",
}


def _module_file(frame: Frame) -> str:
    path = (frame.file or "").replace("\\", "/")
    name = path.rpartition("/")[2]
    # Only concurrent.futures' _base.py is meant by "_base.py".
    if name == "_base.py" and "concurrent/futures" not in path:
        return ""
    return name


def _threading_wait(frames: list[Frame], index: int) -> str:
    """Condition.wait is the innermost; Event.wait calls it; Barrier.wait calls _enter/_wait."""
    callee = next((frame for frame in reversed(frames[:index]) if not frame.native), None)
    if callee is None or _module_file(callee) != "threading.py":
        return "Condition.wait"
    if callee.function in ("Condition.wait", "wait"):
        return "Event.wait"
    if callee.function in ("Barrier._enter", "Barrier._wait", "_enter", "_wait"):
        return "Barrier.wait"
    return "Condition.wait"


def qualify_methods(frames: list[Frame]) -> list[Frame]:
    """`frames` (innermost first) with the standard library's bare method names qualified."""
    qualified: list[Frame] = []
    for index, frame in enumerate(frames):
        if frame.native or "." in frame.function:
            qualified.append(frame)
            continue
        module = _module_file(frame)
        if module == "threading.py" and frame.function == "wait":
            name: str | None = _threading_wait(qualified, index)
        else:
            name = _UNIQUE.get((module, frame.function))
        qualified.append(frame._replace(function=name) if name else frame)
    return qualified
