"""The parser's state, and when a dump or a thread opens and closes."""

from __future__ import annotations

from kafkadiag.digits import decimal
from kafkadiag.dumps.excerpts import headerless_name
from kafkadiag.dumps.hotspot.builders import DumpBuilder, ThreadBuilder
from kafkadiag.dumps.hotspot.locklines import STRUCTURE_LINES, ParsedLockLine
from kafkadiag.dumps.hotspot.syntax import AGENT_PRODUCER, IN_DUMP, JCMD_PID, OUTSIDE, STATE_LINE, TIMESTAMP
from kafkadiag.dumps.logprefix import PrefixStripper
from kafkadiag.dumps.threadcpu import ThreadCpuReader
from kafkadiag.model import (
    DeadlockLink,
    DumpFormat,
    Frame,
    OsThreadCpu,
    QuotedLine,
    ThreadDump,
    UnparsedLine,
)


class DumpLifecycle:
    """The parser's state, and the opening and closing of dumps and threads, which every kind of
    line can cause."""

    def __init__(self, source: str, dump_format: DumpFormat = DumpFormat.HOTSPOT) -> None:
        self.source = source
        self.dump_format = dump_format
        self.mode = OUTSIDE
        self.dump: DumpBuilder | None = None
        self.thread: ThreadBuilder | None = None
        self.pending: list[ThreadDump] = []
        self.dump_count = 0
        self.frame_cache: dict[str, Frame] = {}
        # Pool threads wait on the same lock, and dumps of one process repeat their lock lines.
        self.lock_line_cache: dict[str, ParsedLockLine] = dict(STRUCTURE_LINES)
        # State lines as read -> their text after "java.lang.Thread.State: ": a dump has a few
        # dozen spellings.
        self.state_text_cache: dict[str, str] = {}
        self.prefix = PrefixStripper()
        self.previous_line = ""
        self.previous_previous_line = ""
        self.report_links: list[DeadlockLink] = []
        # Signal lines seen before the first dump; they go to the dump that follows.
        self.pending_signals: list[UnparsedLine] = []
        # A top -H / ps -L table beside the dumps; rows before the first dump wait for it.
        self.thread_cpu = ThreadCpuReader()
        self.pending_os_threads: list[OsThreadCpu] = []
        self.report_thread: str | None = None
        self.report_waiting: str = ""
        self.report_lines: list[QuotedLine] = []  # the lines of the report's thread being read
        self.report_repeated: tuple[str, int] | None = None  # a cycle's thread named a second time
        self.last_line_no = 0
        self.last_rejoined = 0  # line number of the last continuation joined back
        self.name_only: tuple[str, int] | None = None  # a `"name"` line, maybe a cut header
        # A `"name":` line outside any dump: a deadlock report's stack pasted without the lines
        # above it, if a frame follows.
        self.report_name: tuple[str, int] | None = None
        # The first lines of a thread name that holds line breaks, with their line numbers.
        self.open_name: list[tuple[str, int]] = []
        # The line number of a lone "-": hard wrapping cut a lock line or an agent's frame right
        # after its dash, and the next line is the rest of it.
        self.lone_dash: int | None = None

    def _unparsed(self, line_no: int, line: str) -> None:
        assert self.dump is not None
        if self._thread_cpu_line(line, line_no):
            return
        self.dump.unparsed_line(line_no, line)
        if self.thread is not None:
            # A foreign line inside a stack: frame line numbers can no longer be derived.
            self.thread.stack_line_no = 0

    def _thread_cpu_line(self, line: str, line_no: int) -> bool:
        if not self.thread_cpu.feed(line, line_no):
            return False
        rows = self.thread_cpu.take()
        if self.dump is not None:
            self.dump.os_threads += rows
        else:
            self.pending_os_threads += rows
        return True

    def _headerless_thread(self, state_line: str, line_no: int) -> ThreadBuilder:
        """Open a thread at a state line whose header is not in the text, named by its line; the
        state line stands in for the header where a finding quotes it."""
        if self.mode != IN_DUMP or self.dump is None or self.dump.footer_seen:
            self._start_dump(line_no, banner=None)
        assert self.dump is not None
        self._finish_thread()
        self.dump.headerless.append(line_no)
        self.thread = ThreadBuilder(headerless_name(line_no), line_no, state_line.strip())
        return self.thread

    def _start_report_only_dump(self, line_no: int) -> None:
        self._start_dump(line_no, banner=None)
        assert self.dump is not None
        self.dump.report_only = True

    def _start_dump(self, line_no: int, banner: str | None) -> None:
        self._finish_dump()
        start_line = line_no
        timestamp = None
        pid = None
        previous = self.previous_line.strip()
        if banner is not None and TIMESTAMP.match(previous):
            timestamp = previous
            start_line = line_no - 1
            pid_match = JCMD_PID.match(self.previous_previous_line.strip())
            if pid_match:
                pid = decimal(pid_match.group(1))
                start_line -= 1
        else:
            pid_match = JCMD_PID.match(previous)
            if banner is not None and pid_match:
                pid = decimal(pid_match.group(1))
                start_line -= 1
        dump = DumpBuilder(self.source, self.dump_count, start_line)
        dump.signals, self.pending_signals = self.pending_signals, []
        dump.os_threads, self.pending_os_threads = self.pending_os_threads, []
        dump.banner = banner
        dump.timestamp = timestamp
        dump.pid = pid
        if pid is not None:
            dump.producer = "jcmd"
        self.dump_count += 1
        self.dump = dump
        self.mode = IN_DUMP

    def _end_dump_before(self, line_no: int) -> None:
        """The open dump ends on the line before `line_no`, which is not a line of it."""
        assert self.dump is not None
        self._finish_thread()
        self.dump.end_line_no = line_no - 1
        self._finish_dump()
        self.mode = OUTSIDE

    def _footer(self, line: str, line_no: int, jni: bool = True) -> None:
        if self.dump is None:
            return
        self._finish_thread()
        if jni:
            self.dump.jni = line.strip()
        self.dump.footer_seen = True
        self.dump.end_line_no = line_no
        self.mode = OUTSIDE

    def _finish_thread(self) -> None:
        thread = self.thread
        dump = self.dump
        if (
            thread is not None
            and dump is not None
            and not thread.frames
            and thread.header.startswith(STATE_LINE)
        ):
            # A state line with no stack after it opened no thread (a file stored line-reversed
            # puts every state line after its stack): it stays a line that was not understood.
            dump.headerless.remove(thread.line_no)
            dump.unparsed_line(thread.line_no, thread.header)
            self.thread = None
            return
        if thread is not None and dump is not None:
            # The dump's end moves past its threads once, when it is built (they come in order).
            dump.threads.append(thread.build())
            if thread.stated_owner is not None:
                dump.stated_owners.append((len(dump.threads) - 1, *thread.stated_owner))
        self.thread = None

    def _finish_dump(self, input_ended: bool = False) -> None:
        if self.dump is None:
            return
        in_thread = self.thread is not None
        self._finish_thread()
        dump = self.dump
        if dump.threads or dump.banner is not None or dump.deadlocks:
            if dump.end_line_no < self.last_line_no and not dump.footer_seen:
                dump.end_line_no = self.last_line_no
            # VisualVM writes no JNI footer; only a HotSpot dump without one, inside a thread when
            # the input ended, was cut short (JDK 5 and HP-UX JVMs print no footer at all: a dump of
            # theirs that the next one follows is whole).
            truncated = (
                self.dump_format is DumpFormat.HOTSPOT
                and input_ended
                and not dump.footer_seen
                and dump.producer != AGENT_PRODUCER  # the serviceability agent prints no footer
                and dump.banner is not None
                and in_thread
            )
            self.pending.append(dump.build(truncated, self.dump_format))
        self.dump = None

    def take_finished(self) -> list[ThreadDump]:
        """Dumps that can no longer change (the open dump may still get a deadlock report)."""
        ready, self.pending = self.pending, []
        return ready
