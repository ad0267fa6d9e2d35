"""Thread headers: quoted names (also cut or broken over lines), agent, JRockit and log-prefixed headers."""

from __future__ import annotations

from kafkadiag.dumps import jrockit
from kafkadiag.dumps.hotspot.builders import ThreadBuilder, thread_from_header
from kafkadiag.dumps.hotspot.stacklines import StackLines
from kafkadiag.dumps.hotspot.syntax import (
    HEADER_FIELDS,
    IN_DUMP,
    MAX_NAME_CHARS,
    MAX_NAME_LINES,
    NAME_ONLY,
    NOT_IN_A_NAME,
    OUTSIDE,
    STATE_LINE,
    WRAP_WIDTH_AT_LEAST,
    WRAPPED_NAME_CHARS,
)
from kafkadiag.dumps.rewrap import (
    header_unfinished,
    join_words,
)
from kafkadiag.dumps.threadcpu import header_cpu
from kafkadiag.threadheader import (
    AGENT,
    JROCKIT_BRACES,
    looks_like_hotspot_header,
)


def _cut_by_wrapping(part: str, after: str) -> bool:
    """Whether a name's line ends where hard wrapping cut it, not where the name breaks its line:
    the line is as long as a mail client's or tracker's, or the next word would not have fitted
    on it (fold -s breaks "consumer-thread | " before a long group id, and some clients then drop
    the space they broke at)."""
    kept = part.rstrip()
    if len(kept) >= WRAPPED_NAME_CHARS:
        return True
    next_word = after.strip().split(" ", 1)[0]
    return len(kept) + 1 + len(next_word) >= WRAP_WIDTH_AT_LEAST


def _unwrapped(parts: list[str]) -> str:
    """The parts of a name cut by hard wrapping, joined back: a cut at a space keeps one space,
    a cut inside a word (a tracker's fixed column) glues the word together. A short part was cut
    at a space even when the space was dropped: a fixed column cuts only full-width lines."""
    joined = parts[0]
    for before, part in zip(parts, parts[1:]):
        at_space = before[-1:].isspace() or len(before.rstrip()) < WRAPPED_NAME_CHARS
        joined = joined.rstrip() + " " + part.lstrip() if at_space else joined + part.lstrip()
    return joined


def _opens_name(line: str) -> bool:
    """Outside a dump, a line that opens a quoted name and does not close it: a long name cut by
    hard wrapping, or the first line of a name with a line break in it (a dump's first thread)."""
    return line.count('"') == 1


