"""Unindented lines: banners, footers, the log text around dumps, and what ends a fragment."""

from __future__ import annotations

from kafkadiag.digits import decimal
from kafkadiag.dumps import jrockit
from kafkadiag.dumps.excerpts import is_annotation
from kafkadiag.dumps.hotspot.builders import DumpBuilder, ThreadBuilder
from kafkadiag.dumps.hotspot.report import DeadlockReport
from kafkadiag.dumps.hotspot.syntax import (
    AGENT_BANNER,
    AGENT_PREAMBLE,
    AGENT_PRODUCER,
    BANNER,
    CLASS_HISTOGRAM,
    DEADLOCK_COUNT,
    DEADLOCK_START,
    END_OF_DUMP,
    GREP_NOTE,
    GREP_SEPARATOR,
    HELD_ENTRY,
    IN_DUMP,
    IN_LOCK_CHAINS,
    IN_REPORT,
    MAX_UNPARSED_KEPT,
    MIXED_NATIVE_FRAME,
    MIXED_NOTE,
    MIXED_SEPARATOR,
    OUTSIDE,
    REPORT_STACKS,
    SIGNALS,
    SMR_LINES,
    STATE_LINE,
    SYNCHRONIZERS,
    TOOL_BANNER,
)
from kafkadiag.dumps.javaframes import parse_java_frame
from kafkadiag.dumps.rewrap import (
    fits,
    join_words,
    unbalanced,
)
from kafkadiag.model import (
    UnparsedLine,
)
from kafkadiag.threadheader import (
    looks_like_hotspot_header,
    lost_opening_quote,
)


