"""The JVM's deadlock report ("Found one Java-level deadlock:" ... "Found N deadlock(s).")."""

from __future__ import annotations

import re

from kafkadiag.dumps.hotspot.headers import ThreadHeaders
from kafkadiag.dumps.hotspot.syntax import (
    BANNER,
    DEADLOCK_COUNT,
    DEADLOCK_START,
    HELD_BY,
    IN_DUMP,
    IN_REPORT,
    OUTSIDE,
    REPORT_LOCK_ID,
    REPORT_STACKS,
    REPORT_THREAD,
)
from kafkadiag.dumps.rewrap import (
    fits,
    join_words,
    unbalanced,
)
from kafkadiag.model import (
    DeadlockLink,
    QuotedLine,
)


class DeadlockReport(ThreadHeaders):
    """The JVM's deadlock report: its cycles, read into DeadlockLinks of the dump it follows."""

    # A report's line can be the banner of the next dump or a stack line of a report given on its
    # own: both are read by the layers above (sections.py, parser.py), which define these.
    def _dispatch(self, line: str, line_no: int) -> None:
        raise NotImplementedError

    def _unindented(self, line: str, line_no: int) -> None:
        raise NotImplementedError

    def _begin_report(self) -> None:
        self._finish_thread()
        self.mode = IN_REPORT
        self.report_links = []
        self.report_thread = None
        self.report_waiting = ""
        self.report_lines = []

    def _report_line(self, line: str, line_no: int) -> None:
        """Lines of "Found one Java-level deadlock:" up to "Found N deadlock(s)."."""
        stripped = line.strip()
        if self.dump is not None:
            self.dump.end_line_no = line_no
        if line.startswith('"') and not line.endswith('":'):
            # A real thread header: the report ended without its "Found N deadlocks." line.
            self._close_report_cycle()
            self.mode = IN_DUMP if self.dump is not None and not self.dump.footer_seen else OUTSIDE
            self._quoted(line, line_no)
            return
        repeated, self.report_repeated = self.report_repeated, None
        if repeated is not None and stripped.startswith("at "):
            # A thread the cycle already listed, named again, then a frame: its stack, pasted
            # without the "Java stack information for the threads listed above" heading
            # (KAFKA-2253). (Named again and then "waiting to lock" is another thread of the same
            # name in the cycle.)
            self._close_report_cycle()
            self.report_thread = None
            if self.dump is not None and self.dump.report_only:
                self.mode = IN_DUMP
                self._quoted(repeated[0], repeated[1])
                self._dispatch(line, line_no)
            return
        if self._cycle_line(stripped, line_no):
            return
        if stripped.startswith(DEADLOCK_START) or stripped.startswith(REPORT_STACKS):
            self._close_report_cycle()
            self.report_thread = None
            stacks_follow = stripped.startswith(REPORT_STACKS)
            if stacks_follow and self.dump is not None and self.dump.report_only:
                self.mode = IN_DUMP  # the stacks that follow are the only ones there are: read them
            return
        if DEADLOCK_COUNT.match(stripped) or BANNER in line:
            self._close_report_cycle()
            self.mode = OUTSIDE
            if BANNER in line:
                self._unindented(line, line_no)
            return
        # Stack lines of "Java stack information for the threads listed above" and the ===
        # underlines: understood, and already present in the threads themselves.

    def _cycle_line(self, stripped: str, line_no: int) -> bool:
        """A line of one cycle: `"name":`, what it waits to lock (maybe cut by hard wrapping),
        and "which is held by", which closes a DeadlockLink."""
        named = REPORT_THREAD.match(stripped)
        if named:
            if any(link.thread_name == named["name"] for link in self.report_links):
                self.report_repeated = (stripped, line_no)
            self.report_thread = named["name"]
            self.report_lines = [QuotedLine(line_no, stripped)]
            return True
        if stripped.startswith(("waiting to lock", "waiting for ownable", "waiting to re-lock")):
            self.report_waiting = stripped.rstrip(",")
            self.report_lines.append(QuotedLine(line_no, stripped))
            return True
        if (
            self.report_waiting
            and fits(self.report_waiting, stripped)
            and unbalanced(self.report_waiting)
            and not stripped.startswith("which")
        ):
            # "waiting to lock monitor 0x.. (object" | "0x.., a pkg.Class)," cut by hard wrapping
            self.report_waiting = join_words(self.report_waiting, stripped).rstrip(",")
            self.report_lines.append(QuotedLine(line_no, stripped))
            return True
        held = HELD_BY.search(stripped)
        if held and self.report_thread is not None:
            lock = REPORT_LOCK_ID.search(self.report_waiting)
            if lock is None:
                lock = re.search(r"(0x[0-9a-fA-F]+)", self.report_waiting)
            self.report_links.append(
                DeadlockLink(
                    thread_name=self.report_thread,
                    waiting_for=self.report_waiting,
                    lock_id=int(lock.group(1), 16) if lock else None,
                    held_by=held["name"],
                    lines=(*self.report_lines, QuotedLine(line_no, stripped)),
                )
            )
            self.report_lines = []
            return True
        return False

    def _close_report_cycle(self) -> None:
        # The report follows the footer of the dump it belongs to, which stays open until the
        # next dump starts.
        if self.report_links and self.dump is not None:
            self.dump.deadlocks.append(tuple(self.report_links))
        self.report_links = []
