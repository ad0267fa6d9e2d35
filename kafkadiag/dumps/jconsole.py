"""JConsole's Threads tab, copied: the text it shows for the thread selected in its list.

JConsole is how many Kafka users watch a client's JMX metrics, and its Threads tab is at hand
when a consumer stalls. For each thread it writes (sun.tools.jconsole.ThreadTab, with the formats
of its messages.properties):

    Name: kafka-producer-network-thread | producer-1
    State: WAITING on java.util.concurrent.CompletableFuture$Signaller@3613b1b5 owned by: main
    Total blocked: 40  Total waited: 283,022

    Stack trace:
    java.base@21.0.7/jdk.internal.misc.Unsafe.park(Native Method)
    app//com.example.Ledger.record(Ledger.java:41)
       - locked com.example.Ledger@1b6d3586

The state line names the lock waited for and its owner (ThreadInfo's lockName, lockOwnerName);
each frame is StackTraceElement.toString(); the monitors held follow the frame that took them
(MonitorInfo.toString(): class@identity-hash). Locked ownable synchronizers are not shown: a
ReentrantLock's owner is known only from a waiter's "owned by". The Chinese and Japanese
JConsole say the same in their words ("名称:", "状态: X上的WAITING, 拥有者: main", "- 已锁定 ").

People paste the threads that matter one after another. Each was shown when it was selected, so
the threads are not one moment of the process: a caveat says so.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from kafkadiag.dumps.javaframes import bare_frame_text, parse_java_frame
from kafkadiag.dumps.jvmthreads import (
    DumpCollector,
    OpenThread,
    attach_synchronizers,
    owned_by_name,
)
from kafkadiag.dumps.linefeed import numbered_lines
from kafkadiag.dumps.marks import is_block_markup
from kafkadiag.dumps.states import parse_state_line, stated_wait, stated_wait_kind
from kafkadiag.model import DumpFormat, LockEvent, LockEventKind, LockRef, ThreadDump, ThreadState

NAME_LINE = re.compile(r"^(?:Name|名称|名前): (?P<name>.*?)\s*$")
# English, Chinese and Japanese state lines: the state, the lock waited for, its owner.
_STATE_LINES = (
    re.compile(r"^State: (?P<state>[A-Z_]+)(?: on (?P<lock>\S+?)(?: owned by: (?P<owner>.*?))?)?\s*$"),
    re.compile(r"^状态: (?:(?P<lock>\S+?)上的)?(?P<state>[A-Z_]+)(?:, 拥有者: (?P<owner>.*?))?\s*$"),
    re.compile(r"^状態: (?:(?P<lock>\S+?)の)?(?P<state>[A-Z_]+)(?:、所有者: (?P<owner>.*?))?\s*$"),
)
_COUNTS_OR_HEADING = re.compile(
    r"^(?:Total blocked: |总阻止数: |ブロック済合計: |Stack trace:|堆栈跟踪:|スタック・トレース:)"
)
_LOCKED = re.compile(r"^- (?:locked |已锁定 ?|ロック済 ?)(?P<class>[^@\s]+)@(?P<hash>[0-9a-fA-F]+)\s*$")

NOTE_SELECTED_ONE_BY_ONE = (
    "JConsole's Threads tab: each thread as it was when selected, not one moment of the process; "
    "locked ownable synchronizers are not shown, so a ReentrantLock's holder is known only from a "
    "waiter's 'owned by'"
)


def state_line(line: str) -> re.Match[str] | None:
    """The state line of JConsole's thread text, in any of its languages."""
    for pattern in _STATE_LINES:
        match = pattern.match(line)
        if match is not None:
            return match
    return None