class ThreadHeaders(StackLines):
    """Lines that open a thread: quoted headers, names that hard wrapping or a line break cut,
    the serviceability agent's and WebLogic's headers, headers after a log prefix."""

    def _quoted(self, line: str, line_no: int) -> None:
        thread = self.thread
        if thread is not None and not thread.frames and header_unfinished(thread.header):
            # A header cut inside ("... owned by" | ""other" Id=12"): not the next thread.
            if self._rejoin(thread, line, line_no):
                return
        if line.endswith('":'):  # `"name":` opens a thread of a deadlock report, not a thread
            if self.dump is not None and self.dump.report_only:
                # ...unless the report is all there is: then its stacks are the threads.
                self._finish_thread()
                self.thread = ThreadBuilder(line[1:-2], line_no, line)
            elif self.dump is not None:
                self._unparsed(line_no, line)
            else:
                self.report_name = (line, line_no)
            return
        builder = thread_from_header(line, line_no)
        if builder is None:
            if NAME_ONLY.match(line):
                # A long name pushed the header's fields to the next line (hard wrapping)?
                self.name_only = (line, line_no)
                return
            if (
                len(line) < MAX_NAME_CHARS
                and '" ' not in line
                and (self.mode == IN_DUMP or _opens_name(line))
            ):
                # A name that goes on on the next line: the header is complete further down.
                # Outside a dump only the next line is waited for.
                self.open_name = [(line, line_no)]
                return
            if self.dump is not None:
                self._unparsed(line_no, line)
            return
        if self.mode != IN_DUMP or self.dump is None or self.dump.footer_seen:
            self._start_dump(line_no, banner=None)
        self._finish_thread()
        self.thread = builder
        if "cpuUsage=" in line:
            sampled = header_cpu(line, line_no)  # Arthas' `thread -n`: the busiest threads
            if sampled is not None:
                assert self.dump is not None
                self.dump.os_threads.append(sampled)

    def _header_after_name(self, line: str, line_no: int) -> bool:
        """The fields of a header whose quoted name ended the line before: one header."""
        assert self.name_only is not None
        name_line, name_line_no = self.name_only
        self.name_only = None
        if name_line_no == line_no - 1 and HEADER_FIELDS.match(line):
            self._quoted(join_words(name_line, line), name_line_no)
            if self.dump is not None:
                self.dump.rejoined += 1
            return True
        if name_line_no == line_no - 1 and self.mode == IN_DUMP and line.lstrip().startswith(STATE_LINE):
            # A header that is the name alone, its state line under it: Spring Boot's text thread
            # dump prints the Finalizer so. The state line is this thread's.
            self._finish_thread()
            name = name_line.strip()
            self.thread = ThreadBuilder(name[1:-1], name_line_no, name)
            return False
        if self.dump is not None:
            self._unparsed(name_line_no, name_line)
        return False

    def _report_stack_after_name(self, line: str, line_no: int) -> None:
        """A frame under a `"name":` line read outside any dump: the stacks of the JVM's deadlock
        report, pasted from their first thread on (without "Java stack information for the
        threads listed above:"). They are the dump, as when that heading is given."""
        assert self.report_name is not None
        name_line, name_line_no = self.report_name
        self.report_name = None
        if self.mode == OUTSIDE and name_line_no == line_no - 1 and line.lstrip().startswith("at "):
            self._start_report_only_dump(name_line_no)
            self.thread = ThreadBuilder(name_line[1:-2], name_line_no, name_line)

    def _name_continues(self, line: str, line_no: int) -> bool:
        """The next line of a thread name that holds line breaks (Thread.setName("a\nb") prints
        them as they are): the header is complete on the line that closes the name and carries
        the header's fields; any other line that could be a name's takes its place in it."""
        parts = [text for text, _ in self.open_name]
        wrapped = all(_cut_by_wrapping(part, after) for part, after in zip(parts, [*parts[1:], line]))
        candidate = _unwrapped([*parts, line]) if wrapped else "\n".join([*parts, line])
        # The name may close on an earlier line than the header's fields end (wrapped there too).
        if candidate.count('"') >= 2 and looks_like_hotspot_header(candidate):
            start = self.open_name[0][1]
            self.open_name = []
            self._quoted(candidate, start)
            if wrapped and self.dump is not None:
                self.dump.rejoined += len(parts)
            return True
        room = MAX_NAME_LINES if self.mode == IN_DUMP else 1
        if len(self.open_name) < room and not line.startswith(NOT_IN_A_NAME):
            self.open_name.append((line, line_no))
            return True
        pending, self.open_name = self.open_name, []
        if self.dump is not None:
            for text, number in pending:
                self._unparsed(number, text)
        return False

    def _learn_prefix_from_header(self, line: str, line_no: int) -> bool:
        """A thread header after a log prefix ("2024-.. INFO [x] "): learn it, then parse."""
        quote = line.find('"')
        if quote <= 0 or not (" prio=" in line or " tid=" in line or " nid=" in line):
            return False
        self.prefix.learn(line, quote)
        self._quoted(line[quote:], line_no)
        return True

    def _agent_header(self, line: str, line_no: int) -> bool:
        match = AGENT.match(line)
        if match is None:
            return False
        if self.mode != IN_DUMP or self.dump is None or self.dump.footer_seen:
            self._start_dump(line_no, banner=None)
        self._finish_thread()
        assert self.dump is not None
        self.dump.agent_threads = True
        builder = ThreadBuilder(f"Thread {match['nid']}", line_no, line)
        builder.state_text = match["state"]
        if builder.state_text == "IN_NATIVE":
            builder.state_text = "RUNNABLE"
        self.thread = builder
        return True

    def _jrockit_braces(self, line: str, line_no: int) -> bool:
        """WebLogic's `Thread-0x80 "name" <Waiting, priority=5> {` opens a thread, `}` ends it."""
        if line.startswith("Thread-"):
            header = JROCKIT_BRACES.match(line)
            if header is None:
                return False
            self._finish_thread()
            self.thread = ThreadBuilder(header["name"], line_no, line)
            return True
        if line.rstrip() == "}" and self.thread is not None and jrockit.in_braces(self.thread.header):
            self._finish_thread()
            return True
        return False
