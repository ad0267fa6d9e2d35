"""HotSpot thread dumps: jstack [-l], jcmd Thread.print [-l], kill -3 output, JDK 5 to 25.

The line state machine: `feed_batch` reads the lines of a thread's stack itself and hands every
other line to `_dispatch`, which sorts it to the layer that reads its kind (sections, report,
headers, stacklines, lifecycle: each a class this one derives from)."""

from __future__ import annotations

import gc
from collections.abc import Iterable, Iterator

from kafkadiag.dumps import jrockit, marks
from kafkadiag.dumps.excerpts import join_excerpts
from kafkadiag.dumps.hotspot.builders import ThreadBuilder, new_tuple
from kafkadiag.dumps.hotspot.locklines import NO_SYNCHRONIZER, SYNCHRONIZERS_HEADING
from kafkadiag.dumps.hotspot.sections import Sections
from kafkadiag.dumps.hotspot.syntax import (
    BANNER,
    IN_DUMP,
    IN_LOCK_CHAINS,
    IN_REPORT,
    MAX_STATE_TEXTS,
    STATE_LINE_INDENTED,
)
from kafkadiag.model import (
    DumpFormat,
    LockEvent,
    ThreadDump,
)
from kafkadiag.threadheader import (
    GROUP_FIELD,
    JMX_HEADER,
)


class HotspotParser(Sections):
    """Feed lines in order; collect finished dumps from `feed` and `finish`."""

    # Long on purpose: this loop runs once per line of every dump, and the branches inlined here
    # (frames, lock lines, state lines, the next header) would each cost a call per line if split.
    def feed_batch(self, lines: Iterable[str], first_line_no: int) -> int:
        """Consume a batch of lines numbered from `first_line_no`; return the next number.

        Frame lines are most of any dump, so while a thread is open (and no log prefix needs
        stripping) they, blank lines and state lines are handled right here; every other line
        goes through `_dispatch`.

        A frame or lock line seen before is recognised by one look-up of the whole line, before
        any test of its start: threads repeat their frames, and a `str.startswith` call costs
        several look-ups (its arguments are parsed at run time on Python 3.11 and earlier).
        """
        line_no = first_line_no - 1
        lookup = self.frame_cache.get
        lock_lines = self.lock_line_cache
        state_texts = self.state_text_cache
        thread = self._fast_path_thread()
        add_frame = thread.frames.append if thread is not None else None
        for line_no, line in enumerate(lines, first_line_no):
            if add_frame is not None:
                # Keyed by the whole line: no slice, no new string, no rehash per frame.
                frame = lookup(line)
                if frame is not None:
                    add_frame(frame)
                    continue
                assert thread is not None
                if not line:
                    thread.in_synchronizers = False
                    continue
                parsed = lock_lines.get(line)  # the line's hash is kept from the look-up above
                if parsed is not None:
                    kind = parsed[0]
                    if kind is not None and not thread.in_synchronizers:
                        frame_index = len(thread.frames) - 1
                        thread.events.append(
                            new_tuple(
                                LockEvent,
                                # unpacked by hand: `(*parsed, ...)` builds a list first
                                (
                                    kind,
                                    parsed[1],
                                    parsed[2],
                                    frame_index if frame_index > 0 else 0,
                                    line_no,
                                    parsed[3],
                                ),
                            )
                        )
                        continue
                    if parsed is SYNCHRONIZERS_HEADING:
                        # _synchronizers_start, inlined: one call per thread of a jstack -l dump
                        thread.in_synchronizers = True
                        thread.synchronizers = []
                        self.dump.has_lock_data = True  # type: ignore[union-attr]
                        continue
                    if parsed is NO_SYNCHRONIZER and thread.in_synchronizers:
                        continue
                # The first character sorts the rest: a test of a line's start costs more.
                first = line[0]
                if first == "\t":
                    if line.startswith("\tat "):
                        add_frame(self._new_frame(line))
                        continue
                    if line.startswith("\t- "):
                        if not thread.in_synchronizers:
                            self._lock_event(thread, line[1:], line, line_no)
                        elif line != "\t- None":
                            self._synchronizer(thread, line[1:], line, line_no)
                        continue
                elif first == " ":
                    # A state line: one of a few texts, repeated by every thread in that state.
                    state_text = state_texts.get(line)
                    if state_text is None and line.startswith(STATE_LINE_INDENTED):
                        if len(state_texts) >= MAX_STATE_TEXTS:
                            state_texts.clear()  # state lines that name a lock (JMX) can all differ
                        state_text = state_texts[line] = line[len(STATE_LINE_INDENTED) :]
                    if state_text is not None and not thread.frames:
                        thread.state_text = state_text
                        thread.state_line_no = line_no
                        thread.stack_line_no = line_no + 1
                        continue
                elif first == '"':
                    # The next thread of the same dump: a header with a thread pointer after the
                    # name, as every HotSpot prints, without detours. Any other quoted line (a
                    # ThreadInfo or JMX header, a deadlock report's `"name":`) takes _dispatch.
                    # The fields after the name, searched with `in`: a call with range arguments
                    # (find, rfind) costs more than the search. A ThreadInfo "Id=" or a
                    # JRockit/JMX "id=" among them takes _dispatch, as does a name that the last
                    # quote does not close (TeamCity's `"name" daemon group="main" prio=5`).
                    quoted_name, _, fields = line.rpartition('"')
                    if (
                        " tid=" in fields
                        and GROUP_FIELD not in quoted_name
                        and " Id=" not in fields
                        and (" id=" not in fields or not JMX_HEADER.match(line))
                    ):
                        self._finish_thread()
                        # Built and copied: the builder reads the next thread (no builder and no
                        # lists allocated per thread; add_frame still appends to its frames).
                        thread.reopen(quoted_name[1:], line_no, line)
                        self.thread = thread
                        continue
                self._dispatch(line, line_no)
            else:
                self._dispatch(line, line_no)
            thread = self._fast_path_thread()
            add_frame = thread.frames.append if thread is not None else None
        self.last_line_no = line_no
        return line_no + 1

    def _fast_path_thread(self) -> ThreadBuilder | None:
        if self.mode == IN_DUMP and not self.prefix.active and not self.open_name:
            return self.thread
        return None

    def _dispatch(self, line: str, line_no: int) -> None:
        if self.prefix.active:
            line = self.prefix.strip(line)
        if self.mode == IN_LOCK_CHAINS:
            if not line.startswith((jrockit.END, jrockit.BANNER)) and BANNER not in line:
                return  # they restate what the threads' lock lines tie together
            self.mode = IN_DUMP
        if line[:1] in marks.FIRST_CHARACTERS:
            line = marks.unmarked(line, self.prefix.strip)
        if self.name_only is not None and self._header_after_name(line, line_no):
            return
        if self.report_name is not None:
            self._report_stack_after_name(line, line_no)
        if self.open_name and self._name_continues(line, line_no):
            return
        if self.lone_dash is not None:
            line = self._after_lone_dash(line, line_no)
        first = line[:1]
        if self.mode == IN_DUMP and (first == "\t" or first == " "):
            body = line.lstrip()
            if body == "at" and self.thread is not None:
                body = "at "  # "\tat " whose trailing space a mail client dropped at a wrap
            if self.thread is not None and body.startswith("at "):
                key = "\t" + body  # the cache is keyed by the tab-indented frame line
                self.thread.frames.append(self.frame_cache.get(key) or self._new_frame(key))
                return
            self._indented(line, body, line_no)
        else:
            self._other(line, first, line_no)
        self.previous_previous_line = self.previous_line
        self.previous_line = line

    def finish(self) -> None:
        if self.mode == IN_REPORT:
            self._close_report_cycle()
        self._finish_dump(input_ended=True)