# One loop over the lines, its state in a few locals: a name line and the state line that makes it a
# thread, lock lines and frames, in the order they are tested; longer than 60 lines, shorter than a
# reader class.
def parse_jconsole(batches: Iterable[list[str]], source: str) -> Iterator[ThreadDump]:
    dump: DumpCollector | None = None
    thread: OpenThread | None = None
    # (waiter index, owner name, lock) for the locks a state line names the owner of
    stated_owners: list[tuple[int, str, LockRef]] = []
    pending_name: tuple[str, int, str] | None = None
    state_text = ""  # the open thread's state line, as written
    frame_line_nos: list[int] = []  # lock lines sit between the frames, and the stated wait is in none

    def finish_thread() -> None:
        nonlocal thread
        if thread is not None and dump is not None:
            _state_the_wait(thread, state_text, stated_owners, len(dump.threads))
            dump.threads.append(thread.build()._replace(frame_line_nos=tuple(frame_line_nos)))
        thread = None
        frame_line_nos.clear()

    for line_no, line in numbered_lines(batches):
        stripped = line.strip()
        if pending_name is not None:
            name, name_line_no, name_line = pending_name
            pending_name = None
            state = state_line(stripped)
            if state is not None:
                if dump is None:
                    dump = DumpCollector(source, DumpFormat.JCONSOLE, 0, name_line_no)
                    dump.producer = "JConsole"
                    dump.note(NOTE_SELECTED_ONE_BY_ONE)
                finish_thread()
                thread = _open_thread(name, name_line_no, name_line, state)
                state_text = stripped
                dump.end_line_no = line_no
                continue
        named = NAME_LINE.match(stripped)
        if named is not None:
            pending_name = (named["name"], line_no, stripped)  # a thread when a state line follows
            continue
        if dump is None or thread is None or not stripped or _COUNTS_OR_HEADING.match(stripped):
            continue
        if is_block_markup(stripped):
            continue  # the fence around the pasted text
        locked = _LOCKED.match(stripped)
        if locked is not None:
            lock_id = int(locked["hash"], 16)
            index = max(len(thread.frames) - 1, 0)
            thread.events.append(
                LockEvent(LockEventKind.LOCKED, lock_id, locked["class"], index, line_no, stripped)
            )
            dump.end_line_no = line_no
            continue
        frame_text = bare_frame_text(stripped)
        if frame_text is not None:
            thread.frames.append(parse_java_frame(frame_text))
            frame_line_nos.append(line_no)
            dump.end_line_no = line_no
            continue
        dump.unparsed_line(line_no, line)
    finish_thread()
    if dump is not None:
        dump.threads = attach_synchronizers(dump.threads, owned_by_name(dump.threads, stated_owners))
        yield dump.build()


def _open_thread(name: str, line_no: int, name_line: str, state: re.Match[str]) -> OpenThread:
    parsed, _ = parse_state_line(state["state"])
    detail = ""
    if state["lock"]:
        detail = f"on {state['lock']}" + (f" owned by: {state['owner']}" if state["owner"] else "")
    return OpenThread(name, parsed, line_no, name_line, detail=detail, stack_line_no=0)


def _state_the_wait(
    thread: OpenThread, state_text: str, stated_owners: list[tuple[int, str, LockRef]], index: int
) -> None:
    """The lock of the state line as the lock line jstack prints under the top frame, and its
    owner as the holder of that lock."""
    wait = stated_wait(thread.detail) if thread.detail else None
    # The state line's lock is the whole wait: what reconcile would read from the detail.
    thread.detail = ""
    if wait is None or thread.state in (ThreadState.RUNNABLE, ThreadState.NEW, ThreadState.TERMINATED):
        return
    kind = stated_wait_kind(thread.state, tuple(thread.frames))
    line_no = thread.line_no + 1  # the state line is the one under the name
    thread.events.insert(0, LockEvent(kind, wait.lock_id, wait.lock_class, 0, line_no, state_text))
    if wait.owner is not None:
        stated_owners.append((index, wait.owner, LockRef(wait.lock_id, wait.lock_class, line_no, state_text)))