class Sections(DeadlockReport):
    """Every line that is not a stack line: banners, footers, the log text around dumps (its
    signals), tool preambles, and the lines that end a fragment."""

    def _other(self, line: str, first: str, line_no: int) -> None:
        if self.mode == IN_REPORT:
            self._report_line(line, line_no)
            return
        if first == '"':
            self._quoted(line, line_no)
            return
        if not line:
            if self.thread is not None:
                self.thread.in_synchronizers = False
            return
        if self.mode == OUTSIDE:
            if self._thread_cpu_line(line, line_no):
                return
            self._maybe_signal(line, line_no)
            if first in ("\t", " "):
                self._indented_dump_start(line, line_no)
                return
        self._unindented(line, line_no)

    def _indented_dump_start(self, line: str, line_no: int) -> None:
        """A banner or thread header indented as a Markdown code block (a blog post, a README):
        the indent is learned as a prefix and the dump read as if it were flush left."""
        body = line.lstrip()
        if body.startswith(STATE_LINE):
            # An excerpt that starts at the state line: its thread's header was not copied.
            self._headerless_thread(body, line_no)
            self._indented(line, body, line_no)
            return
        if not (body.startswith(BANNER) or (body.startswith('"') and looks_like_hotspot_header(body))):
            return
        self.prefix.learn(line, len(line) - len(body))
        if self.prefix.active:
            self._other(body, body[:1], line_no)

    def _maybe_signal(self, line: str, line_no: int) -> None:
        """Keep log lines around the dumps that say what the threads cannot (see SIGNALS)."""
        if not any(marker in line for marker in SIGNALS):
            # A log line that hard wrapping cut in two: the marker spans the break.
            joined = self.previous_line.rstrip() + " " + line.lstrip("> \t").rstrip()
            if not any(marker in joined and marker not in self.previous_line for marker in SIGNALS):
                return
            line, line_no = joined, line_no - 1
        signal = UnparsedLine(line_no, line.strip())
        if self.dump is not None:
            if len(self.dump.signals) < MAX_UNPARSED_KEPT:
                self.dump.signals.append(signal)
        elif len(self.pending_signals) < MAX_UNPARSED_KEPT:
            self.pending_signals.append(signal)

    def _unindented(self, line: str, line_no: int) -> None:
        if self._banner(line, line_no):
            return
        if lost_opening_quote(line):
            self._quoted('"' + line, line_no)
            if self.dump is not None:
                self.dump.lost_quotes.append(line_no)
            return
        if self._learn_prefix_from_header(line, line_no):
            return
        if line.startswith("JNI global ref"):
            self._footer(line, line_no)
            return
        if line.rstrip() == END_OF_DUMP:
            self._footer(line, line_no, jni=False)
            return
        if self._report_start(line, line_no):
            return
        if line.startswith("Thread ") and self._agent_header(line, line_no):
            return
        if self.mode == IN_DUMP:
            self._unindented_in_dump(line, line_no)

    def _banner(self, line: str, line_no: int) -> bool:
        """A line that opens a dump (the JVM's, JRockit's, a tool's or the agent's banner) or ends
        JRockit's."""
        if BANNER in line:
            if not line.startswith(BANNER):
                self.prefix.learn(line, line.index(BANNER))
                self.previous_line = self.prefix.strip(self.previous_line)
                self.previous_previous_line = self.prefix.strip(self.previous_previous_line)
                line = line[line.index(BANNER) :]
            self._start_dump(line_no, banner=line.rstrip(":").strip())
            return True
        if line.startswith(jrockit.BANNER):
            self._start_dump(line_no, banner=line.strip("= \t"))
            assert self.dump is not None
            self.dump.jrockit = True
            return True
        if self.dump is not None and self.dump.jrockit and jrockit.ends_dump(line):
            self._footer(line, line_no, jni=False)
            return True
        tool_banner = TOOL_BANNER.match(line)
        if tool_banner:
            # Wrappers that announce the tool instead of printing the JVM's banner.
            self._start_dump(line_no, banner=line.rstrip(":").strip())
            assert self.dump is not None
            self.dump.producer = tool_banner["tool"]
            self.dump.pid = decimal(tool_banner["pid"])
            return True
        agent_banner = AGENT_BANNER.match(line)
        if agent_banner:
            self._start_dump(line_no, banner=line.strip())
            assert self.dump is not None
            self.dump.producer = AGENT_PRODUCER
            self.dump.pid = decimal(agent_banner["pid"])
            return True
        return False

    def _report_start(self, line: str, line_no: int) -> bool:
        """The first line of the JVM's deadlock report, or of its stacks given on their own."""
        if DEADLOCK_START in line and not line.startswith(DEADLOCK_START) and self.dump is None:
            # A report quoted or logged ("> Found one ...", "2024-... Found one ..."): as for a banner
            self.prefix.learn(line, line.index(DEADLOCK_START))
            line = line[line.index(DEADLOCK_START) :]
        if line.startswith(DEADLOCK_START):
            if self.dump is None:
                # The deadlock report pasted on its own, as most bug reports carry it: it is the
                # dump (its cycle, and the stacks it lists after "Java stack information").
                self._start_report_only_dump(line_no)
            self._begin_report()
            return True
        if line.startswith(REPORT_STACKS) and self.dump is None:
            # Only the stacks half of a deadlock report (SPARK-11104): the cycle is left to the
            # lock lines, as in any dump without the JVM's report.
            self._start_report_only_dump(line_no)
            return True
        return False

    def _agent_line(self, line: str) -> bool:
        """The serviceability agent's own lines: its preamble, and --mixed's thread separators
        and native frames."""
        if AGENT_PREAMBLE.match(line) or MIXED_SEPARATOR.match(line):
            return True
        if MIXED_NATIVE_FRAME.match(line):
            assert self.dump is not None
            if MIXED_NOTE not in self.dump.notes:
                self.dump.notes.append(MIXED_NOTE)
            return True
        return False

    def _unindented_in_dump(self, line: str, line_no: int) -> None:
        dump = self.dump
        assert dump is not None
        if self._thread_cpu_line(line, line_no):
            return
        if line.startswith(jrockit.LOCK_CHAINS):
            self._finish_thread()
            self.mode = IN_LOCK_CHAINS
            return
        if dump.jrockit and self._jrockit_braces(line, line_no):
            return
        thread = self.thread
        if (
            thread is None
            and not dump.threads
            and dump.banner
            and fits(dump.banner, line)
            and unbalanced(dump.banner)
        ):
            # "Full thread dump OpenJDK ... (17.0.15+6-Debian-1deb12u1" | "mixed mode, sharing):"
            dump.banner = join_words(dump.banner, line).rstrip(":").rstrip()
            dump.rejoined += 1
            return
        if self._stack_line_flush_left(thread, line, line_no):
            return
        self._other_line_in_dump(dump, thread, line, line_no)

    def _stack_line_flush_left(self, thread: ThreadBuilder | None, line: str, line_no: int) -> bool:
        """A line of a thread's block that lost its indent: a frame, state line or lock line."""
        if thread is not None and line.startswith("at "):
            thread.frames.append(parse_java_frame(line[3:]))  # a logger stripped the indent
            return True
        if line.startswith(STATE_LINE):
            # The state line lost its indent the same way (a README's code block indented less
            # than the header's): the thread's state, or a thread whose header is not in the text.
            self._indented(line, line, line_no)
            return True
        if thread is not None and line.startswith(SYNCHRONIZERS):
            self._synchronizers_start(thread)  # flush left in jhsdb jstack --locks
            return True
        held_entry = line == "- None" or line.startswith(HELD_ENTRY)
        if thread is not None and thread.in_synchronizers and held_entry:
            # The "Locked ownable synchronizers:" entries, flush left the same way (a static
            # site's page that dropped every tab of the dump); a bullet of prose is not one.
            self._synchronizer(thread, line, line, line_no)
            return True
        if thread is not None and line.startswith("- "):
            # Its lock lines lost the indent the same way (a PR body pasted flush left: the
            # Netflix/suro #233 producer-close dump): read as lock lines, not as the end of the
            # fragment. Any other "- " text is left to the fragment rule below.
            if self._parsed_lock_line(line, line)[0] is not None:
                self._lock_event(thread, line, line, line_no)
                return True
        return False

    def _other_line_in_dump(
        self, dump: DumpBuilder, thread: ThreadBuilder | None, line: str, line_no: int
    ) -> None:
        """A flush-left line inside a dump that is no part of a stack: annotations, separators,
        a wrapped line's rest, tool lines, or the first line after a fragment."""
        if is_annotation(line):
            # "..." where a reporter left threads out, "[t2]" where they numbered the next
            # excerpt: the excerpt goes on (KAFKA-1305, KAFKA-916), and it continues no wrapped line.
            return
        if line == GREP_SEPARATOR:
            # Between the groups of lines `grep -A/-B/-C` printed ("jstack PID | grep -A 20 kafka"):
            # one excerpt goes on, but every group was cut at a fixed number of lines.
            if GREP_NOTE not in dump.notes:
                dump.notes.append(GREP_NOTE)
            return
        if thread is not None and self._rejoin(thread, line, line_no):
            return
        if thread is None and line.startswith(SMR_LINES):
            return
        if DEADLOCK_COUNT.match(line):
            return
        if dump.producer == AGENT_PRODUCER and self._agent_line(line):
            return
        if dump.jrockit and thread is None and not dump.threads:
            # The date and the VM's line under JRockit's banner.
            if jrockit.VM_LINE.match(line):
                dump.banner = line.strip()
            elif dump.timestamp is None:
                dump.timestamp = line.strip()
            else:
                self._unparsed(line_no, line)
            return
        if CLASS_HISTOGRAM.match(line):
            # -XX:+PrintClassHistogram prints the heap's classes after the threads: the dump is
            # complete (a JDK 5 dump has no footer to say so), the histogram is not a dump's.
            dump.footer_seen = True
            self._end_dump_before(line_no)
            return
        if dump.report_only:
            if line.startswith(DEADLOCK_START):
                self._begin_report()  # the next cycle of a deadlock report given on its own
                return
            if line.strip("=") == "":
                return  # the report's underlines
        if dump.banner is None and (dump.threads or thread is not None):
            # A fragment without banner or footer (ThreadInfo text an application logged, a
            # pasted part of a dump): the first unrelated log line ends it.
            self._end_dump_before(line_no)
            return
        self._unparsed(line_no, line)