class CyclicGcPause:
    """The cyclic garbage collector paused while a dump is read, as the caller had it otherwise.

    Parsing allocates millions of tuples that never form cycles; with the collector running, each
    of its generational passes re-scans everything built so far (on a 150,000-thread dump, a
    pause per batch of lines left that at a seventh of the parse). Reference counting still frees
    everything. Each pause remembers the state it found, so a parse inside another parse, or a
    caller that turned the collector off itself, gets back exactly what it had.
    """

    def __init__(self) -> None:
        self._found: bool | None = None  # the state found by the pause in force, if any

    def pause(self) -> None:
        if self._found is None:
            self._found = gc.isenabled()
            gc.disable()

    def resume(self) -> None:
        if self._found is not None:
            if self._found:
                if gc.get_freeze_count() == 0:
                    # What the paused parse built is the dump: long-lived by nature. Moved to
                    # the oldest generation in one step (freeze, then unfreeze, splice lists),
                    # the first young collection after the pause does not walk every thread,
                    # frame tuple and lock event of it. A process that froze objects itself (a
                    # pre-fork server) keeps its freeze.
                    gc.freeze()
                    gc.unfreeze()
                gc.enable()
            self._found = None


def parse_hotspot(
    batches: Iterable[list[str]], source: str, dump_format: DumpFormat = DumpFormat.HOTSPOT
) -> Iterator[ThreadDump]:
    """Parse HotSpot thread dumps from batches of lines; yield each dump once complete.

    Excerpts of one dump pasted apart (fragments without a banner) come out joined as one.
    """
    return join_excerpts(_parse_hotspot(batches, source, dump_format))


def _parse_hotspot(
    batches: Iterable[list[str]], source: str, dump_format: DumpFormat
) -> Iterator[ThreadDump]:
    parser = HotspotParser(source, dump_format)
    next_line_no = 1
    collector = CyclicGcPause()
    collector.pause()
    try:
        for batch in batches:
            next_line_no = parser.feed_batch(batch, next_line_no)
            finished = parser.take_finished()
            if finished:
                collector.resume()
                yield from finished
                collector.pause()
        parser.finish()
    finally:
        collector.resume()
    yield from parser.take_finished()
