"""Thread.getAllStackTraces() as an application logs it: `Thread[name,5,main]`, then its frames.

Watchdogs print every thread's stack themselves when something hangs. alpakka-kafka's
KafkaConsumerActor does when a poll outlives its wake-up timeout (akka.kafka.consumer.wakeup-debug),
in one log message:

    [WARN] [...] Wake up has been triggered. Dumping stacks: Thread[pool-1-thread-1,5,main]
     sun.misc.Unsafe.park(Native Method)
    java.util.concurrent.locks.LockSupport.park(LockSupport.java:175)

    Thread[#23,kafka-coordinator-heartbeat-thread | billing,5,main]     JDK 19+: the id first
    \tat java.base/java.lang.Object.wait0(Native Method)                or as an exception's frames

Thread.toString() gives the name, the priority and the group; StackTraceElement.toString() each
frame. No state and no lock is printed. A wait is read from the top frame (Object.wait, a park, a
sleep), a thread in native code is running as far as the JVM is concerned, and any other thread
may as well be entering a monitor as running: its state stays unknown. Every dump says so.

A dump ends at the first line that is neither a frame, a blank line nor the next thread; the
next `Thread[...]` line after it starts another dump (a log holding each wake-up's dump).

An event loop's blocked-thread warning names its thread the same way ("Thread Thread[name,5,main]
has been blocked for 5457 ms") and is read here too: see kafkadiag.dumps.blockedwarnings.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

from kafkadiag.digits import is_decimal
from kafkadiag.dumps.blockedwarnings import (
    BLOCKHOUND,
    BLOCKHOUND_PRODUCER,
    BLOCKHOUND_THREAD,
    BlockedWarning,
    FramePrefix,
    blocked_warning,
    blockhound_call,
    without_jar,
)
from kafkadiag.dumps.blockedwarnings import EXCEPTION as WARNING_EXCEPTION
from kafkadiag.dumps.blockedwarnings import NOTES as WARNING_NOTES
from kafkadiag.dumps.blockedwarnings import PRODUCER as WARNING_PRODUCER
from kafkadiag.dumps.javaframes import bare_frame_text, parse_java_frame
from kafkadiag.dumps.jvmthreads import DumpCollector, OpenThread
from kafkadiag.dumps.linefeed import numbered_lines
from kafkadiag.dumps.states import state_from_top_frames
from kafkadiag.model import DumpFormat, ThreadDump, ThreadState

# "Thread[name,5,main]", "Thread[#21,name,5,main]" (JDK 19+), "Thread[name,5,]" (a thread whose
# group is gone), at the end of a line that may start with a logger's text. The name may itself
# hold commas and brackets: the priority and group are split off from the right.
THREAD_HEADER = re.compile(r"(?:^|(?<=\s))Thread\[(?P<body>.*,\d+,[^,\]]*)\]\s*$")
# "VirtualThread[#22]/runnable@ForkJoinPool-1-worker-1", "VirtualThread[#22,name]/waiting"
VIRTUAL_HEADER = re.compile(r"(?:^|(?<=\s))VirtualThread\[#(?P<id>\d+)(?:,(?P<name>.*))?\]/(?P<rest>\S+)\s*$")

NOTE_NO_STATES = (
    "Thread.getAllStackTraces() as an application printed it: no thread states and no lock lines. "
    "Waits are read from each top frame (Object.wait, park, sleep); a thread entering a monitor "
    "looks like a running one, and no lock can be linked to its holder. Take a jstack -l for those"
)


# One loop over the lines, its state in a few locals: warnings, headers, frames and the log lines
# that end a dump, in the order they are tested; longer than 60 lines, shorter than a reader class.
def parse_stack_traces(batches: Iterable[list[str]], source: str) -> Iterator[ThreadDump]:
    dump: DumpCollector | None = None
    thread: OpenThread | None = None
    count = 0
    # An event loop's blocked-thread warning opens a thread too (kafkadiag.dumps.blockedwarnings):
    # the log viewer's columns in front of its frames, and whether the thread came from one.
    prefix = FramePrefix()
    warned = False

    def finish_thread() -> None:
        nonlocal thread
        if thread is not None and dump is not None and (thread.frames or not warned):
            thread.state, thread.detail = state_from_top_frames(thread.frames)
            dump.threads.append(thread.build())
        thread = None

    def finish_dump() -> ThreadDump | None:
        nonlocal dump, count
        finish_thread()
        prefix.forget()
        finished, dump = dump, None
        if finished is None or not any(thread.frames for thread in finished.threads):
            return None  # "Thread[worker,5,main]" ending a log line, not a dump
        finished.note(WARNING_NOTES.get(finished.producer or "", NOTE_NO_STATES))
        count += 1
        return finished.build()

    for line_no, line in numbered_lines(batches):
        warning = blocked_warning(line) if "Thread Thread[" in line else None
        if warning is None and "Blocking call! " in line:
            warning = _blockhound(line)
        opened = _open_thread(line, line_no) if warning is None else _open_warned(line, line_no, warning)
        if opened is not None:
            if dump is not None and warning is not None and _seen(dump, thread, opened.name):
                finished = finish_dump()  # the same thread warned again: a later snapshot
                if finished is not None:
                    yield finished
            if dump is None:
                dump = DumpCollector(source, DumpFormat.STACK_TRACES, count, line_no)
                dump.producer = _producer(warning)
            finish_thread()
            thread, warned = opened, warning is not None
            dump.end_line_no = line_no
            continue
        if dump is None:
            continue  # log text between dumps
        if warned and thread is not None and not thread.frames and WARNING_EXCEPTION in line:
            prefix.learn(line)  # the stack starts: its columns are the log viewer's
            thread.stack_line_no = line_no + 1
            continue
        stripped = without_jar(prefix.strip(line).strip())
        if not stripped:
            continue
        frame_text = bare_frame_text(stripped)
        if frame_text is not None and thread is not None:
            thread.frames.append(parse_java_frame(frame_text))
            dump.end_line_no = line_no
            continue
        finished = finish_dump()  # a log line: the dump it follows is complete
        if finished is not None:
            yield finished
    finished = finish_dump()
    if finished is not None:
        yield finished


def _seen(dump: DumpCollector, current: OpenThread | None, name: str) -> bool:
    """A thread of that name is in the dump already, or is the one being read."""
    return (current is not None and current.name == name) or any(t.name == name for t in dump.threads)


def _producer(warning: BlockedWarning | None) -> str:
    if warning is None:
        return "Thread.getAllStackTraces()"
    return BLOCKHOUND_PRODUCER if warning.name == BLOCKHOUND_THREAD else WARNING_PRODUCER


def _blockhound(line: str) -> BlockedWarning | None:
    """A BlockHound error opens the stack of the thread it stopped, which it does not name."""
    if blockhound_call(line) is None:
        return None
    start = line.find(BLOCKHOUND)
    return BlockedWarning(BLOCKHOUND_THREAD, 0, 0, start, stack_follows_inline=True)


def _open_warned(line: str, line_no: int, warning: BlockedWarning) -> OpenThread:
    text = line[warning.start :].strip()
    return OpenThread(warning.name, ThreadState.UNKNOWN, line_no, text, stack_line_no=line_no + 1)


def _open_thread(line: str, line_no: int) -> OpenThread | None:
    if "Thread[" not in line:
        return None
    header = THREAD_HEADER.search(line)
    if header is not None:
        name, _, _ = header["body"].rsplit(",", 2)
        if name.startswith("#") and "," in name and is_decimal(name[1 : name.index(",")]):
            name = name[name.index(",") + 1 :]  # JDK 19+: "#21,name"
        text = line[header.start() :].strip()
        return OpenThread(name, ThreadState.UNKNOWN, line_no, text, stack_line_no=line_no + 1)
    virtual = VIRTUAL_HEADER.search(line)
    if virtual is not None:
        name = virtual["name"] or f"virtual thread #{virtual['id']}"
        text = line[virtual.start() :].strip()
        return OpenThread(name, ThreadState.UNKNOWN, line_no, text, stack_line_no=line_no + 1)
    return None
