"""asyncio task stacks: `Task.print_stack()` for every task of `asyncio.all_tasks()`.

    Stack for <Task pending name='kafka-poll-loop' coro=<poll_loop() running at app.py:35>
        wait_for=<Future pending cb=[Task.task_wakeup()]>> (most recent call last):     one line
      File "app.py", line 35, in poll_loop
        await records.put(record)

A suspended coroutine's stack is its own frame only (CPython keeps no caller frames for it), so
each task shows the line it awaits on, not what it awaits: an `await queue.put()` shows no
Queue.put frame. `No stack for <Task ...>` is printed for a task that has not started. The
task is named by its name; a task with `wait_for=` waits (IDLE), the one running (the caller
of print_stack) is RUNNABLE.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from kafkadiag.dumps.pythreads import PythonDump
from kafkadiag.dumps.pytraceback import StackReader
from kafkadiag.model import DumpFormat, Thread, ThreadDump, ThreadState, ThreadStatus

# Python 3.8+ names every task (name='Task-3'); 3.6 and 3.7 show only its coroutine.
TASK_HEADER = re.compile(
    r"^(?P<kind>Stack|No stack) for <(?P<task>\w*Task) (?P<state>\w+)"
    r"(?: name='(?P<name>[^']*)'| coro=<(?P<coro>[^\s(]+)\()"
)
AWAITING = " wait_for="
NOTE = "asyncio shows each task's own coroutine frame only, not what it awaits"


def _name(header: re.Match[str]) -> str:
    return header["name"] if header["name"] is not None else f"task {header['coro']}()"


def _key(header: re.Match[str]) -> str | None:
    """The task's name, which starts another dump when seen again; an unnamed task (3.6, 3.7) has
    nothing that tells it apart for sure (two tasks of one coroutine print alike)."""
    return header["name"]


def _task(header: re.Match[str], line_no: int, stack: StackReader) -> Thread:
    thread = stack.thread(_name(header), header.string, line_no)
    if AWAITING in header.string:
        return thread._replace(state=ThreadState.WAITING, status=ThreadStatus.IDLE)
    return thread._replace(state=ThreadState.RUNNABLE, status=ThreadStatus.RUNNABLE)


def parse_asyncio_tasks(batches: Iterable[list[str]], source: str) -> Iterator[ThreadDump]:
    dump: PythonDump | None = None
    count = 0
    header: re.Match[str] | None = None
    header_line_no = 0
    stack = StackReader()
    line_no = 0

    def close_task() -> None:
        nonlocal header, stack
        if header is not None and dump is not None:
            dump.threads.append(_task(header, header_line_no, stack))
            key = _key(header)
            if key is not None:
                dump.seen.add(key)
        header, stack = None, StackReader()

    for batch in batches:
        for line in batch:
            line_no += 1
            if not line.strip():
                continue
            task = TASK_HEADER.match(line)
            if task:
                close_task()
                if dump is None or _key(task) in dump.seen:
                    if dump is not None:
                        yield dump.build()
                    dump = PythonDump(source, count, line_no, DumpFormat.ASYNCIO, "asyncio", notes=(NOTE,))
                    count += 1
                header, header_line_no = task, line_no
                dump.end_line_no = line_no
                continue
            if dump is None:
                continue
            if header is not None and stack.feed(line, line_no):
                dump.end_line_no = line_no
                continue
            close_task()
            dump.unparsed.add(line_no, line)
    close_task()
    if dump is not None:
        yield dump.build()
